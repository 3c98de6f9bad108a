"""Collisions between skills of the same name: shadowed copies and ambiguous names.

Pure: the loaded skills in, the same skills (shadowed ones marked) and the
`name-shadowed` / `name-ambiguous` warnings out.
"""

from __future__ import annotations

from dataclasses import replace

from .._model import Problem, Skill, best_of, precedence


def _label(skill: Skill, by_qualified: dict[str, int]) -> str:
    """The shortest unambiguous way to name `skill`: its qualified id, else its path.

    The count is of `Skill.qualified_name` among the skills of one name, the very id
    `Catalog.qualified` matches, so a label offered here always resolves.
    """
    if by_qualified.get(skill.qualified_name, 0) == 1:
        return skill.qualified_name
    return skill.path


def _namespace(skill: Skill) -> str:
    """What a skill collides on: its name, or for a plugin skill `plugin:name`.

    Claude Code keeps plugin skills in their own namespace: `myplug:p-agents` and a
    bare `p-agents` are two skills, neither shadowing the other. A bare
    name naming both still resolves by precedence (`Catalog.winners`). Skills of
    `[[mcp_servers]]` (scope `mcp`, namespaced by server) keep colliding by name: a
    local skill shadows a server's copy, and two servers' copies tie.
    """
    if skill.plugin and skill.scope != "mcp":
        return f"{skill.plugin}:{skill.name}"
    return skill.name


def missing_dependencies(skills: list[Skill], problems: list[Problem]) -> None:
    """Report each skill whose `dependencies` name a skill the catalog does not hold
    (by name or qualified id): a `skill-dependency-missing` warning per skill."""
    needing = [s for s in skills if s.dependencies]
    if not needing:
        return
    known = {s.name for s in skills} | {s.qualified_name for s in skills}
    for skill in needing:
        absent = [name for name in skill.dependencies if name not in known]
        if absent:
            listed = ", ".join(f"'{name}'" for name in absent)
            problems.append(
                Problem(
                    path=skill.path,
                    severity="warning",
                    code="skill-dependency-missing",
                    field="dependencies",
                    message=f"Skill '{skill.name}' at {skill.path} depends on {listed}, which "
                    "no root holds; install or add that skill (`skillpack install`), or "
                    "remove it from `dependencies`.",
                )
            )


def resolve_collisions(skills: list[Skill], problems: list[Problem]) -> list[Skill]:
    """Mark shadowed skills and report shadowed and ambiguous names, and skills whose
    `dependencies` are missing (`missing_dependencies`: a check over the whole catalog
    too).

    For each name (a plugin's skills: each `plugin:name`, see `_namespace`) the
    candidates of highest precedence win (`best_of`, the rule
    `Catalog.winners` and the resolver use). A single winner shadows the rest
    (`shadowed_by` set and a `name-shadowed` warning each); tied winners make the
    name ambiguous (one `name-ambiguous` warning per name, naming the ids to use),
    and any lower candidates are shadowed by the first winner in catalog order.
    """
    # Most names occur once: one dict pass finds the repeated ones, and only their
    # skills are grouped (and only their names sorted).
    first: dict[str, int] = {}
    seen = first.setdefault
    spaces = [_namespace(s) for s in skills]
    repeated = {space for index, space in enumerate(spaces) if seen(space, index) != index}
    missing_dependencies(skills, problems)
    if not repeated:
        return list(skills)
    by_name: dict[str, list[int]] = {}
    for index, space in enumerate(spaces):
        if space in repeated:
            by_name.setdefault(space, []).append(index)
    by_qualified: dict[str, int] = {}
    for indexes in by_name.values():
        for i in indexes:
            qualified = skills[i].qualified_name
            by_qualified[qualified] = by_qualified.get(qualified, 0) + 1
    result = list(skills)
    for space in sorted(by_name):
        indexes = by_name[space]
        name = skills[indexes[0]].name
        candidates = sorted(
            (skills[i] for i in indexes), key=lambda s: (precedence(s), s.name, s.path)
        )
        winners = best_of(candidates)
        winner = winners[0]
        if len(winners) > 1:
            labels = ", ".join(_label(s, by_qualified) for s in winners)
            problems.append(
                Problem(
                    path=winner.path,
                    severity="warning",
                    code="name-ambiguous",
                    message=f"{len(winners)} skills named '{name}' have the same precedence "
                    f"({winner.scope} scope): {labels}. A bare '{name}' cannot be resolved; "
                    "name one by qualified id or path, or rename one of them.",
                )
            )
        losers = {s.key for s in candidates[len(winners) :]}
        for i in indexes:
            skill = skills[i]
            if skill.key not in losers:
                continue
            result[i] = replace(skill, shadowed_by=winner.path)
            if len(winners) > 1:
                by = f"the {len(winners)} skills named '{name}' in {winner.scope} scope"
            else:
                by = f"{winner.path} ({winner.scope} scope), which a bare '{name}' resolves to"
            problems.append(
                Problem(
                    path=skill.path,
                    severity="warning",
                    code="name-shadowed",
                    message=f"Skill '{name}' at {skill.path} ({skill.scope} scope) is shadowed by "
                    f"{by}. Use {_label(skill, by_qualified)} to reach it, or rename or "
                    "remove one copy.",
                )
            )
    return result
