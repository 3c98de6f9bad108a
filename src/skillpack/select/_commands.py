"""Finding the shell commands a skill body embeds (Claude Code's preprocessing), pure.

Two forms, both from the skill's own text (arguments are substituted later, so an
argument can never add a command):

- inline: `` !`command` `` — a `!` directly before an inline code span of one
  backtick. The `!` must start the text or follow a character that is not a letter,
  digit, `_`, `\\`, `!` or backtick (`Wow!`x``, `\\!`x`` are text). The command is
  one line: a span that crosses a line break is text.
- fenced: a code fence of backticks whose info string is exactly `!`; the lines
  inside are the command. An unclosed ```` ```! ```` fence is text.

Neither form counts inside code: a `` !`x` `` inside a fenced block or an inline code
span is documentation, as is a ```` ```! ```` fence nested in a longer fence. Code is
found by the same rules as mentions (`_mentions.code_regions`). Claude Code scans the
raw text and runs commands inside code too; skillpack does not, on purpose.

Nothing here runs anything: `runtime._shell` decides and runs, `render` splices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._mentions import _fenced_blocks, code_regions

CommandForm = Literal["inline", "block"]
"""`inline`: `` !`cmd` ``; `block`: a ```` ```! ```` fenced block."""

_NOT_BEFORE_BANG = frozenset("_\\!`")


@dataclass(frozen=True, kw_only=True, slots=True)
class ShellCommand:
    """One command embedded in a skill body, and the text it replaces."""

    command: str
    """The command as written (a block's lines joined, common indentation removed)."""
    form: CommandForm
    start: int
    """Offset in the body where the replaced text starts (the `!` or the fence)."""
    end: int
    """Offset where the replaced text ends (exclusive; a block's last newline stays)."""
    line: int
    """1-based line of `start` in the body."""

    def to_dict(self) -> dict[str, object]:
        return {"command": self.command, "form": self.form, "line": self.line}


def find_shell_commands(body: str) -> tuple[ShellCommand, ...]:
    """Every embedded command outside code, in text order (see the module docstring)."""
    if "!`" not in body and "```!" not in body:
        return ()
    found = [*_blocks(body), *_inline(body)]
    found.sort(key=lambda c: c.start)
    return tuple(found)


def _inline(body: str) -> list[ShellCommand]:
    if "!`" not in body:
        return []
    found = []
    for start, end in code_regions(body):
        # A region that starts with one backtick (not a fence line, not ``x``),
        # right after a `!` that is itself outside code (regions are disjoint).
        if body[start] != "`" or body[start + 1 : start + 2] == "`" or start == 0:
            continue
        if body[start - 1] != "!" or body[end - 1] != "`":
            continue
        bang = start - 1
        before = body[bang - 1] if bang > 0 else " "
        if before.isalnum() or before in _NOT_BEFORE_BANG:
            continue
        command = body[start + 1 : end - 1]
        if "\n" in command or "\r" in command or not command.strip():
            continue
        found.append(
            ShellCommand(
                command=command.strip(),
                form="inline",
                start=bang,
                end=end,
                line=body.count("\n", 0, bang) + 1,
            )
        )
    return found


def _blocks(body: str) -> list[ShellCommand]:
    if "```!" not in body:
        return []
    found = []
    for block_start, block_end in _fenced_blocks(body):
        opener_end = body.find("\n", block_start)
        if opener_end == -1 or opener_end >= block_end:
            continue
        opener = body[block_start:opener_end].strip(" \t\r")
        ticks = len(opener) - len(opener.lstrip("`"))
        if ticks < 3 or opener[ticks:].strip() != "!":
            continue
        closer_start = body.rfind("\n", 0, block_end) + 1
        closer = body[closer_start:block_end].strip(" \t\r")
        if closer_start <= opener_end or closer.strip("`") or len(closer) < ticks:
            continue  # unclosed: runs to the end of the text, so it is not a command
        lines = body[opener_end + 1 : closer_start].splitlines()
        command = "\n".join(_dedent(lines)).strip("\n")
        if not command.strip():
            continue
        fence = body.find("`", block_start)
        found.append(
            ShellCommand(
                command=command,
                form="block",
                start=fence,
                end=block_end,
                line=body.count("\n", 0, fence) + 1,
            )
        )
    return found


def _dedent(lines: list[str]) -> list[str]:
    """Lines without their common leading blanks (a fence inside a list item)."""
    lines = [line.rstrip(" \t\r") for line in lines]
    indents = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]
