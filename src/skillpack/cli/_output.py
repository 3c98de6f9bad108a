"""Printing: stable JSON on stdout, rich tables for people, errors on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from .._model import Problem


def emit_json(data: Any) -> None:
    """Write `data` as one JSON document (UTF-8, stable key order as given).

    Indented for a terminal; compact otherwise, which lets `json` use its C encoder
    (a large share of a warm `list --json` run when indented).
    """
    indent = 2 if sys.stdout.isatty() else None
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=indent, default=str))
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


def fail(message: str, *, code: int = 1) -> None:
    """Print `message` on stderr and exit with `code`."""
    sys.stderr.write(f"skillpack: {message}\n")
    raise SystemExit(code)
