"""Resolving and loading real corpus skills end to end, with arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REAL_SKILLS
from skillpack import Session

pytestmark = pytest.mark.corpus

ARGUMENT_SKILLS = sorted(
    p for p in REAL_SKILLS.rglob("SKILL.md") if "$ARGUMENTS" in p.read_text(encoding="utf-8")
)


def test_the_corpus_has_claude_style_argument_skills() -> None:
    assert len(ARGUMENT_SKILLS) >= 10


# Without the corpus, one placeholder case carries the `corpus` marker's skip reason
# (an empty parameter list would be skipped as "got empty parameter set").
ARGUMENT_CASES = [pytest.param(p, id=str(p.relative_to(REAL_SKILLS))) for p in ARGUMENT_SKILLS] or [
    pytest.param(REAL_SKILLS / "SKILL.md", id="no-corpus")
]


@pytest.mark.parametrize("skill_md", ARGUMENT_CASES)
def test_slash_command_with_arguments_loads_substituted_body(
    skill_md: Path, tmp_path: Path
) -> None:
    session = Session.open(
        cwd=str(tmp_path), roots=[str(skill_md.parent)], include_user=False, include_system=False
    )
    skill = session.catalog.at_path(str(skill_md))
    assert skill is not None, session.catalog.problems
    turn = session.prepare_turn(f"/{skill.name} src/app.py --verbose")
    if not skill.user_invocable:
        assert [d.kind for d in turn.diagnostics] == ["not-user-invocable"]
        return
    [activation] = turn.activations
    assert activation.source == "slash" and activation.args == "src/app.py --verbose"
    [injection] = turn.injections
    body = injection.split("</skill_content>")[0]
    assert "src/app.py --verbose" in body
    assert turn.lines == (f"Using skill: {skill.name}",)


def test_mention_of_a_real_skill_with_a_task_activates_it(tmp_path: Path) -> None:
    roots = [str(p.parent) for p in ARGUMENT_SKILLS[:3]]
    session = Session.open(cwd=str(tmp_path), roots=roots, include_user=False)
    first = session.catalog.at_path(str(ARGUMENT_SKILLS[0]))
    assert first is not None
    turn = session.prepare_turn(f"please ${first.name} the login flow")
    assert [a.path for a in turn.activations] == [first.path]
    assert turn.text == "please the login flow"
    assert "the login flow" in turn.injections[0] or "please the login flow" in turn.injections[0]
