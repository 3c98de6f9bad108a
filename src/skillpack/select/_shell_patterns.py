"""The command patterns of a `ShellPolicy`: which command texts a host allows, pure.

A pattern is matched against the whole command text as the skill wrote it (blanks
at both ends ignored). Three forms:

- a glob: `git status`, `git diff *`, `ls ?`. Text matches itself (a blank matches
  one or more blanks); `*` matches any run of characters and `?` one character,
  **except shell syntax**: `;` `&` `|` `<` `>` `(` `)` `$` a backtick, a line
  break and other control characters. So `git diff *` allows `git diff --stat`
  but never `git diff; rm -rf ~`, `git diff $(curl x)`, `git diff | sh`,
  `git diff > f` or a second line. `${SKILL_DIR}` and `${CLAUDE_SKILL_DIR}` are
  skillpack's own placeholders, not shell syntax: `*` may match them.
- a prefix, Claude Code style: `npm run test:*` is `npm run test` alone or followed
  by blanks and arguments (the same safe characters as `*`).
- `re:<regex>`: a Python regular expression that must match the whole command. It
  is trusted as written: shell syntax passes when the regex allows it.

Shell syntax written literally in a glob (`git log | head`) must appear in the
command exactly; whether such a command may run at all is the policy's `shell`
switch (`uses_shell_syntax`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._errors import UsageError

SKILL_DIR_PLACEHOLDERS: tuple[str, ...] = ("${SKILL_DIR}", "${CLAUDE_SKILL_DIR}")
"""Placeholders skillpack fills in a command itself (never the shell)."""

_SHELL_CHARS = r";&|<>()$`"
# One safe unit: a character that is not shell syntax nor a control character
# (tab allowed), or one of skillpack's own placeholders.
_SAFE = (
    rf"(?:[^{re.escape(_SHELL_CHARS)}\x00-\x08\x0a-\x1f\x7f]"
    r"|\$\{(?:CLAUDE_)?SKILL_DIR\})"
)
_SHELL_SYNTAX = re.compile(rf"[{re.escape(_SHELL_CHARS)}\x00-\x08\x0a-\x1f\x7f]")
_PLACEHOLDER = re.compile(r"\$\{(?:CLAUDE_)?SKILL_DIR\}")


@dataclass(frozen=True, slots=True)
class ShellPattern:
    """One compiled pattern; `matches(command)` says whether it allows the text."""

    text: str
    """The pattern as the host wrote it."""
    regex: re.Pattern[str]

    def matches(self, command: str) -> bool:
        return self.regex.fullmatch(command.strip()) is not None


def compile_pattern(pattern: str) -> ShellPattern:
    """Compile one pattern (see the module docstring).

    Raises:
        UsageError: the pattern is empty or its `re:` regex does not compile.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise UsageError(
            "A shell pattern must be a non-empty string such as 'git status' or 'git diff *'."
        )
    text = pattern.strip()
    if text.startswith("re:"):
        try:
            return ShellPattern(text=pattern, regex=re.compile(text[3:]))
        except re.error as error:
            raise UsageError(
                f"Shell pattern {pattern!r} is not a valid regular expression ({error}); "
                "fix the regex after 're:' or use a glob such as 'git diff *'."
            ) from error
    if text.endswith(":*"):
        regex = _glob(text[:-2].rstrip()) + rf"(?:[ \t]+{_SAFE}*)?"
    else:
        regex = _glob(text)
    return ShellPattern(text=pattern, regex=re.compile(regex))


def _glob(text: str) -> str:
    parts = []
    for char in text:
        if char == "*":
            parts.append(f"{_SAFE}*")
        elif char == "?":
            parts.append(_SAFE)
        elif char in " \t":
            if parts[-1:] != [r"[ \t]+"]:
                parts.append(r"[ \t]+")
        else:
            parts.append(re.escape(char))
    return "".join(parts)


def uses_shell_syntax(command: str) -> str | None:
    """The first shell-syntax character of `command` (placeholders aside), or None.

    A command without any can run as a plain argument list, with no shell.
    """
    match = _SHELL_SYNTAX.search(_PLACEHOLDER.sub("", command.strip()))
    return None if match is None else match.group()
