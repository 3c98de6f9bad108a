"""Exceptions raised by skillpack.

Split by who is at fault, so a surface can map each to one exit code or error code::

    SkillpackError                 base of everything skillpack raises
    ├── SkillError                 the skill author: a file that cannot be used
    │   └── SkillParseError        no frontmatter, bad YAML, missing description, ...
    ├── UsageError                 the developer or user calling the API/CLI wrongly
    │   ├── SkillNotFoundError     no skill by that name or path
    │   ├── AmbiguousSkillError    a bare name matched several skills of equal precedence
    │   └── SkillDisabledError     the skill exists but is disabled or not invocable
    ├── SkillPermissionError       a permission rule or a path check refused the access
    └── SkillIOError               the runtime: a file or directory could not be read/written

Messages name the thing, where it is, and how to fix it. The message (`str(exc)`) may
reach a model, so it never tells the reader to run a command; `hint`, when set, is the
extra line for a person at a terminal (a `skillpack` command, say), which the CLI
prints and model-facing surfaces leave out.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._model import Problem


class SkillpackError(Exception):
    """Base class of every exception skillpack raises."""

    def __init__(self, *args: object, hint: str | None = None) -> None:
        super().__init__(*args)
        self.hint: str | None = hint
        """A line for people (e.g. the command that fixes it), never shown to a model."""


class SkillError(SkillpackError):
    """A skill file cannot be used; `problems` says why."""

    def __init__(
        self, message: str, *, problems: Sequence[Problem] = (), hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.problems: tuple[Problem, ...] = tuple(problems)


class SkillParseError(SkillError):
    """The SKILL.md could not be parsed into a skill."""


class UsageError(SkillpackError):
    """The API or CLI was called with arguments that cannot work."""


class SkillNotFoundError(UsageError):
    """No skill matches the given name or path."""

    def __init__(
        self, message: str, *, suggestions: Sequence[str] = (), hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.suggestions: tuple[str, ...] = tuple(suggestions)


class AmbiguousSkillError(UsageError):
    """A bare name matched several skills of equal precedence."""

    def __init__(
        self, message: str, *, candidates: Sequence[str] = (), hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.candidates: tuple[str, ...] = tuple(candidates)


class SkillDisabledError(UsageError):
    """The skill exists but is disabled, or may not be invoked this way."""


class SkillPermissionError(SkillpackError):
    """A permission rule or a path-confinement check refused the access."""


class SkillIOError(SkillpackError):
    """A file or directory could not be read or written."""
