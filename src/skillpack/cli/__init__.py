"""The `skillpack` command line: a thin adapter over the library API.

Commands translate options into core calls and core values into JSON or a table;
no command holds logic of its own.
"""

from __future__ import annotations


def main() -> None:
    """Console-script entry point."""
    from ._app import cli

    cli(prog_name="skillpack")
