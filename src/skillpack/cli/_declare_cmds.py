"""`skillpack deps` and `skillpack new`, and what `show` says about declarations.

`deps` lists a skill's Codex dependencies (environment variables, MCP servers, other
tools) with their state here, and its permission profile; it asks nothing. `new`
writes a template skill that passes strict validation, into the user's (or the
project's) `.agents/skills`, and opens nothing interactive.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from .._model import CodexPermissions, Skill
from ._options import CatalogOptions, catalog_options
from ._output import echo, emit_json, print_table

if TYPE_CHECKING:
    from ..runtime._create import CreateScope

TEMPLATE_BODY = """\
# {title}

## When to use

Describe the situations this skill is for, and the ones it is not for.

## Steps

1. The first thing to do.
2. The next thing to do.

## Notes

Keep this file short: put long references in `references/` and scripts in `scripts/`.
"""


def declared(skill: Skill, body: str, servers: Sequence[str] = ()) -> dict[str, Any]:
    """What `skill` declares beyond its instructions, for `show`: its dependency report
    (state from this process's environment and the configured MCP `servers`), hooks,
    and embedded shell commands."""
    from ..parse._hooks import parse_hooks
    from ..runtime._deps import check_dependencies
    from ..select._commands import find_shell_commands

    report = check_dependencies(
        skill, cached=lambda name: False, environment=os.environ, config_servers=servers
    )
    hooks, hook_problems = parse_hooks(skill.hooks)
    return {
        "dependencies": report.to_dict(),
        "hooks": [h.to_dict() for h in hooks],
        "hook_problems": list(hook_problems),
        "shell_commands": [c.to_dict() for c in find_shell_commands(body)],
    }


def declared_rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Table rows for `show` from `declared(...)`; nothing for what is not declared."""
    rows = []
    deps = data["dependencies"]
    items = [
        f"{d['type']} {d['name']} ({d['state']})" for d in (*deps["env_vars"], *deps["mcp_servers"])
    ]
    items += [f"{d.get('type')} {d.get('value')} (not checked)" for d in deps["other"]]
    if items:
        rows.append(("dependencies", "\n".join(items)))
    if deps["permissions"] is not None:
        profile = CodexPermissions.from_dict(deps["permissions"])
        rows.append(("permissions", permissions_text(profile)))
    if data["hooks"]:
        rows.append(("hooks", "\n".join(_hook_text(h) for h in data["hooks"])))
    commands = data["shell_commands"]
    if commands:
        lines = [f"line {c['line']}: {c['command']}" for c in commands]
        rows.append(("shell commands", "\n".join(["(run only under a host shell policy)", *lines])))
    return rows


def permissions_text(permissions: CodexPermissions) -> str:
    """A Codex permission profile in one line per part (offered, never applied)."""
    lines = []
    if permissions.network is not None:
        lines.append(f"network: {'on' if permissions.network else 'off'}")
    if permissions.allowed_domains:
        lines.append("allowed domains: " + ", ".join(permissions.allowed_domains))
    if permissions.denied_domains:
        lines.append("denied domains: " + ", ".join(permissions.denied_domains))
    if permissions.read:
        lines.append("reads: " + ", ".join(permissions.read))
    if permissions.write:
        lines.append("writes: " + ", ".join(permissions.write))
    lines.extend(f"{key}: {value}" for key, value in permissions.other.items())
    return "\n".join(lines) or "(empty)"


def _hook_text(hook: dict[str, Any]) -> str:
    matcher = f"[{hook['matcher']}]" if hook["matcher"] else ""
    what = hook["command"] if hook["type"] == "command" else f"({hook['type']} hook)"
    once = " (once)" if hook["once"] else ""
    return f"{hook['event']}{matcher}: {what}{once}"


@click.command("deps")
@click.argument("ref")
@catalog_options
def deps_command(ref: str, catalog: CatalogOptions, as_json: bool) -> None:
    """Show every dependency a skill declares (Codex agents/openai.yaml) and its state.

    Environment variables are looked up in this process's environment; MCP servers
    count as present when skillpack's config lists them (`[[mcp_servers]]`). Nothing is
    asked or run.
    """
    from ..runtime._workspace import lookup_skill

    session = catalog.session()
    skill = lookup_skill(session.catalog, ref)
    report = session.declared.dependencies(skill)
    if as_json:
        emit_json(report.to_dict())
        return
    rows: list[tuple[str, ...]] = [
        (d.name, "env var", d.state, d.source or "-", d.description or "") for d in report.env_vars
    ]
    for server in report.mcp_servers:
        note = server.description or (server.url or server.command or "")
        rows.append((server.name, "mcp", server.state, server.source or "-", note))
    for entry in report.other:
        rows.append(
            (
                str(entry.get("value")),
                str(entry.get("type")),
                "not checked",
                "-",
                str(entry.get("description") or ""),
            )
        )
    if rows:
        print_table(
            f"{skill.qualified_name} dependencies",
            ("name", "type", "state", "found in", "description"),
            rows,
        )
    else:
        echo(f"{skill.qualified_name} declares no dependencies.")
    for server in report.mcp_servers:
        if server.state == "missing":
            echo(server.hint(), multiline=True)
    for problem in report.invalid:
        echo(f"ignored: {problem}")
    if report.permissions is not None:
        echo("permissions requested (the host decides; never applied by skillpack):")
        echo(permissions_text(report.permissions), multiline=True)


@click.command("new")
@click.argument("name")
@click.option(
    "--project", is_flag=True, help="Write into the project's .agents/skills, not the user's."
)
@click.option(
    "--description",
    default=None,
    help="What the skill does and when to use it (default: a placeholder to edit).",
)
@catalog_options
def new_command(
    name: str, project: bool, description: str | None, catalog: CatalogOptions, as_json: bool
) -> None:
    """Create a skill folder with a template SKILL.md that passes strict validation."""
    from .._errors import UsageError
    from ..runtime._create import create_skill, skill_folder

    workspace = catalog.workspace()
    scope: CreateScope = "project" if project else "user"
    target = skill_folder(name, scope, cwd=workspace.cwd) / "SKILL.md"
    if target.exists():
        raise UsageError(f"A skill already exists at {target}; edit it, or choose another name.")
    title = name.replace("-", " ").capitalize()
    created = create_skill(
        name=name,
        description=description
        or f"{title}: say what this skill does and when to use it. Edit this description.",
        body=TEMPLATE_BODY.format(title=title),
        scope=scope,
        cwd=workspace.cwd,
        catalog=workspace.catalog,
    )
    found = catalog.workspace().catalog.at_path(created.path) is not None
    created = dataclasses.replace(created, in_catalog=found)
    if as_json:
        emit_json(created.to_dict())
        return
    echo(f"created {created.path}")
    echo(
        "Edit its description and steps, then check it: skillpack validate --strict "
        f"{os.path.dirname(created.path)}"
    )
