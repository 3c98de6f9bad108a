"""The session's catalog: one allocator for every surface, ranked by the session's use
and by scope, on made-up skills and on the real corpus."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import REAL_SKILLS
from skillpack._limits import BUDGET_CHARS
from skillpack.discovery._memory import MemorySkills
from skillpack.render._catalog import RenderedCatalog
from skillpack.render._formats import CatalogFormat
from skillpack.runtime._context import context_report
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools

FORMATS: tuple[CatalogFormat, ...] = ("xml", "markdown", "json")


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n"


NAMES = [f"task-{letter}-helper" for letter in "abcdefghijkl"]


@pytest.fixture
def session() -> Session:
    files = MemorySkills(
        {f"/s/{name}/SKILL.md": skill_md(name, f"Helps with {name} work. " * 6) for name in NAMES}
    )
    return Session(files.catalog(), reader=files)


def described(rendered: RenderedCatalog) -> set[str]:
    shown_as = dict(zip(NAMES, rendered.report.shown_as, strict=True))
    return {name for name, state in shown_as.items() if state in ("full", "shortened")}


def test_a_skill_used_in_the_session_keeps_its_description_when_others_lose_theirs(
    session: Session,
) -> None:
    before = session.render_catalog(format="markdown", budget_chars=900)
    assert before.report.names_only
    unused = next(name for name in NAMES if name not in described(before))
    assert SkillTools(session).call("skill_load", {"name": unused})["ok"]
    after = session.render_catalog(format="markdown", budget_chars=900)
    assert unused in described(after)
    assert len(described(after)) == len(described(before))


def test_the_context_report_says_what_became_of_each_entry(session: Session) -> None:
    rendered = session.render_catalog(budget_chars=900)
    report = context_report(session, budget_chars=900, include_skills=True)
    assert report.budget == rendered.report
    assert tuple(entry.shown for entry in report.entries) == rendered.report.shown_as
    named = {e.name for e in report.entries if e.shown == "name_only"}
    assert named == set(rendered.report.names_only)


def test_the_deferred_mode_reaches_every_caller(session: Session) -> None:
    rendered = session.render_catalog(mode="deferred")
    assert rendered.report.deferred
    assert session.catalog_prompt(mode="deferred") == rendered.text
    report = context_report(session, mode="deferred")
    assert report.budget.deferred


# -- the real corpus ---------------------------------------------------------------------


def corpus_session(tmp_path: Path) -> Session:
    return Session.open(
        cwd=str(tmp_path), extra_roots=[str(REAL_SKILLS)], include_user=False, use_cache=False
    )


def listed_names(rendered: RenderedCatalog) -> list[str]:
    """Every name the text lists, with or without a description."""
    text = rendered.text
    if rendered.format == "json":
        data = json.loads(text)
        more: list[str] = data.get("more_skills", [])
        return [str(e["name"]) for e in data["skills"]] + more
    if rendered.format == "xml":
        root = ET.fromstring(text[text.index("<available_skills>") :])
        compact = root.findtext("more_skills")
        names = [s.findtext("name") or "" for s in root.findall("skill")]
        return names + (compact.split(", ") if compact else [])
    entries = [
        line[4 : line.index("**", 4)] for line in text.splitlines() if line.startswith("- **")
    ]
    more_line = next(
        (line for line in text.splitlines() if line.startswith("More skills, by name only: ")),
        "",
    )
    listed = more_line.removeprefix("More skills, by name only: ")
    return entries + (listed.split(", ") if listed else [])


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_real_corpus_names_every_model_visible_skill_in_the_default_budget(
    tmp_path: Path, fmt: CatalogFormat
) -> None:
    session = corpus_session(tmp_path)
    visible = session.skills.model_skills()
    assert len(visible) > 350
    rendered = session.render_catalog(format=fmt)
    report = rendered.report
    assert len(rendered.text) <= BUDGET_CHARS == report.budget_chars
    assert sorted(listed_names(rendered)) == sorted(s.name for s in visible)
    assert (report.shown, report.omitted, report.deferred) == (len(visible), (), False)
    # No skill keeps a location while another loses its description.
    assert report.names_only
    assert report.locations_dropped
    assert "SKILL.md" not in rendered.text
    # Descriptions were shortened fairly: every described one to the same length.
    assert report.description_chars is not None
    assert report.shortened


@pytest.mark.corpus
def test_the_real_corpus_catalog_prefers_project_skills_over_bundled_ones(
    tmp_path: Path,
) -> None:
    session = corpus_session(tmp_path)
    rendered = session.render_catalog(format="markdown")
    states = list(zip(session.skills.model_skills(), rendered.report.shown_as, strict=True))
    system = [state for skill, state in states if skill.scope == "system"]
    extra = [state for skill, state in states if skill.scope == "extra"]
    assert system and extra
    if any(state == "name_only" for state in extra):
        assert all(state == "name_only" for state in system)
