"""The one place where exceptions become exit codes, stderr lines or JSON errors.

Exit codes: 0 success; 1 the skill or request is bad (validation errors, not found,
ambiguous, disabled, permission denied, I/O); 2 the command line itself is wrong.

With `--json`, a failing command prints `{"error": {"code", "message", ...}}` on
stdout instead of a line on stderr (`candidates` when there are some, repeated as
`suggestions` for `NOT_FOUND`, and the fields a `CommandFailed` carries). The code
is the exception's own (`SkillpackError.code`, the same in every surface); this
module only maps it to an exit status. The codes are stable:

    NOT_FOUND, AMBIGUOUS, DISABLED, PERMISSION_DENIED    as the model-facing tools
    INVALID_PARAM       the command line or an argument cannot work (exit 2)
    INVALID_SKILL       a skill file cannot be used (`validate` found errors)
    IO_ERROR            a file or folder could not be read or written
    EXECUTION_ERROR     a tool cannot run as asked
    DECIDED_ELSEWHERE   `enable`/`disable` wrote its file, but another file decides
    TRIGGERS_FAILED     `triggers`: a listed request picks another skill
    EVAL_FAILED         `eval --fail-under`: a skill's metric is below the bar
    REFUSED             `install`/`update`/`remove`: a skill was refused (the document lists why)
    APPROVAL_REQUIRED   `install`/`update`: the plan was not approved, nothing written
    DRIFT               `doctor`: installed skills differ from the lock file
    AUDIT_HIGH          `audit`: a high-severity finding
    CANCELLED           `ui --pick`: nothing was picked (exit 130, as fzf's)
    INTERNAL_ERROR      anything else
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import click

from .. import _errors as errors
from ._output import emit_json, safe_text

EXIT_CODES: Mapping[str, int] = {
    "INVALID_PARAM": 2,
    "NOT_FOUND": 1,
    "AMBIGUOUS": 1,
    "DISABLED": 1,
    "PERMISSION_DENIED": 1,
    "INVALID_SKILL": 1,
    "IO_ERROR": 1,
    "EXECUTION_ERROR": 1,
    "INTERNAL_ERROR": 1,
}
"""Error code (`_errors.ErrorCode`) -> exit status; a test checks every code is here."""


class CommandFailed(errors.SkillpackError):
    """A command ran but its outcome is a failure (e.g. another config file decides).

    `details` join the JSON error object, so scripts get the state as data.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        exit_code: int = 1,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        """A command's own outcome (`DECIDED_ELSEWHERE`, ...) beside the library's codes."""
        self.exit_code = exit_code
        self.details = dict(details or {})


def exit_code_for(exc: errors.SkillpackError) -> int:
    if isinstance(exc, CommandFailed):
        return exc.exit_code
    return EXIT_CODES.get(exc.code, 1)


def error_fields(code: str, message: str, **fields: Any) -> dict[str, Any]:
    """The object under `"error"`: for commands whose failing output holds more (e.g.
    `validate`'s results beside it)."""
    return {"code": code, "message": message, **fields}


def json_error(code: str, message: str, **fields: Any) -> None:
    """Print `{"error": {"code", "message", **fields}}` on stdout (as `emit_json` does:
    exact, and safe on a terminal; a message may quote a skill's text)."""
    emit_json({"error": error_fields(code, message, **fields)})


def wants_json(args: list[str]) -> bool:
    """Whether a command line asks for `--json` (before any `--`)."""
    end = args.index("--") if "--" in args else len(args)
    return "--json" in args[:end]


@contextmanager
def handle_errors(*, as_json: bool = False) -> Iterator[None]:
    """Turn skillpack and command-line errors into output and an exit code.

    Without `as_json`: `skillpack: <message>` (and any candidates) on stderr, and
    click's own usage errors are left to click. With it: one JSON error on stdout.
    """
    try:
        yield
    except errors.SkillpackError as exc:
        candidates = exc.candidates
        if as_json:
            fields: dict[str, Any] = {}
            if candidates:
                fields["candidates"] = list(candidates)
                if exc.code == "NOT_FOUND":
                    fields["suggestions"] = list(candidates)  # the older name, kept
            if exc.hint:
                fields["hint"] = exc.hint
            if isinstance(exc, CommandFailed):
                fields.update(exc.details)
            json_error(exc.code, str(exc), **fields)
        else:
            sys.stderr.write(f"skillpack: {safe_text(str(exc))}\n")
            for candidate in candidates:
                sys.stderr.write(f"  {safe_text(str(candidate))}\n")
            if exc.hint:
                sys.stderr.write(f"{safe_text(exc.hint, multiline=True)}\n")
        raise SystemExit(exit_code_for(exc)) from None
    except click.ClickException as exc:
        if not as_json:
            raise
        json_error("INVALID_PARAM", exc.format_message())
        raise SystemExit(exc.exit_code) from None
