"""The one place where exceptions become exit codes and stderr lines.

Exit codes: 0 success; 1 the skill or request is bad (validation errors, not found,
ambiguous, disabled, permission denied, I/O); 2 the command line itself is wrong.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from .. import _errors as errors

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


def exit_code_for(exc: errors.SkillpackError) -> int:
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return 1


@contextmanager
def handle_errors() -> Iterator[None]:
    """Turn skillpack errors into `skillpack: <message>` on stderr and an exit code."""
    try:
        yield
    except errors.SkillpackError as exc:
        sys.stderr.write(f"skillpack: {exc}\n")
        candidates = getattr(exc, "candidates", ()) or getattr(exc, "suggestions", ())
        for candidate in candidates:
            sys.stderr.write(f"  {candidate}\n")
        raise SystemExit(exit_code_for(exc)) from None
