"""`skillpack list`, `validate` and `show`: the catalog as people and tools see it."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

import click

from .._model import Problem, Root, Skill
from ..runtime._summary import skill_summary
from ._options import CatalogOptions, catalog_options
from ._output import emit_json, emit_json_bytes, emit_json_text, print_problems, print_table

_KEPT = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')
"""The bytes JSON writes as themselves in an ASCII-escaped string: printable ASCII but
the quote and the backslash (`encode_basestring_ascii` escapes every other one)."""


def _plain(text: str) -> bool:
    """Whether `text` is its own JSON string body (nothing in it to escape).

    Costs a copy and a table look-up per character, a few times less than escaping:
    the description and paths of every skill are most of a listing's text.
    """
    return text.isascii() and not text.encode("ascii").translate(None, _KEPT)


def skill_summaries_json(
    skills: Sequence[Skill],
    is_enabled: Callable[[Skill], bool] | None = None,
    missing: Callable[[Skill], Sequence[Mapping[str, str]]] | None = None,
    permission: Callable[[Skill], str] | None = None,
) -> str:
    """`json.dumps([skill_summary(s, enabled=is_enabled(s)) for s in skills])`, same bytes.

    Compact, ASCII-escaped JSON, written out per skill with the C string escaper:
    a `list --json` over thousands of skills spends more on building one dict per
    skill and walking it in the encoder than on discovery's own hot spots. A skill
    whose name, description and paths hold nothing to escape (`_plain`, checked on
    them joined) is quoted without the escaper. (`orjson` cannot write these bytes:
    it has neither `ensure_ascii` nor the `", "` and `": "` separators.)
    `is_enabled` None means every skill is enabled (no `disabled` entries); `missing`
    None means no skill lacks a dependency; `permission` None means every skill is
    allowed (no permission rules).
    """
    enc = encode_basestring_ascii
    scopes: dict[str, str] = {}
    parts = []
    for s in skills:
        scope = s.scope
        scope_json = scopes.get(scope)
        if scope_json is None:
            scope_json = scopes[scope] = enc(scope)
        plugin = s.plugin
        plugin_json = "null" if plugin is None else enc(plugin)
        name, description, path, folder = s.name, s.description, s.path, s.dir
        if _plain(name + description + path + folder):
            name_json, description_json = f'"{name}"', f'"{description}"'
            path_json, dir_json = f'"{path}"', f'"{folder}"'
        else:
            name_json, description_json = enc(name), enc(description)
            path_json, dir_json = enc(path), enc(folder)
        # `qualified_name` is `<plugin or scope>:<name>`, and JSON escapes character by
        # character: its JSON is the two quoted parts joined, with no third escape.
        qualified_json = (scope_json if plugin is None else plugin_json)[:-1] + ":" + name_json[1:]
        shadowed = s.shadowed_by
        enabled = True if is_enabled is None else is_enabled(s)
        lacking = missing(s) if missing is not None and s.declares_dependencies else ()
        missing_json = json.dumps([dict(m) for m in lacking]) if lacking else "[]"
        decision = '"allow"' if permission is None else enc(permission(s))
        parts.append(
            f'{{"name": {name_json}, "description": {description_json}, '
            f'"path": {path_json}, "dir": {dir_json}, "scope": {scope_json}, '
            f'"qualified_name": {qualified_json}, '
            f'"enabled": {"true" if enabled else "false"}, '
            f'"model_invocable": {"true" if s.model_invocable else "false"}, '
            f'"user_invocable": {"true" if s.user_invocable else "false"}, '
            f'"shadowed_by": {"null" if shadowed is None else enc(shadowed)}, '
            f'"plugin": {plugin_json}, '
            f'"missing_dependencies": {missing_json}, '
            f'"permission": {decision}}}'
        )
    return "[" + ", ".join(parts) + "]"


LIST_JSON = "list --json"
"""What `list --json` keeps in the index for an unchanged catalog (`runtime._kept`)."""


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@click.command("list")
@catalog_options
def list_command(catalog: CatalogOptions, as_json: bool) -> None:
    """List every discovered skill, with problems and the roots searched."""
    piped = as_json and not sys.stdout.isatty()
    if piped:
        from ..runtime._kept import kept_output

        kept = kept_output(LIST_JSON, catalog.discovery(), cwd=catalog.cwd)
        if kept is not None:
            emit_json_bytes(kept)
            return
    ws = catalog.workspace(warn_missing_roots=False)  # listed with the other problems
    skills = ws.catalog

    servers = [server["name"] for server in ws.config.mcp_servers]

    def missing(skill: Skill) -> tuple[dict[str, str], ...]:
        if not skill.declares_dependencies:
            return ()  # most skills declare nothing: no need to import the checker
        from ..runtime._deps import missing_dependencies

        return missing_dependencies(skill, os.environ, servers)

    rules = ws.config.permissions
    permission = rules.decide if rules.has_rules else None

    if as_json:
        problems = [p.to_dict() for p in skills.problems]
        roots = [r.to_dict() for r in skills.roots]
        if not piped:
            emit_json(
                {
                    "skills": [
                        skill_summary(
                            s,
                            enabled=ws.is_enabled(s),
                            missing=missing(s),
                            permission=permission(s) if permission else "allow",
                        )
                        for s in skills.skills
                    ],
                    "problems": problems,
                    "roots": roots,
                }
            )
            return
        # Same bytes as `emit_json` would write for a pipe, built faster.
        all_on = ws.config.enables_all
        is_enabled = None if all_on else ws.is_enabled
        listed = skill_summaries_json(skills.skills, is_enabled, missing, permission)
        text = (
            f'{{"skills": {listed}, "problems": {json.dumps(problems, default=str)}, '
            f'"roots": {json.dumps(roots, default=str)}}}'
        )
        emit_json_text(text)
        if not any(s.declares_dependencies for s in skills.skills):
            # A dependency check reads the environment, which no kept output can vouch for.
            from ..runtime._kept import keep_output

            keep_output(LIST_JSON, ws, catalog.discovery(), text)
        return
    rows = []
    for s in skills.skills:
        flags = []
        if not ws.is_enabled(s):
            flags.append("disabled")
        decision = permission(s) if permission else "allow"
        if decision != "allow":
            flags.append("denied" if decision == "deny" else "ask")
        if not s.model_invocable:
            flags.append("user-only")
        if not s.user_invocable:
            flags.append("model-only")
        if s.shadowed_by:
            flags.append("shadowed")
        if missing(s):
            flags.append("missing-deps")
        label = s.qualified_name if s.plugin else s.name
        rows.append((label, s.scope, ", ".join(flags), _shorten(s.description, 70), s.path))
    print_table(
        f"{len(skills.skills)} skills", ("skill", "scope", "flags", "description", "path"), rows
    )
    print_problems(skills.problems)
    print_roots(skills.roots)


def print_roots(roots: Sequence[Root]) -> None:
    """The roots searched, in precedence order (what `list`'s help promises)."""
    from ._output import console, markup_text

    out = console()
    out.print(f"searched {len(roots)} roots, highest precedence first:")
    for root in roots:
        kind = " (commands)" if root.kind == "commands" else ""
        readers = f" [also read by {', '.join(root.agents)}]" if root.agents else ""
        out.print(f"  {root.scope:<6} {markup_text(root.path)}{kind}{markup_text(readers)}")


def _validation_roots(path: str) -> tuple[Root, str | None]:
    """The root to walk for `path`, and the one SKILL.md to keep when a file was given."""
    absolute = os.path.abspath(path)
    if os.path.isfile(absolute):
        return Root(path=os.path.dirname(absolute), scope="extra"), absolute
    return Root(path=absolute, scope="extra"), None


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=str))
@click.option("--strict", is_flag=True, help="Turn every spec warning into an error.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (stable shape).")
def validate_command(paths: tuple[str, ...], strict: bool, as_json: bool) -> None:
    """Check skill folders, SKILL.md files or whole trees; exit 1 on any error."""
    from ..discovery._discover import discover

    results: list[dict[str, Any]] = []
    for path in paths:
        root, only = _validation_roots(path)
        catalog = discover(roots=[root], strict=strict, use_cache=False)
        by_path: dict[str, list[Problem]] = {}
        for skill in catalog.skills:
            by_path.setdefault(skill.path, [])
        for problem in catalog.problems:
            by_path.setdefault(problem.path, []).append(problem)
        if only is not None:
            by_path = (
                {only: by_path.get(only, [])}
                if only in by_path
                else {
                    only: [
                        Problem(
                            path=only,
                            severity="error",
                            code="file-unreadable",
                            message=f"{only} is not a skill file skillpack could read; "
                            "a skill is a folder holding a file named exactly SKILL.md.",
                        )
                    ]
                }
            )
        if not by_path:
            by_path[root.path] = [
                Problem(
                    path=root.path,
                    severity="error",
                    code="skill-not-found",
                    message=f"No SKILL.md found under {root.path}; a skill is a folder "
                    "holding a file named exactly SKILL.md.",
                )
            ]
        for file_path in sorted(by_path):
            problems = by_path[file_path]
            results.append(
                {
                    "path": file_path,
                    "valid": not any(p.severity == "error" for p in problems),
                    "problems": [p.to_dict() for p in problems],
                }
            )
    failed = any(not r["valid"] for r in results)
    if as_json:
        document: dict[str, Any] = {"results": results}
        if failed:
            from ._errors import error_fields

            bad = sum(1 for r in results if not r["valid"])
            document["error"] = error_fields(
                "INVALID_SKILL", f"{bad} of {len(results)} skill files are invalid."
            )
        emit_json(document)
    else:
        _print_validation(results)
    if failed:
        raise SystemExit(1)


