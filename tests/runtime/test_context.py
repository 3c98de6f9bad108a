"""The context report: what the catalog and the loaded skills cost, from the session."""

from __future__ import annotations

import pytest

from skillpack.discovery._memory import MemorySkills
from skillpack.render._catalog import entry_chars, render_catalog
from skillpack.render._formats import CatalogFormat
from skillpack.runtime._context import context_report
from skillpack.runtime._session import Session


def skill_md(name: str, description: str, body: str = "Steps.\n", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


@pytest.fixture
def session() -> Session:
    files = MemorySkills(
        {
            "/s/short/SKILL.md": skill_md("short", "Tiny. Use rarely."),
            "/s/long/SKILL.md": skill_md(
                "long",
                "A long description of deploys. " * 12,
                body="# Long\n" + "Do this carefully.\n" * 40,
            ),
            "/s/medium/SKILL.md": skill_md("medium", "Reviews pull requests for style. " * 3),
            "/s/scoped/SKILL.md": skill_md(
                "scoped",
                "Only reads files. Use to inspect.",
                body="Read only.\n",
                extra="allowed-tools: Read Grep\n",
            ),
            "/s/hidden/SKILL.md": skill_md(
                "hidden", "User only.", extra="disable-model-invocation: true\n"
            ),
        }
    )
    return Session(files.catalog(), reader=files)


def test_each_entry_costs_what_the_catalog_writes_for_it(session: Session) -> None:
    report = context_report(session, include_skills=True)
    skills = session.skills.model_skills()
    full = render_catalog(skills, budget_chars=100_000, preamble=False)
    body = full.text.split("<available_skills>\n", 1)[1].rsplit("</available_skills>", 1)[0]
    assert sum(e.chars for e in report.entries) == len(body)
    assert [e.name for e in report.entries] == [s.name for s in skills]
    assert "hidden" not in {e.name for e in report.entries}
    assert all(e.tokens == (e.chars + 3) // 4 for e in report.entries)
    assert {e.shown for e in report.entries} == {"full"}
    assert not report.budget.truncated


@pytest.mark.parametrize("fmt", ["xml", "markdown", "json"])
def test_entry_chars_match_each_format_entry_by_entry(session: Session, fmt: CatalogFormat) -> None:
    skills = session.skills.model_skills()
    sizes = entry_chars(skills, format=fmt, include_location=False)
    alone = [
        len(
            render_catalog(
                [s],
                format=fmt,
                budget_chars=100_000,
                preamble=False,
                include_location=False,
            ).text
        )
        for s in skills
    ]
    empty_frame = alone[0] - sizes[0]
    assert [a - empty_frame for a in alone] == list(sizes)


def test_a_tight_budget_says_which_entries_it_cut_or_left_out(session: Session) -> None:
    report = context_report(session, budget_chars=420, include_skills=True)
    shown = {e.name: e.shown for e in report.entries}
    assert report.budget.truncated and report.budget.used_chars <= 420
    assert set(shown.values()) - {"full"}
    for entry in report.entries:
        if entry.shown == "omitted":
            assert entry.name in report.budget.omitted
        if entry.shown == "name_only":
            assert entry.name in report.budget.names_only


def test_loaded_skills_leading_skill_and_active_tools(session: Session) -> None:
    session.prepare_turn("$scoped look, then $long")
    session.load(name="long")
    report = context_report(session, context_window=50_000, tools=["Read", "Bash", "skill_load"])
    data = report.to_dict()

    assert [item["name"] for item in data["loaded"]] == ["long", "scoped"]
    long_body = next(s for s in session.catalog.skills if s.name == "long").body_chars
    assert data["loaded"][0]["body_chars"] == long_body
    assert data["loaded_tokens"] == sum(item["body_tokens"] for item in data["loaded"])
    assert data["leading"] == data["leading_chain"][0]
    assert data["active_tools"]["restricted"] is True
    assert data["active_tools"]["tools"] == ["Read", "skill_load"]
    assert data["catalog"]["share_of_window"] == data["catalog"]["tokens"] / 50_000
    assert "entries" not in data["catalog"] and "skills" not in data


def test_without_a_window_there_is_no_share_and_without_tools_no_tool_list(
    session: Session,
) -> None:
    data = context_report(session).to_dict()
    assert data["catalog"]["share_of_window"] is None
    assert data["loaded"] == [] and data["leading"] is None
    assert data["active_tools"] == {"restricted": False, "declarations": [], "tools": None}
    assert data["counts"]["in_model_catalog"] == 4
