"""`Session.open(options=DiscoveryOptions(...))`: the one value reaches the workspace's
discovery, the config fills what it leaves open, and keywords that disagree with it
are refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conftest import WriteSkill
from skillpack import DiscoveryOptions, Session, UsageError
from skillpack.runtime._workspace import WorkspaceSource, open_workspace


def _project(tmp_path: Path, write_skill: WriteSkill) -> tuple[Path, Path]:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write_skill("pdf", base=project / ".agents" / "skills")
    for index in range(4):
        write_skill(f"group{index}/inner/tool{index}", base=project / ".agents" / "skills")
    write_skill("bundled", base=project / "skills")
    extra = tmp_path / "extra"
    write_skill("charts", base=extra)
    return project, extra


def names(session: Session) -> list[str]:
    return sorted(s.name for s in session.catalog.skills)


def test_session_open_with_options_equals_session_open_with_keywords(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, extra = _project(tmp_path, write_skill)
    options = DiscoveryOptions(
        extra_roots=[str(extra)], include_user=False, include_system=False, max_dirs=3
    )
    with Session.open(cwd=str(project), options=options) as by_options:
        pass
    by_keywords = Session.open(
        cwd=str(project), roots=[str(extra)], include_user=False, include_system=False, max_dirs=3
    )
    by_keywords.close()
    assert by_options.catalog == by_keywords.catalog
    assert "charts" in names(by_options)
    truncated = [p for p in by_options.catalog.problems if p.code == "walk-truncated"]
    assert [p.path for p in truncated] == [str(project / ".agents" / "skills")]


def test_options_reach_what_session_open_has_no_keyword_for(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, _extra = _project(tmp_path, write_skill)
    plain = DiscoveryOptions(include_user=False, include_system=False)
    with Session.open(cwd=str(project), options=plain) as session:
        assert "bundled" not in names(session)
    with_dir = DiscoveryOptions(include_user=False, include_system=False, repo_skills_dir=True)
    with Session.open(cwd=str(project), options=with_dir) as session:
        assert "bundled" in names(session)
    no_repo = DiscoveryOptions(include_user=False, include_system=False, include_repo=False)
    with Session.open(cwd=str(project), options=no_repo) as session:
        assert names(session) == []


def test_the_config_decides_what_the_options_leave_open_and_not_more(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, _extra = _project(tmp_path, write_skill)
    (project / ".skillpack").mkdir()
    (project / ".skillpack" / "config.toml").write_text(
        "repo_skills_dir = true\n[discovery]\nmax_depth = 1\n", encoding="utf-8"
    )
    left_open = DiscoveryOptions(include_user=False, include_system=False)
    ws = open_workspace(left_open, cwd=str(project))
    found = sorted(s.name for s in ws.catalog.skills)
    assert found == ["bundled", "pdf"]  # the config's depth and skills/ folder
    decided = DiscoveryOptions(
        include_user=False, include_system=False, repo_skills_dir=False, max_depth=6
    )
    ws = open_workspace(decided, cwd=str(project))
    assert sorted(s.name for s in ws.catalog.skills) == [
        "pdf",
        "tool0",
        "tool1",
        "tool2",
        "tool3",
    ]


def test_a_keyword_fills_a_field_the_options_leave_at_its_default(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, extra = _project(tmp_path, write_skill)
    options = DiscoveryOptions(include_user=False, include_system=False)
    with Session.open(cwd=str(project), roots=[str(extra)], options=options) as session:
        assert "charts" in names(session)


@pytest.mark.parametrize(
    ("keywords", "options", "said"),
    [
        (
            {"roots": ["/a"]},
            DiscoveryOptions(extra_roots=["/b"]),
            r"Session\.open\(\) got roots=\['/a'\] and options\.extra_roots=\('/b',\)",
        ),
        (
            {"max_dirs": 5},
            DiscoveryOptions(max_dirs=7),
            r"got max_dirs=5 and options\.max_dirs=7",
        ),
        (
            {"include_user": False, "use_cache": False},
            DiscoveryOptions(use_cache=False, max_depth=2, include_user=True, strict=True),
            None,  # include_user=True is the default there: the keyword fills it
        ),
    ],
)
def test_a_keyword_that_differs_from_a_field_the_options_set_is_refused(
    tmp_path: Path,
    write_skill: WriteSkill,
    keywords: dict[str, object],
    options: DiscoveryOptions,
    said: str | None,
) -> None:
    project, _extra = _project(tmp_path, write_skill)
    if said is None:
        with Session.open(cwd=str(project), options=options, **keywords) as session:  # type: ignore[arg-type]
            assert session.catalog is not None
        return
    with pytest.raises(UsageError, match=said):
        Session.open(cwd=str(project), options=options, **keywords)  # type: ignore[arg-type]


def test_one_folder_for_roots_is_refused_with_the_list_to_write(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"Session\.open\(roots=\.\.\.\).*write roots=\["):
        Session.open(cwd=str(tmp_path), roots="skills", include_user=False)


def test_noted_paths_in_the_options_join_the_repo_scope_from_the_start(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, _extra = _project(tmp_path, write_skill)
    package = project / "packages" / "api"
    write_skill("api-only", base=package / ".agents" / "skills")
    options = DiscoveryOptions(
        include_user=False, include_system=False, note_paths=[str(package / "main.py")]
    )
    source = WorkspaceSource(options=options, cwd=str(project))
    try:
        assert "api-only" in {s.name for s in source.open().catalog.skills}
        assert source.note_paths([str(package / "other.py")]) is False  # known already
    finally:
        source.close()
    with Session.open(cwd=str(project), options=options) as session:
        assert "api-only" in names(session)


def test_the_config_turns_a_family_of_folders_off_and_options_win_over_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    for folder in ("copilot-skill", "gemini-skill"):
        family = ".github" if folder.startswith("copilot") else ".gemini"
        skill = project / family / "skills" / folder
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {folder}\ndescription: One folder.\n---\nx\n", encoding="utf-8"
        )
    (project / ".skillpack").mkdir()
    (project / ".skillpack" / "config.toml").write_text(
        '[discovery]\nfolders_off = ["copilot"]\n', encoding="utf-8"
    )
    base = DiscoveryOptions(include_system=False, use_cache=False)

    by_config = open_workspace(base, cwd=str(project)).catalog
    by_options = open_workspace(replace(base, folders_off=["gemini"]), cwd=str(project)).catalog

    assert [s.name for s in by_config.skills] == ["gemini-skill"]
    assert [s.name for s in by_options.skills] == ["copilot-skill"]
