"""`install --system`: the bundled skills copied where other agents look, upgraded safely."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from install_support import tree_files

from skillpack._paths import system_skills_dir
from skillpack._version import __version__
from skillpack.discovery._discover import discover
from skillpack.install import _installer, _kinds, approve_all, install_system, update


def installed(home: Path) -> Path:
    return home / ".agents" / "skills"


def test_the_bundled_skills_are_copied_with_skillpacks_version(
    isolated_home: Path, tmp_path: Path
) -> None:
    outcome = install_system(approve=approve_all)
    assert outcome.ok
    bundled = Path(system_skills_dir())
    names = sorted(p.name for p in bundled.iterdir() if (p / "SKILL.md").is_file())
    assert sorted(i.candidate.name for i in outcome.written) == names
    for name in names:
        assert tree_files(installed(isolated_home) / name) == tree_files(bundled / name)
    lock = json.loads((isolated_home / ".agents" / ".skillpack-lock.json").read_text())
    entry = lock["skills"][names[0]]
    assert (entry["sourceType"], entry["source"], entry["skillpack"]["version"]) == (
        "system",
        "skillpack",
        __version__,
    )
    catalog = discover(cwd=str(tmp_path), use_cache=False)
    winners = {s.name: s.scope for s in catalog.skills if s.shadowed_by is None}
    assert all(winners[name] == "user" for name in names)
    assert install_system(approve=approve_all).plan.unchanged == tuple(names)


@pytest.fixture
def newer_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled skills standing in for a newer skillpack's."""
    bundle = tmp_path / "bundle"
    shutil.copytree(system_skills_dir(), bundle)
    monkeypatch.setattr(_installer, "system_skills_dir", lambda: str(bundle))  # install
    monkeypatch.setattr(_kinds, "system_skills_dir", lambda: str(bundle))  # update
    return bundle


def test_an_upgrade_of_skillpack_updates_the_copies(
    isolated_home: Path, newer_bundle: Path
) -> None:
    assert install_system(approve=approve_all).ok
    checklist = newer_bundle / "writing-skills" / "references" / "checklist.md"
    checklist.write_text(checklist.read_text() + "\n- A new rule.\n")
    outcome = update(approve=approve_all)
    assert [(i.candidate.name, i.action) for i in outcome.written] == [("writing-skills", "update")]
    copy = installed(isolated_home) / "writing-skills" / "references" / "checklist.md"
    assert copy.read_text().endswith("- A new rule.\n")


def test_a_copy_the_user_edited_is_never_overwritten(
    isolated_home: Path, newer_bundle: Path
) -> None:
    assert install_system(approve=approve_all).ok
    mine = installed(isolated_home) / "vetting-skills" / "SKILL.md"
    mine.write_text(mine.read_text() + "\nMy own step.\n")
    (newer_bundle / "vetting-skills" / "SKILL.md").write_text(
        (newer_bundle / "vetting-skills" / "SKILL.md").read_text() + "\nUpstream step.\n"
    )
    for outcome in (update(approve=approve_all), install_system(approve=approve_all)):
        assert [(r.name, r.code) for r in outcome.refusals] == [
            ("vetting-skills", "locally-modified")
        ]
        assert mine.read_text().endswith("My own step.\n")
