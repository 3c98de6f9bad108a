"""Regenerate docs/cli.md from the commands' own --help (tests check it is current).

python docs/gen_cli_help.py          # rewrite docs/cli.md
python docs/gen_cli_help.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

from skillpack.cli._app import cli

CLI_MD = Path(__file__).resolve().parent / "cli.md"

HEADER = """# skillpack command line

Generated from `--help` by `python docs/gen_cli_help.py`; do not edit by hand.
Every command that reads skills takes `--json` with a stable shape (fields may be
added, never renamed or removed).
"""


def render() -> str:
    runner = CliRunner()
    parts = [HEADER]
    commands = [("skillpack", [])] + [
        (f"skillpack {name}", [name]) for name in cli.list_commands(click.Context(cli))
    ]
    for title, args in commands:
        result = runner.invoke(cli, [*args, "--help"], prog_name="skillpack", terminal_width=88)
        parts.append(f"\n## `{title}`\n\n```\n{result.output.rstrip()}\n```\n")
    return "".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        current = CLI_MD.read_text(encoding="utf-8") if CLI_MD.exists() else ""
        if current != text:
            print("docs/cli.md is stale: run python docs/gen_cli_help.py", file=sys.stderr)
            return 1
        return 0
    CLI_MD.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
