"""`skillpack resolve`, `render`, `load`, `enable`, `disable` and `search`."""

from __future__ import annotations

from typing import Any, Literal

import click

from .._model import SCOPES
from ._options import CatalogOptions, catalog_options
from ._output import console, echo, emit_json, emit_text, markup_text, print_table, warn

_builtin_option = click.option(
    "--builtin",
    "builtins",
    metavar="NAME",
    multiple=True,
    help="A slash command the host owns (e.g. help); repeatable. /NAME then stays the "
    "host's and a skill of that name is reached as $NAME. Default: none.",
)


@click.command("resolve")
@click.argument("text")
@_builtin_option
@catalog_options
def resolve_command(
    text: str,
    builtins: tuple[str, ...],
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Show which skills TEXT activates ($name, [$name](path), /name args), and why not,
    and when it activates none, the skills a turn would suggest for it."""
    from ..runtime._session import resolution_suggestions

    session = catalog.session(builtin_commands=builtins)
    resolution = session.resolve(text)
    suggestions = resolution_suggestions(session, resolution)
    if as_json:
        emit_json({**resolution.to_dict(), "suggestions": [s.to_dict() for s in suggestions]})
        return
    out = console()
    for line in resolution.lines:
        out.print(f"[green]{markup_text(line)}[/green]")
    for diagnostic in resolution.diagnostics:
        out.print(f"[yellow]{diagnostic.kind}[/yellow] {markup_text(diagnostic.for_people)}")
    out.print(f"task: {markup_text(resolution.text)}")
    for suggestion in suggestions:
        out.print(f"[cyan]may fit[/cyan] {markup_text(suggestion.id)} ({suggestion.score:.2f})")


@click.command("render")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["xml", "markdown", "json"]),
    default="xml",
    show_default=True,
    help="Catalog format.",
)
@click.option(
    "--context-window",
    type=click.IntRange(min=1),
    default=None,
    help="Model context window in tokens (budget = 2%).",
)
@click.option(
    "--budget-chars",
    type=click.IntRange(min=0),
    default=None,
    help="Explicit budget in characters.",
)
@click.option(
    "--mode",
    type=click.Choice(["auto", "full", "deferred"]),
    default=None,
    help="auto: a stub pointing at skill_search when not even every name fits; full: "
    "never the stub (the lowest-ranked skills are left out instead); deferred: always "
    "the stub (default: [catalog] mode in the config, else auto).",
)
@click.option(
    "--no-skill-load",
    "no_skill_load",
    is_flag=True,
    help="The model has no skill_load tool: keep locations (relative to their common "
    "folder) instead of dropping them first when over budget.",
)
@click.option("--report", is_flag=True, help="Also print what the budget shortened or omitted.")
@catalog_options
def render_command(
    fmt: Literal["xml", "markdown", "json"],
    context_window: int | None,
    budget_chars: int | None,
    mode: Literal["auto", "full", "deferred"] | None,
    no_skill_load: bool,
    report: bool,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Render the model-facing skill catalog within the prompt budget."""
    if context_window is not None and budget_chars is not None:
        raise click.UsageError("Give --context-window or --budget-chars, not both.")
    session = catalog.session()
    rendered = session.render_catalog(
        format=fmt,
        context_window=context_window,
        budget_chars=budget_chars,
        skill_load=not no_skill_load,
        mode=mode,
    )
    if as_json:
        emit_json({"format": fmt, "text": rendered.text, "report": rendered.report.to_dict()})
        return
    emit_text(rendered.text)
    if report:
        data = rendered.report.to_dict()
        rows = [(key, _cell(value)) for key, value in data.items()]
        print_table("catalog budget report", ("field", "value"), rows, stderr=True)


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


@click.command("load")
@click.argument("ref")
@click.option("--args", "args", default="", help="Arguments, as typed after /name.")
@click.option(
    "--allow-shell",
    "allow_shell",
    multiple=True,
    metavar="PATTERN",
    help="Run the skill's embedded !`commands` that match PATTERN (e.g. 'git status', "
    "'git diff *'); repeatable. Without it no command runs.",
)
@click.option(
    "--shell",
    "use_shell",
    is_flag=True,
    help="Let allowed commands that use shell syntax (| ; $ ...) run through /bin/sh.",
)
@click.option(
    "--shell-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds each command may run.",
)
@catalog_options
def load_command(
    ref: str,
    args: str,
    allow_shell: tuple[str, ...],
    use_shell: bool,
    shell_timeout: float,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Print the injection for one skill (by name, qualified id or path)."""
    from ..runtime._workspace import looks_like_path

    if not ref.strip():
        raise click.BadParameter(
            "give a skill name, a qualified id (plugin:name) or the path of a SKILL.md; "
            "`skillpack list` shows them.",
            param_hint="REF",
        )
    policy = None
    if allow_shell:
        from ..runtime._shell import ShellPolicy

        policy = ShellPolicy(allow=allow_shell, shell=use_shell, timeout=shell_timeout)
    elif use_shell:
        raise click.UsageError("--shell needs at least one --allow-shell PATTERN.")
    session = catalog.session(shell=policy)
    if looks_like_path(ref):
        skill = session.find(path=ref, invoker="user")
    else:
        skill = session.find(name=ref, invoker="user")
    injection = session.inject(skill, args=args)
    if as_json:
        emit_json(
            {
                "name": skill.name,
                "qualified_name": skill.qualified_name,
                "path": skill.path,
                "args": args,
                "content": injection.text,
                "commands": [run.to_dict() for run in injection.commands],
                "missing_dependencies": list(injection.missing_dependencies),
            }
        )
        return
    emit_text(injection.text)
    for run in injection.commands:
        if run.status != "ok":
            why = f" ({run.reason})" if run.reason else ""
            warn(f"line {run.line}: {run.status}: {run.command}{why}")
    if injection.missing_dependencies:
        names = ", ".join(f"{m['type']} {m['name']}" for m in injection.missing_dependencies)
        warn(f"missing dependencies: {names} (see `skillpack deps {skill.name}`)")


def _toggle(
    ref: str, enabled: bool, *, project: bool, catalog: CatalogOptions, as_json: bool
) -> None:
    """Write the entry, then report the state that results from every config file.

    The user file is written unless `--project` is given. When the other file still
    decides the other way (a project file disabling what the user enables), the
    command says which file decides and how to change it there, and exits 1
    (`DECIDED_ELSEWHERE`): the written entry stays, it is the user's own choice.
    """
    from ..runtime._workspace import write_enabled
    from ._errors import CommandFailed

    ws = catalog.workspace()
    toggled = write_enabled(
        ws.catalog,
        ref,
        enabled,
        scope="project" if project else "user",
        cwd=ws.cwd,
        user=not catalog.no_user,
    )
    skill, path, target = toggled.skill, toggled.written, toggled.entry
    result, decided_by = toggled.enabled, toggled.decided_by
    state = toggled.to_dict()
    if toggled.decided_elsewhere:
        verb = "enable" if enabled else "disable"
        where = decided_by or path
        flag = " --project" if decided_by is not None and decided_by != path and not project else ""
        raise CommandFailed(
            f"{skill.qualified_name} is still {'enabled' if result else 'disabled'}: "
            f"{where} decides (an entry in its [skills] lists names it), though {path} now "
            f"says {verb}d. Change it there: `skillpack {verb} {target}{flag}`, or edit "
            "that file.",
            code="DECIDED_ELSEWHERE",
            details=state,
        )
    if as_json:
        emit_json(state)
        return
    word = "enabled" if result else "disabled"
    echo(f"{word} {skill.qualified_name} ({skill.path}) in {path}")


_project_option = click.option(
    "--project",
    is_flag=True,
    help="Write the project's .skillpack/config.toml instead of the user config.",
)


@click.command("enable")
@click.argument("ref")
@_project_option
@catalog_options
def enable_command(ref: str, project: bool, catalog: CatalogOptions, as_json: bool) -> None:
    """Enable a skill (by name, qualified id or path) in the config file."""
    _toggle(ref, True, project=project, catalog=catalog, as_json=as_json)


@click.command("disable")
@click.argument("ref")
@_project_option
@catalog_options
def disable_command(ref: str, project: bool, catalog: CatalogOptions, as_json: bool) -> None:
    """Disable a skill (by name, qualified id or path) in the config file."""
    _toggle(ref, False, project=project, catalog=catalog, as_json=as_json)


@click.command("search")
@click.argument("query")
@click.option(
    "--limit",
    type=click.IntRange(1, 50),
    default=None,
    help="Most results (default: `[search] default_limit` in the config, else 8).",
)
@click.option(
    "--scope",
    type=click.Choice(list(SCOPES)),  # every scope the tool schema accepts, `mcp` too
    default=None,
    help="Only skills from this scope.",
)
@catalog_options
def search_command(
    query: str,
    limit: int | None,
    scope: str | None,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Search skills the model may use, ranked, with the reasons for each match.

    Each result is a strong or a weak match: weak results share some words with
    the query, too few to call the skill a fit; no strong result means no skill fits.
    """
    import sqlite3

    from ..runtime._tools import SkillTools, ToolCallError

    if not query.strip():
        raise click.BadParameter(
            'describe the task or give a skill name, e.g. "review a pull request".',
            param_hint="QUERY",
        )
    session = catalog.session()
    conn = sqlite3.connect(":memory:") if catalog.no_cache else None
    tools = SkillTools(session, search_connection=conn)
    # Through the tool's own call: its argument check and its code, as every surface.
    arguments = {"query": query, "limit": limit, "scope": scope}
    envelope = tools.call("skill_search", arguments)
    if not envelope["ok"]:
        error = envelope["error"]
        raise ToolCallError(error["code"], error["message"], candidates=error.get("candidates", ()))
    results = envelope["data"]["results"]
    if as_json:
        emit_json({"results": results})
        return
    if not results:
        echo("No skill matches that query well enough.")
        return
    print_table(
        f"{len(results)} results",
        ("score", "match", "skill", "reasons", "path"),
        [
            (
                f"{r['score']:.2f}",
                r["match"],
                r["qualified_name"],
                ", ".join(r["reasons"]),
                r["path"],
            )
            for r in results
        ],
    )
