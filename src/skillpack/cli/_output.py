"""Printing: stable JSON on stdout, rich tables for people, errors on stderr."""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from .._model import Problem


def emit_json(data: Any) -> None:
    """Write `data` as one JSON document (UTF-8, stable key order as given).

    Indented, with non-ASCII text as is, for a terminal. Otherwise compact and
    ASCII-escaped: that keeps `json` on its C encoder and makes the UTF-8 write a plain
    copy (a large share of a warm `list --json` run over thousands of skills).
    """
    tty = sys.stdout.isatty()
    text = json.dumps(data, ensure_ascii=not tty, indent=2 if tty else None, default=str)
    sys.stdout.write(text)
    sys.stdout.write("\n")


def emit_json_text(text: str) -> None:
    """Write one JSON document already encoded as `emit_json` encodes for a pipe."""
    sys.stdout.write(text)
    sys.stdout.write("\n")


def console(*, stderr: bool = False) -> Any:
    """A rich Console; imported lazily so `--json` runs never load rich."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def print_table(
    title: str | None,
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    stderr: bool = False,
) -> None:
    from rich.table import Table

    table = Table(title=title, show_lines=False, expand=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console(stderr=stderr).print(table)


def print_problems(problems: Sequence[Problem]) -> None:
    if not problems:
        return
    out = console()
    from rich.markup import escape

    for problem in problems:
        style = "red" if problem.severity == "error" else "yellow"
        where = problem.path + (f":{problem.line}" if problem.line else "")
        out.print(
            f"[{style}]{problem.severity}[/{style}] [bold]{problem.code}[/bold] "
            f"{escape(where)}\n    {escape(problem.message)}"
        )


def warn(message: str) -> None:
    """Print a warning on stderr: stdout (and `--json` output) stays as it is."""
    sys.stderr.write(f"skillpack: warning: {message}\n")


def fail(message: str, *, code: int = 1) -> None:
    """Print `message` on stderr and exit with `code`."""
    sys.stderr.write(f"skillpack: {message}\n")
    raise SystemExit(code)


def visible(text: str) -> str:
    """`text` with control and bidirectional-format characters written as escapes,
    so a skill's text cannot rewrite the terminal or reorder a line."""
    return "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cc", "Cf") else c for c in text
    )