def _print_validation(results: list[dict[str, Any]]) -> None:
    from ._output import console, markup_text

    out = console()
    for result in results:
        mark = "[green]ok[/green]" if result["valid"] else "[red]invalid[/red]"
        out.print(f"{mark} {markup_text(result['path'])}")
        for p in result["problems"]:
            style = "red" if p["severity"] == "error" else "yellow"
            out.print(
                f"  [{style}]{markup_text(p['severity'])}[/{style}] "
                f"{markup_text(p['code'])}: {markup_text(p['message'])}"
            )
            for agent, note in sorted(p.get("agents", {}).items()):
                out.print(f"    {markup_text(agent)}: {markup_text(note)}")
    bad = sum(1 for r in results if not r["valid"])
    out.print(f"{len(results) - bad} valid, {bad} invalid")


@click.command("show")
@click.argument("ref")
@catalog_options
def show_command(ref: str, catalog: CatalogOptions, as_json: bool) -> None:
    """Show one skill (by name, qualified id or path): metadata, size, files, problems."""
    from ..parse._skill_json import skill_to_dict
    from ..runtime._workspace import lookup_skill, skill_md_path
    from ._declare_cmds import declared, declared_rows

    if os.path.exists(ref) and not catalog.roots:
        # A path outside every root is still worth showing: make its folder a root.
        md = skill_md_path(ref)
        catalog = dataclasses.replace(catalog, roots=(os.path.dirname(md),))
    # Through the session's reader: a skill of an MCP server is read from its server.
    with catalog.session() as session:
        skill = lookup_skill(session.catalog, ref)
        files, truncated = session.reader.list_files(skill)
        body = session.reader.read_body(skill)
        enabled = session.skills.is_enabled(skill)
        config, problems_of = session.config, session.catalog.problems
    problems = [p for p in problems_of if p.path in (skill.path, skill.real_path)]
    tokens = (skill.body_chars + 3) // 4
    servers = [server["name"] for server in config.mcp_servers]
    declarations = declared(skill, body, servers)
    missing = declarations["dependencies"]["missing"]
    rules = config.permissions
    decision = rules.decide(skill)
    data = {
        "skill": {
            **skill_to_dict(skill),
            **skill_summary(skill, enabled=enabled, missing=missing, permission=decision),
        },
        "body_chars": skill.body_chars,
        "body_lines": skill.body_lines,
        "body_tokens_estimate": tokens,
        "files": list(files),
        "files_truncated": truncated,
        "problems": [p.to_dict() for p in problems],
        **declarations,
    }
    if as_json:
        emit_json(data)
        return
    rows = [
        ("name", skill.qualified_name),
        ("description", skill.description),
        ("path", skill.path),
        ("scope", skill.scope),
        ("enabled", str(enabled).lower()),
        ("permission", decision if decision == "allow" else rules.explain(skill)),
        ("model may invoke", str(skill.model_invocable).lower()),
        ("user may invoke", str(skill.user_invocable).lower()),
        ("body", f"{skill.body_chars} chars, ~{tokens} tokens, {skill.body_lines} lines"),
    ]
    if skill.allowed_tools is not None:
        rows.append(("allowed-tools", " ".join(skill.allowed_tools)))
    if skill.argument_hint:
        rows.append(("argument-hint", skill.argument_hint))
    if skill.when_to_use:
        rows.append(("when to use", skill.when_to_use))
    if skill.version:
        rows.append(("version", skill.version))
    if skill.dependencies:
        rows.append(("depends on", ", ".join(skill.dependencies)))
    if skill.paths:
        rows.append(("paths", " ".join(skill.paths)))
    if skill.shadowed_by:
        rows.append(("shadowed by", skill.shadowed_by))
    rows.extend(declared_rows(declarations))
    listing = "\n".join(files) + ("\n…" if truncated else "")
    rows.append(("files", listing or "(none)"))
    print_table(None, ("field", "value"), rows)
    print_problems([p for p in problems])
