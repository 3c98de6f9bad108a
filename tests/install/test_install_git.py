"""Installing from real git repositories created in the test (cloned over file://)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from install_support import commit_all, git, make_repo, tree_files, write_skill

from skillpack._errors import SkillIOError
from skillpack.install import approve_all, doctor, install, update

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git on PATH")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = make_repo(tmp_path / "work")
    write_skill(
        work / "skills",
        "pdf",
        description="Fill PDFs. Use for PDF forms.",
        files={"scripts/fill.py": "print('fill')\n"},
    )
    write_skill(work / "skills", "deploy", description="Deploy. Use to ship.")
    write_skill(work / "docs" / "examples", "example", description="Example.")
    (work / "README.md").write_text("# skills\n")
    commit_all(work, "v1")
    git("tag", "v1", cwd=work)
    return work


def url(work: Path) -> str:
    """A bare clone of `work`, as a file:// URL ending in .git."""
    bare = work.parent / "remote.git"
    if bare.exists():
        shutil.rmtree(bare)
    git("clone", "-q", "--bare", str(work), str(bare), cwd=work.parent)
    return bare.as_uri()


def installed(home: Path) -> Path:
    return home / ".agents" / "skills"


def test_every_skill_folder_of_a_repository_is_found_and_installed(
    repo: Path, isolated_home: Path
) -> None:
    outcome = install(url(repo), all_skills=True, approve=approve_all)
    assert outcome.ok, outcome.refusals
    assert sorted(i.candidate.name for i in outcome.written) == ["deploy", "example", "pdf"]
    assert tree_files(installed(isolated_home) / "pdf") == tree_files(repo / "skills" / "pdf")
    lock = json.loads((isolated_home / ".agents" / ".skillpack-lock.json").read_text())
    entry = lock["skills"]["pdf"]
    head = git("rev-parse", "HEAD", cwd=repo)
    assert (entry["sourceType"], entry["skillPath"], entry["skillpack"]["commit"]) == (
        "git",
        "skills/pdf/SKILL.md",
        head,
    )
    assert entry["sourceUrl"].endswith("remote.git") and "ref" not in entry
    assert doctor().clean


def test_a_tag_a_commit_and_a_sub_path_are_honoured(repo: Path, isolated_home: Path) -> None:
    first = git("rev-parse", "HEAD", cwd=repo)
    (repo / "skills" / "pdf" / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Fill PDFs v2.\n---\nv2\n"
    )
    commit_all(repo, "v2")
    remote = url(repo)
    outcome = install(f"{remote}/skills#v1", skills=["pdf"], approve=approve_all)
    assert outcome.ok
    text = (installed(isolated_home) / "pdf" / "SKILL.md").read_text()
    assert "v2" not in text
    lock = json.loads((isolated_home / ".agents" / ".skillpack-lock.json").read_text())
    assert lock["skills"]["pdf"]["ref"] == "v1"
    assert lock["skills"]["pdf"]["skillpack"]["commit"] == first
    by_commit = install(f"{remote}#{first}", skills=["deploy"], approve=approve_all)
    assert by_commit.ok and by_commit.written[0].candidate.origin.commit == first


def test_a_ref_that_does_not_exist_is_an_error_naming_it(repo: Path, isolated_home: Path) -> None:
    with pytest.raises(SkillIOError, match="The git ref 'no-such-branch' does not exist"):
        install(f"{url(repo)}#no-such-branch", all_skills=True, approve=approve_all)
    assert not installed(isolated_home).exists()


def test_an_unreachable_repository_is_an_error(tmp_path: Path) -> None:
    missing = (tmp_path / "nowhere.git").as_uri()
    with pytest.raises(SkillIOError, match="Cannot clone"):
        install(missing, all_skills=True, approve=approve_all)


def test_update_follows_new_commits_and_reports_the_changed_files(
    repo: Path, isolated_home: Path
) -> None:
    remote = url(repo)
    assert install(remote, skills=["pdf"], approve=approve_all).ok
    assert update(approve=approve_all).plan.unchanged == ("pdf",)
    (repo / "skills" / "pdf" / "scripts" / "fill.py").write_text("print('fill v2')\n")
    commit_all(repo, "v2")
    git("push", "-q", remote, "HEAD:main", cwd=repo)
    outcome = update(approve=approve_all)
    [item] = outcome.written
    assert item.action == "update" and item.changes is not None
    assert item.changes.changed == ("scripts/fill.py",)
    assert "v2" in (installed(isolated_home) / "pdf" / "scripts" / "fill.py").read_text()


def test_a_symlink_leaving_the_skill_folder_refuses_that_skill(
    repo: Path, isolated_home: Path
) -> None:
    (repo / "skills" / "pdf" / "secrets").symlink_to("/etc/passwd")
    commit_all(repo, "link")
    outcome = install(url(repo), all_skills=True, approve=approve_all)
    assert [(r.name, r.code) for r in outcome.refusals] == [("pdf", "unsafe-entry")]
    assert not (installed(isolated_home) / "pdf").exists()
    assert (installed(isolated_home) / "deploy").is_dir()
