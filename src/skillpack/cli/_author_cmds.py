"""`skillpack triggers`: for skill authors, before shipping."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from ._options import CatalogOptions, catalog_options
from ._output import emit_json, safe_text

if TYPE_CHECKING:
    from .._model import Problem, Skill
    from ..runtime._session import Session
    from ..select._triggers import Search, TriggerReport, TriggerRequest


@click.command("triggers")
@click.argument("target", required=False)
@catalog_options
def triggers_command(target: str | None, catalog: CatalogOptions, as_json: bool) -> None:
    """Check that the requests a skill lists pick that skill (offline, no model).

    TARGET is a folder (its skills are checked; it joins the roots when no root
    holds it) or a skill name; without it, every skill the model may use is
    checked. Each skill's listed requests (`metadata.triggers` or a top-level
    `triggers` in its frontmatter, and `triggers = [...]` in evals/triggers.toml
    beside its SKILL.md) go through skill_search over the whole catalog. Reported:
    requests that pick another skill or nothing, skills competing for the same
    requests (on a listed request, or on the skill's own description taken as a
    request) with the words they share, and a description lint (too short, no
    "when to use", vague words, over the limit). Exit 1 when a listed request
    picks another skill.

    \b
    --json prints:
      {"ok": false when a listed request picks another skill,
       "summary": {"skills", "requests", "picked", "other", "nothing", "pairs", "lint"},
       "skills": [{"name", "qualified_name", "path",
         "requests": [{"request", "source", "outcome": "picked" | "other" | "nothing",
           "rank": the skill's rank or null,
           "picked": {"name", "qualified_name", "path", "score"} | null,
           "terms": words the picked skill holds, "missing": words this one lacks}],
         "competitors": [{"name", "qualified_name", "path",
           "via": "description" or the request, "ahead": bool, "terms"}],
         "lint": [{"code", "message", "words"?}], "problems": [problem]}],
       "pairs": [{"skills": [{"name", "qualified_name", "path"}, {...}],
         "terms", "via"}]}
    """
    from ..select._triggers import check_triggers

    session, targets = targets_of(target, catalog, purpose="check")
    model_skills = session.skills.model_skills()
    listed, problems = _listed(session, targets)
    report = check_triggers(
        targets,
        model_skills,
        listed,
        _searcher(session, no_cache=catalog.no_cache),
        problems=problems,
    )
    if as_json:
        document = report.to_dict()
        if report.failed:
            from ._errors import error_fields

            document["error"] = error_fields(
                "TRIGGERS_FAILED", "A listed request picks another skill or none."
            )
        emit_json(document)
    else:
        _print_report(report)
    if report.failed:
        raise SystemExit(1)


def targets_of(
    target: str | None, catalog: CatalogOptions, *, purpose: str
) -> tuple[Session, list[Skill]]:
    """The session and the skills TARGET means (`target_skills`): a folder's skills
    (the folder joins the roots when no root holds it), a named skill, or (None)
    every skill the model may use."""
    from ..runtime._eval import target_skills

    folder = os.path.realpath(target) if target and os.path.isdir(target) else None
    if folder is not None and not _under_a_root(folder, catalog):
        catalog = dataclasses.replace(catalog, roots=(*catalog.roots, target or folder))
    session = catalog.session()
    name = None if folder else target
    return session, target_skills(session, folder=folder, name=name, purpose=purpose)


def _under_a_root(folder: str, catalog: CatalogOptions) -> bool:
    return any(_inside(folder, os.path.realpath(root)) for root in catalog.roots)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _listed(
    session: Session, targets: Sequence[Skill]
) -> tuple[dict[str, tuple[TriggerRequest, ...]], dict[str, tuple[Problem, ...]]]:
    from .._errors import SkillNotFoundError, SkillpackError
    from .._model import Problem
    from ..select._triggers import TRIGGERS_FILE, listed_triggers

    listed = {}
    problems = {}
    for skill in targets:
        unreadable: list[Problem] = []
        try:
            text: str | None = session.reader.read_file(skill, TRIGGERS_FILE)
        except SkillNotFoundError:
            text = None
        except SkillpackError as exc:
            text = None
            unreadable.append(
                Problem(
                    path=f"{skill.dir}/{TRIGGERS_FILE}",
                    severity="warning",
                    code="triggers-invalid",
                    message=f"The trigger list cannot be read: {exc}",
                )
            )
        listed[skill.key], found = listed_triggers(skill, text)
        problems[skill.key] = (*unreadable, *found)
    return listed, problems


def _searcher(session: Session, *, no_cache: bool) -> Search:
    """`skill_search` as the model calls it, read back into the check's `Hit`s."""
    import sqlite3

    from ..runtime._tools import SkillTools
    from ..select._triggers import Hit

    tools = SkillTools(session, search_connection=sqlite3.connect(":memory:") if no_cache else None)
    by_path = {skill.path: skill for skill in session.catalog.skills}

    def search(request: str, limit: int) -> list[Hit]:
        envelope = tools.skill_search(request, limit=limit)
        if not envelope["ok"]:
            return []  # a request of stop words only: it picks nothing
        return [
            Hit(skill=by_path[r["path"]], score=r["score"], strong=r["match"] == "strong")
            for r in envelope["data"]["results"]
        ]

    return search


