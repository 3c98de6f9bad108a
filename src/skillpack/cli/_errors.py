"""The one place where exceptions become exit codes, stderr lines or JSON errors.

Exit codes: 0 success; 1 the skill or request is bad (validation errors, not found,
ambiguous, disabled, permission denied, I/O); 2 the command line itself is wrong.

With `--json`, a failing command prints `{"error": {"code", "message", ...}}` on
stdout instead of a line on stderr (`candidates`/`suggestions` when there are
some, and the fields a `CommandFailed` carries). The codes are stable:

    NOT_FOUND, AMBIGUOUS, DISABLED, PERMISSION_DENIED    as the model-facing tools
    INVALID_PARAM       the command line or an argument cannot work (exit 2)
    INVALID_SKILL       a skill file cannot be used (`validate` found errors)
    IO_ERROR            a file or folder could not be read or written
    DECIDED_ELSEWHERE   `enable`/`disable` wrote its file, but another file decides
    TRIGGERS_FAILED     `triggers`: a listed request picks another skill
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

EXIT_CODES: dict[type[errors.SkillpackError], int] = {
    errors.SkillpackError: 1,
    errors.SkillError: 1,
    errors.SkillParseError: 1,
    errors.UsageError: 2,
    errors.SkillNotFoundError: 1,
    errors.AmbiguousSkillError: 1,
    errors.SkillDisabledError: 1,
    errors.SkillPermissionError: 1,
    errors.SkillIOError: 1,
}

ERROR_CODES: dict[type[errors.SkillpackError], str] = {
    errors.SkillpackError: "INTERNAL_ERROR",
    errors.SkillError: "INVALID_SKILL",
    errors.SkillParseError: "INVALID_SKILL",
    errors.UsageError: "INVALID_PARAM",
    errors.SkillNotFoundError: "NOT_FOUND",
    errors.AmbiguousSkillError: "AMBIGUOUS",
    errors.SkillDisabledError: "DISABLED",
    errors.SkillPermissionError: "PERMISSION_DENIED",
    errors.SkillIOError: "IO_ERROR",
}
"""The `--json` error code of each exception (the nearest class in its MRO wins)."""


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
        self.exit_code = exit_code
        self.details = dict(details or {})


def _lookup(table: Mapping[type[errors.SkillpackError], Any], exc: errors.SkillpackError) -> Any:
    for cls in type(exc).__mro__:
        if cls in table:
            return table[cls]
    return None


def exit_code_for(exc: errors.SkillpackError) -> int:
    if isinstance(exc, CommandFailed):
        return exc.exit_code
    code = _lookup(EXIT_CODES, exc)
    return 1 if code is None else int(code)


def error_code_for(exc: errors.SkillpackError) -> str:
    if isinstance(exc, CommandFailed):
        return exc.code
    return str(_lookup(ERROR_CODES, exc) or "INTERNAL_ERROR")


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
        candidates = getattr(exc, "candidates", ()) or ()
        suggestions = getattr(exc, "suggestions", ()) or ()
        if as_json:
            fields: dict[str, Any] = {}
            if candidates:
                fields["candidates"] = list(candidates)
            if suggestions:
                fields["suggestions"] = list(suggestions)
            if exc.hint:
                fields["hint"] = exc.hint
            if isinstance(exc, CommandFailed):
                fields.update(exc.details)
            json_error(error_code_for(exc), str(exc), **fields)
        else:
            sys.stderr.write(f"skillpack: {safe_text(str(exc))}\n")
            for candidate in candidates or suggestions:
                sys.stderr.write(f"  {safe_text(str(candidate))}\n")
            if exc.hint:
                sys.stderr.write(f"{safe_text(exc.hint, multiline=True)}\n")
        raise SystemExit(exit_code_for(exc)) from None
    except click.ClickException as exc:
        if not as_json:
            raise
        json_error("INVALID_PARAM", exc.format_message())
        raise SystemExit(exc.exit_code) from None
