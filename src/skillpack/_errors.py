"""Exceptions raised by skillpack.

Split by who is at fault. Each class carries its stable `code` (an `ErrorCode`); a
surface only maps that code to an exit status, a JSON-RPC number or an MCP error::

    class                          code               who is at fault
    SkillpackError                 INTERNAL_ERROR     base of everything skillpack raises
    ├── SkillError                 INVALID_SKILL      the skill author: a file that cannot be used
    │   └── SkillParseError        INVALID_SKILL      no frontmatter, bad YAML, ...
    ├── UsageError                 INVALID_PARAM      the caller of the API or the CLI
    │   ├── SkillNotFoundError     NOT_FOUND          no skill by that name or path
    │   ├── AmbiguousSkillError    AMBIGUOUS          several skills of equal precedence
    │   └── SkillDisabledError     DISABLED           disabled, or not invocable this way
    ├── SkillPermissionError       PERMISSION_DENIED  a permission rule or a path check
    └── SkillIOError               IO_ERROR           a file could not be read or written

`EXECUTION_ERROR` is a tool that cannot run as asked (a forked skill without a
runner: `runtime._tools.ToolCallError`). `candidates` holds the ids a person or a
model could use instead: close names of a missing one, the ties of an ambiguous one.

Messages name the thing, where it is, and how to fix it. The message (`str(exc)`) may
reach a model, so it never tells the reader to run a command; `hint`, when set, is the
extra line for a person at a terminal (a `skillpack` command, say), which the CLI
prints and model-facing surfaces leave out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from ._model import Problem

ErrorCode = Literal[
    "INVALID_PARAM",
    "NOT_FOUND",
    "AMBIGUOUS",
    "DISABLED",
    "PERMISSION_DENIED",
    "INVALID_SKILL",
    "IO_ERROR",
    "EXECUTION_ERROR",
    "INTERNAL_ERROR",
]
"""The stable code of every skillpack error: tool envelopes, `--json` errors, the app
server's and the MCP server's error `data` all carry it."""

ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)


class SkillpackError(Exception):
    """Base class of every exception skillpack raises."""

    code: str = "INTERNAL_ERROR"
    """The stable code of this kind of error: an `ErrorCode` (the CLI's own outcomes,
    `DECIDED_ELSEWHERE` say, add theirs on `cli._errors.CommandFailed`)."""

    def __init__(
        self, *args: object, hint: str | None = None, candidates: Sequence[str] = ()
    ) -> None:
        super().__init__(*args)
        self.hint: str | None = hint
        """A line for people (e.g. the command that fixes it), never shown to a model."""
        self.candidates: tuple[str, ...] = tuple(candidates)
        """Ids to use instead: close names of a missing skill, the ties of an ambiguous
        name; empty for most errors."""


class SkillError(SkillpackError):
    """A skill file cannot be used; `problems` says why."""

    code = "INVALID_SKILL"

    def __init__(
        self, message: str, *, problems: Sequence[Problem] = (), hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.problems: tuple[Problem, ...] = tuple(problems)


class SkillParseError(SkillError):
    """The SKILL.md could not be parsed into a skill."""


class UsageError(SkillpackError):
    """The API or CLI was called with arguments that cannot work."""

    code = "INVALID_PARAM"


class SkillNotFoundError(UsageError):
    """No skill matches the given name or path; `candidates` holds close ids."""

    code = "NOT_FOUND"


class AmbiguousSkillError(UsageError):
    """A bare name matched several skills of equal precedence; `candidates` holds them."""

    code = "AMBIGUOUS"


class SkillDisabledError(UsageError):
    """The skill exists but is disabled, or may not be invoked this way."""

    code = "DISABLED"


class SkillPermissionError(SkillpackError):
    """A permission rule or a path-confinement check refused the access."""

    code = "PERMISSION_DENIED"


class SkillIOError(SkillpackError):
    """A file or directory could not be read or written."""

    code = "IO_ERROR"
