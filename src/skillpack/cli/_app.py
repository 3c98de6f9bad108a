"""The `skillpack` click group; each command's module is imported when it runs.

`COMMANDS` names every command's module and function: `skillpack list` imports only
what `list` needs, and a new command is one line here.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from .._version import __version__
from ._errors import handle_errors, wants_json

COMMANDS: dict[str, str] = {
    "list": "_catalog_cmds:list_command",
    "validate": "_catalog_cmds:validate_command",
    "show": "_catalog_cmds:show_command",
    "resolve": "_select_cmds:resolve_command",
    "render": "_select_cmds:render_command",
    "load": "_select_cmds:load_command",
    "enable": "_select_cmds:enable_command",
    "disable": "_select_cmds:disable_command",
    "search": "_select_cmds:search_command",
    "triggers": "_author_cmds:triggers_command",
    "eval": "_eval_cmds:eval_command",
    "deps": "_declare_cmds:deps_command",
    "new": "_declare_cmds:new_command",
    "serve": "_serve_cmds:serve_command",
    "context": "_serve_cmds:context_command",
    "install": "_install_cmds:install_command",
    "update": "_install_cmds:update_command",
    "remove": "_install_cmds:remove_command",
    "doctor": "_install_cmds:doctor_command",
    "publish": "_install_cmds:publish_command",
    "audit": "_install_cmds:audit_command",
    "ui": "_ui_cmds:ui_command",
    "mcp": "_mcp_cmds:mcp_command",
}
"""Command name -> `module:function` in this package."""


class _Group(click.Group):
    """Commands load on first use; errors map to exit codes in one place."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(f".{module_name}", __package__)
        command: click.Command = getattr(module, attribute)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Known before the command's own options are parsed, so that its usage
        # errors (a --cwd that does not exist) come out as JSON too.
        ctx.meta["skillpack.json"] = wants_json(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        with handle_errors(as_json=ctx.meta.get("skillpack.json", False)):
            return super().invoke(ctx)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillpack")
def cli() -> None:
    """skillpack: discover, validate, select and load Agent Skills (SKILL.md folders)."""