# -- text output ----------------------------------------------------------------------


class _Names:
    """How the report names a skill: its name (qualified for a plugin skill), and
    where names repeat in the report, the end of its folder too."""

    def __init__(self, report: TriggerReport) -> None:
        skills = [c.skill for c in report.skills]
        skills += [r.picked.skill for c in report.skills for r in c.requests if r.picked]
        skills += [x.skill for c in report.skills for x in c.competitors]
        keys: dict[str, set[str]] = {}
        for skill in skills:
            keys.setdefault(self._plain(skill), set()).add(skill.key)
        self._repeated = {name for name, found in keys.items() if len(found) > 1}

    @staticmethod
    def _plain(skill: Skill) -> str:
        return skill.qualified_name if skill.plugin else skill.name

    def __call__(self, skill: Skill) -> str:
        name = self._plain(skill)
        if name in self._repeated:
            tail = "/".join(skill.dir.replace(os.sep, "/").split("/")[-3:])
            name = f"{name} [{tail}]"
        return safe_text(name)


def _words(words: Sequence[str]) -> str:
    return safe_text(", ".join(words))


PAIRS_SHOWN = 30
"""Competing pairs the text report lists (the strongest); `--json` has them all."""


def _print_report(report: TriggerReport) -> None:
    _name = _Names(report)
    data = report.to_dict()["summary"]
    lines = [
        f"{data['skills']} skills checked, {data['requests']} listed requests: "
        f"{data['picked']} pick their skill, {data['other']} pick another skill, "
        f"{data['nothing']} pick nothing; {data['pairs']} competing pairs; "
        f"{data['lint']} description findings."
    ]
    for check in report.skills:
        if not (check.requests or check.competitors or check.lint or check.problems):
            continue
        skill = check.skill
        lines += ["", f"{_name(skill)}  {safe_text(skill.path)}"]
        for r in check.requests:
            said = f'"{safe_text(r.request.text)}"'
            ranks = f"{_name(skill)} ranks {r.rank}" if r.rank else f"{_name(skill)} is absent"
            if r.outcome == "picked":
                lines.append(f"  ok    {said}")
            elif r.outcome == "other" and r.picked is not None:
                why = f"its description holds: {_words(r.terms)}" if r.terms else "on its body"
                lines.append(f"  FAIL  {said} picks {_name(r.picked.skill)} ({why}); {ranks}")
            else:
                lines.append(f"  none  {said} picks nothing strongly; {ranks}")
            if r.outcome != "picked" and r.missing:
                lines.append(f"        words the description lacks: {_words(r.missing)}")
        for c in check.competitors:
            how = "ranks above it" if c.ahead else "ranks close"
            via = "its description" if c.via == "description" else f'"{safe_text(c.via)}"'
            lines.append(
                f"  competes with {_name(c.skill)} ({how} on {via}; shared: "
                f"{_words(c.terms) or '-'})"
            )
        for finding in check.lint:
            lines.append(f"  lint  {finding.code}: {safe_text(finding.message)}")
        for problem in check.problems:
            lines.append(f"  problem  {problem.code}: {safe_text(problem.message)}")
    if report.pairs:
        lines += ["", "Competing pairs, strongest first (shared words, rarest first):"]
        for pair in report.pairs[:PAIRS_SHOWN]:
            a, b = pair.skills
            lines.append(f"  {_name(a)} <-> {_name(b)}: {_words(pair.terms) or '-'}")
        if len(report.pairs) > PAIRS_SHOWN:
            lines.append(f"  ... and {len(report.pairs) - PAIRS_SHOWN} more (--json lists all)")
    click.echo("\n".join(lines))
