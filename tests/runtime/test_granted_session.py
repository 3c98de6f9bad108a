"""A session restricted to a grant: every view of it agrees, and a hidden skill is
answered as a missing one."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import WriteSkill, root_session
from skillpack._errors import SkillNotFoundError
from skillpack.runtime._left_out import left_out
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools
from skillpack.select._grants import SkillGrant


@pytest.fixture
def tree(tmp_path: Path, write_skill: WriteSkill) -> Path:
    root = tmp_path / "skills"
    for name in ("finance-report", "finance-audit", "public-help", "hr-payroll"):
        write_skill(name, base=root, description=f"The {name} skill. Use when testing.")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("no frontmatter\n", encoding="utf-8")
    return root


def test_a_granted_session_lists_loads_and_searches_only_what_its_grant_opens(
    tree: Path,
) -> None:
    whole = root_session(tree, refresh="manual")
    grant = SkillGrant(patterns=("finance-*", "public-*"))
    session = whole.conversation(grant=grant)
    names = sorted(s.name for s in session.skills.model_skills())
    assert names == ["finance-audit", "finance-report", "public-help"]
    assert len(whole.skills.model_skills()) == 4
    assert not any(p.path.endswith("broken/SKILL.md") for p in session.catalog.problems)
    tools = SkillTools(session)
    found = tools.call("skill_search", {"query": "payroll skill"})
    assert found["ok"] and "hr-payroll" not in {r["name"] for r in found["data"]["results"]}
    hidden = tools.call("skill_load", {"name": "hr-payroll"})
    missing = tools.call("skill_load", {"name": "no-such-skill"})
    assert hidden["error"]["code"] == missing["error"]["code"] == "NOT_FOUND"
    with pytest.raises(SkillNotFoundError):
        session.find(name="hr-payroll", invoker="model")
    payroll = whole.find(name="hr-payroll", invoker="model")
    assert not session.skills.is_visible(payroll)
    standing = {"is_enabled": session.skills.is_enabled, "is_visible": session.skills.is_visible}
    assert all(e.name != "hr-payroll" for e in left_out(session.catalog, **standing))


def test_a_conversation_of_a_granted_session_keeps_its_grant_and_follows_reloads(
    tree: Path, write_skill: WriteSkill
) -> None:
    whole = root_session(tree, refresh="manual")
    session = whole.conversation(grant=SkillGrant(patterns=("finance-*",)))
    child = session.conversation()
    assert child.skills.grant == session.skills.grant
    assert child.skills.whole_catalog is whole.catalog
    write_skill("finance-new", base=tree)
    write_skill("hr-new", base=tree)
    whole.refresh()
    child.refresh(whole.catalog)
    assert sorted(s.name for s in child.catalog.skills) == [
        "finance-audit",
        "finance-new",
        "finance-report",
    ]
    before = child.catalog
    child.refresh(whole.catalog)  # the same whole catalog: nothing is filtered again
    assert child.catalog is before


def test_a_grant_with_no_pattern_hides_every_skill(tree: Path) -> None:
    session = root_session(tree, refresh="manual").conversation(grant=SkillGrant(patterns=()))
    assert session.skills.model_skills() == ()


def test_values_kept_per_grant_are_bounded_and_follow_the_root(
    tree: Path, write_skill: WriteSkill
) -> None:
    from skillpack.runtime._granted import Granted

    root = root_session(tree, refresh="manual")
    built: list[SkillGrant | None] = []

    def build(session: Session) -> Session:
        built.append(session.skills.grant)
        return session

    kept = Granted(root, build=build, session_of=lambda session: session, most=2)
    finance, hr, public = (SkillGrant(patterns=(p,)) for p in ("finance-*", "hr-*", "public-*"))
    first = kept.get(finance)
    assert kept.get(SkillGrant(patterns=("finance-*",))) is first  # equal grants share
    kept.get(hr)
    kept.get(public)  # past `most`: finance, the least recently used, is dropped
    assert len(kept) == 2
    assert kept.get(finance) is not first
    write_skill("finance-new", base=tree)
    root.refresh()
    assert "finance-new" in {s.name for s in kept.get(finance).catalog.skills}
    assert built == [finance, hr, public, finance]
