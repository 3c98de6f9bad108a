"""What the adapters share: the budgeted catalog, turns, and calls that never block the
event loop."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from framework_task import MENTION, project_asking_for_pdf_forms, write_skills

from skillpack import Session, UsageError
from skillpack.integrations._skills import Skills, turn_input


def test_the_catalog_is_the_sessions_budgeted_catalog(tmp_path: Path) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path), budget_chars=300)
    rendered = skills.session.render_catalog(budget_chars=300)
    assert rendered.text == skills.catalog() == asyncio.run(skills.acatalog())
    assert rendered.report.truncated and rendered.report.names_only
    # Every skill is at least named: the budget cuts descriptions before skills.
    assert rendered.report.shown == rendered.report.total


def test_the_host_chooses_the_catalog_mode(tmp_path: Path) -> None:
    root = str(write_skills(tmp_path))
    deferred = Skills(roots=[root], cwd=str(tmp_path), catalog_mode="deferred")
    expected = deferred.session.render_catalog(mode="deferred")
    assert expected.report.deferred
    assert deferred.catalog() == expected.text
    assert "skill_search" in expected.text
    with pytest.raises(UsageError, match="Unknown catalog mode 'lazy'"):
        Skills(roots=[root], cwd=str(tmp_path), catalog_mode="lazy")  # type: ignore[arg-type]


def test_a_session_and_options_to_open_one_are_refused(tmp_path: Path) -> None:
    session = Session.open(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    with pytest.raises(UsageError, match="roots"):
        Skills(session, roots=["elsewhere"])
    skills = Skills(session)
    skills.close()  # not its session: still usable
    assert skills.call("skill_load", {"name": "pdf-forms"})["ok"]


def test_roots_are_the_skills_served_and_nothing_else_unless_included(
    tmp_path: Path, isolated_home: Path
) -> None:
    # A personal skill in the user's folder is not served beside `roots` unless asked.
    personal = isolated_home / ".claude" / "skills" / "mine"
    personal.mkdir(parents=True)
    (personal / "SKILL.md").write_text(
        "---\nname: mine\ndescription: A personal skill.\n---\nMine.\n", encoding="utf-8"
    )
    root = str(write_skills(tmp_path))
    only = Skills(roots=[root], cwd=str(tmp_path))
    try:
        names = {skill.name for skill in only.session.catalog.skills}
        assert "pdf-forms" in names and "mine" not in names
        assert {r.scope for r in only.session.catalog.roots} == {"extra"}
    finally:
        only.close()
    both = Skills(roots=[root], include=("user", "system"), cwd=str(tmp_path))
    try:
        names = {skill.name for skill in both.session.catalog.skills}
        assert {"pdf-forms", "mine"} <= names
    finally:
        both.close()


def test_a_misspelt_root_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"roots=\[\.\.\.\]\) names 'skilz', which does not exist"):
        Skills(roots=["skilz"], cwd=str(tmp_path))


def test_acall_leaves_the_event_loop_free_while_the_host_is_asked(tmp_path: Path) -> None:
    # The permission prompt waits for something only the event loop can do: were the call
    # run on the loop, the loop could not do it and the prompt would time out.
    answered = threading.Event()

    def ask(skill: Any, action: str) -> str:
        return "allow" if answered.wait(timeout=30) else "deny"

    root = write_skills(project_asking_for_pdf_forms(tmp_path))
    skills = Skills(roots=[str(root)], cwd=str(tmp_path), ask=ask)

    async def main() -> dict[str, Any]:
        call = asyncio.create_task(skills.acall("skill_load", {"name": "pdf-forms"}))
        await asyncio.sleep(0)
        answered.set()  # runs on the loop while the call waits in its thread
        return await call

    result = asyncio.run(main())
    assert result["ok"], result


def test_turn_input_puts_injections_and_fork_results_before_the_task(tmp_path: Path) -> None:
    class Runner:
        def run(self, *, skill: Any, prompt: str, agent: Any, model: Any) -> Any:
            return {"labels": ["bug"]}

    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path), runner=Runner())
    turn = skills.prepare_turn("$triage issue 7")
    text = turn_input(turn, "$triage issue 7")
    assert text.startswith("Skill 'triage' ran in a subagent; its result:\n")
    assert '{"labels": ["bug"]}' in text
    prepared = asyncio.run(skills.aprepare(MENTION))
    assert prepared.startswith('<skill_content name="release-notes"')
    assert prepared.endswith("for v2.0")


def test_prepare_puts_the_suggestions_note_before_a_task_no_skill_was_named_for(
    tmp_path: Path,
) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    turn = skills.prepare_turn("flatten the fields of this PDF form")
    assert [s.id for s in turn.suggestions] == ["pdf-forms"]
    text = skills.prepare("flatten the fields of this PDF form")
    assert text == f"{turn.suggestion_note}\n\nflatten the fields of this PDF form"
    assert skills.prepare("what is the capital of Peru") == "what is the capital of Peru"
