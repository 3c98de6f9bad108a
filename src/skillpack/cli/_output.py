"""Printing: stable JSON on stdout, rich tables for people, errors on stderr.

Skill names, descriptions, paths and messages are a stranger's text. Everything
printed for people goes through `safe_text` (`skillpack._text`, shared with the
picker), which shows control, bidi and invisible
format characters as visible escapes (a description holding `ESC[2J` would clear
the screen, U+202E would reverse what follows), and through rich as `Text`, never as
markup (`[link=…]` in a description stays text). JSON output is never escaped: it
is exact, and JSON's own escaping makes it safe to print.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, Final

from .._model import Problem
from .._text import safe_text as safe_text


def emit_text(text: str) -> None:
    """Write text meant for a model (a rendered catalog, an injection) to stdout:
    exact when piped, through `safe_text` (lines kept) when stdout is a terminal."""
    if sys.stdout.isatty():
        text = safe_text(text, multiline=True)
    sys.stdout.write(text)
    sys.stdout.write("\n")


def echo(text: str, *, multiline: bool = False) -> None:
    """Print a line for people on stdout, through `safe_text` (`multiline` keeps line
    breaks, for text made of several lines)."""
    sys.stdout.write(safe_text(text, multiline=multiline))
    sys.stdout.write("\n")


def emit_json(data: Any) -> None:
    """Write `data` as one JSON document (UTF-8, stable key order as given).

    Indented, with non-ASCII text as is, for a terminal (characters `safe_text`
    escapes are written as JSON `\\u` escapes there: the same document, shown
    safely). Otherwise compact and ASCII-escaped: that keeps `json` on its C encoder
    and makes the UTF-8 write a plain copy (a large share of a warm `list --json`
    run over thousands of skills).
    """
    tty = sys.stdout.isatty()
    text = json.dumps(data, ensure_ascii=not tty, indent=2 if tty else None, default=str)
    if tty:
        text = _NON_ASCII.sub(_json_escape_hidden, text)
    sys.stdout.write(text)
    sys.stdout.write("\n")


_NON_ASCII: Final = re.compile("[^\x00-\x7f]")


def _json_escape_hidden(match: re.Match[str]) -> str:
    ch = match.group()
    if safe_text(ch) == ch:
        return ch
    return json.dumps(ch)[1:-1]  # `\\u202e`, a surrogate pair past U+FFFF


def emit_json_text(text: str) -> None:
    """Write one JSON document already encoded as `emit_json` encodes for a pipe."""
    sys.stdout.write(text)
    sys.stdout.write("\n")


def emit_json_bytes(data: bytes) -> None:
    """`emit_json_text` of a document kept as UTF-8 bytes: copied to the byte stream
    under stdout when the text layer would write the same bytes (UTF-8, no newline
    translation), which spares decoding and encoding again megabytes of it."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if (
        buffer is None
        or os.name != "posix"
        or codecs.lookup(stream.encoding or "ascii").name != "utf-8"
    ):
        emit_json_text(data.decode())
        return
    stream.flush()
    buffer.write(data)
    buffer.write(b"\n")


def console(*, stderr: bool = False) -> Any:
    """A rich Console; imported lazily so `--json` runs never load rich."""
    from rich.console import Console

    # No emoji codes either: `:warning:` in a description stays text.
    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def markup_text(text: str) -> str:
    """Untrusted text to embed in a rich markup string: `safe_text`, markup escaped."""
    from rich.markup import escape

    return escape(safe_text(text))


def print_table(
    title: str | None,
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    stderr: bool = False,
) -> None:
    """A table for people; every cell is shown as text through `safe_text` (a cell may
    span lines)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, show_lines=False, expand=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(safe_text(cell, multiline=True)) for cell in row))
    console(stderr=stderr).print(table)


def print_problems(problems: Sequence[Problem]) -> None:
    if not problems:
        return
    out = console()
    for problem in problems:
        style = "red" if problem.severity == "error" else "yellow"
        where = problem.path + (f":{problem.line}" if problem.line else "")
        out.print(
            f"[{style}]{markup_text(problem.severity)}[/{style}] "
            f"[bold]{markup_text(problem.code)}[/bold] "
            f"{markup_text(where)}\n    {markup_text(problem.message)}"
        )
        for agent, note in sorted(problem.agents.items()):
            out.print(f"    {markup_text(agent)}: {markup_text(note)}")


def warn(message: str) -> None:
    """Print a warning on stderr: stdout (and `--json` output) stays as it is."""
    sys.stderr.write(f"skillpack: warning: {safe_text(message)}\n")


def fail(message: str, *, code: int = 1) -> None:
    """Print `message` on stderr and exit with `code`."""
    sys.stderr.write(f"skillpack: {safe_text(message)}\n")
    raise SystemExit(code)


visible = safe_text
"""The same escaper under the name other commands import."""
