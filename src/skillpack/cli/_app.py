"""The click command group and the options every catalog command shares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .. import __version__
from ._errors import handle_errors

F = TypeVar("F", bound=Callable[..., Any])


def catalog_options(func: F) -> F:
    """`--root/--cwd/--no-user/--no-system/--no-cache/--json`, shared by catalog commands."""
    options = [
        click.option(
            "--root",
            "roots",
            multiple=True,
            type=click.Path(file_okay=False, path_type=str),
            help="Extra skills root (scope 'extra'); repeatable.",
        ),
        click.option(
            "--cwd",
            type=click.Path(file_okay=False, path_type=str),
            default=None,
            help="Directory to discover repo skills from (default: current directory).",
        ),
        click.option("--no-user", is_flag=True, help="Skip the user skill roots."),
        click.option("--no-system", is_flag=True, help="Skip the skills bundled with skillpack."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the index file."),
        click.option("--json", "as_json", is_flag=True, help="Print JSON (stable shape)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        with handle_errors():
            return super().invoke(ctx)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillpack")
def cli() -> None:
    """skillpack: discover, validate, select and load Agent Skills (SKILL.md folders)."""


def _register() -> None:
    from . import _catalog_cmds, _select_cmds

    for command in (*_catalog_cmds.COMMANDS, *_select_cmds.COMMANDS):
        cli.add_command(command)


_register()
