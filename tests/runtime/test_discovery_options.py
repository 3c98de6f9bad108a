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
        cwd=str(project),
        extra_roots=[str(extra)],
        include_user=False,
        include_system=False,
        max_dirs=3,
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
    with Session.open(cwd=str(project), extra_roots=[str(extra)], options=options) as session:
        assert "charts" in names(session)


def test_roots_are_the_skills_served_and_nothing_else_unless_included(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, extra = _project(tmp_path, write_skill)
    with Session.open(cwd=str(project), roots=[str(extra)]) as session:
        assert names(session) == ["charts"]  # no repo skill, no user or bundled one
        assert [root.path for root in session.catalog.roots] == [str(extra)]
    with Session.open(cwd=str(project), roots=[str(extra)], include=("repo",)) as session:
        assert "charts" in names(session) and "pdf" in names(session)
        assert {root.scope for root in session.catalog.roots} == {"extra", "repo"}
    with Session.open(cwd=str(project), extra_roots=[str(extra)], include_user=False) as session:
        assert "charts" in names(session) and "pdf" in names(session)


def test_the_configs_roots_are_not_served_beside_exact_roots(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, extra = _project(tmp_path, write_skill)
    configured = tmp_path / "configured"
    write_skill("from-config", base=configured)
    (project / ".skillpack").mkdir()
    (project / ".skillpack" / "config.toml").write_text(
        f"roots = [{str(configured)!r}]\n", encoding="utf-8"
    )
    with Session.open(cwd=str(project), roots=[str(extra)]) as session:
        assert names(session) == ["charts"]
    with Session.open(cwd=str(project), include_user=False, include_system=False) as session:
        assert "from-config" in names(session)


@pytest.mark.parametrize("keyword", ["roots", "extra_roots"])
def test_a_root_that_does_not_exist_is_refused_with_its_name_and_the_fix(
    tmp_path: Path, keyword: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as raised:
        Session.open(cwd=str(tmp_path), **{keyword: ["skilz"]})  # type: ignore[arg-type]
    message = str(raised.value)
    assert f"Session.open({keyword}=[...]) names 'skilz', which does not exist" in message
    assert str(tmp_path / "skilz") in message and "create the folder first" in message
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        Session.open(cwd=str(tmp_path), roots=["afile"])


def test_a_missing_root_in_the_options_is_a_problem_not_an_error(tmp_path: Path) -> None:
    options = DiscoveryOptions(extra_roots=[str(tmp_path / "later")], include_user=False)
    with Session.open(cwd=str(tmp_path), options=options) as session:
        assert "root-missing" in [p.code for p in session.catalog.problems]


def test_include_names_only_known_scopes(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"include=\('users',\)\) takes a list of scopes"):
        Session.open(cwd=str(tmp_path), roots=[str(tmp_path)], include=("users",))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"include='user'"):
        Session.open(cwd=str(tmp_path), roots=[str(tmp_path)], include="user")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keywords", "options", "said"),
    [
        (
            {"extra_roots": ["/"]},
            DiscoveryOptions(extra_roots=["/b"]),
            r"Session\.open\(\) got extra_roots=\['/'\] and options\.extra_roots=\('/b',\)",
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
