"""Discovery: roots and scopes, the bounded walk, symlinks, plugins, collisions, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import WriteSkill
from skillpack._errors import UsageError
from skillpack._model import Catalog, Root, Scope, Skill
from skillpack._paths import project_dirs
from skillpack._paths import system_skills_dir as system_root_path
from skillpack.discovery import _load
from skillpack.discovery._discover import discover
from skillpack.discovery._options import DiscoveryOptions
from skillpack.discovery._roots import default_roots
from skillpack.select._resolve import resolve_message


def run(*roots: Path, **kwargs: object) -> Catalog:
    """Discover exactly these folders as extra roots, ranked by order, without cache."""
    kwargs.setdefault("use_cache", False)
    given = [Root(path=str(r), scope="extra", rank=i) for i, r in enumerate(roots)]
    return discover(roots=given, **kwargs)  # type: ignore[arg-type]


def codes(catalog: Catalog) -> list[str]:
    return [p.code for p in catalog.problems]


def names(catalog: Catalog) -> list[str]:
    return [s.name for s in catalog.skills]


# --------------------------------------------------------------------------- scopes


def test_default_roots_list_every_scope_in_precedence_order(
    tmp_path: Path, isolated_home: Path
) -> None:
    admin = isolated_home / "admin-skills"
    admin.mkdir()
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    cwd = project / "pkg"
    for folder in (
        project / ".claude" / "skills",
        project / ".opencode" / "skill",
        project / ".gemini" / "skills",
        cwd / ".agents" / "skills",
        cwd / ".opencode" / "skills",
        cwd / ".codex" / "skills",
        cwd / ".github" / "skills",
        cwd / ".cursor" / "skills",
        cwd / ".claude" / "commands",
        isolated_home / ".agents" / "skills",
        isolated_home / ".claude" / "skills",
        isolated_home / ".claude" / "commands",
        isolated_home / ".codex" / "skills",
        isolated_home / ".config" / "opencode" / "skills",
        isolated_home / ".copilot" / "skills",
        isolated_home / ".gemini" / "skills",
        isolated_home / ".cursor" / "skills",
        isolated_home / ".config" / "skillpack" / "skills",
    ):
        folder.mkdir(parents=True)
    extra = tmp_path / "extra"

    roots = default_roots(DiscoveryOptions(extra_roots=[str(extra)]), cwd=str(cwd))

    every = ("codex", "opencode", "gemini", "copilot", "cursor")
    assert [(r.scope, r.path, r.rank, r.kind, r.agents) for r in roots] == [
        ("admin", str(admin), 0, "skills", ()),
        ("repo", str(cwd / ".agents" / "skills"), 0, "skills", every),
        ("repo", str(cwd / ".opencode" / "skills"), 2, "skills", ("opencode",)),
        ("repo", str(cwd / ".codex" / "skills"), 4, "skills", ("codex", "cursor")),
        ("repo", str(cwd / ".github" / "skills"), 5, "skills", ("copilot",)),
        ("repo", str(cwd / ".cursor" / "skills"), 7, "skills", ("cursor",)),
        ("repo", str(cwd / ".claude" / "commands"), 8, "commands", ("claude",)),
        (
            "repo",
            str(project / ".claude" / "skills"),
            10,
            "skills",
            ("claude", "opencode", "copilot", "cursor"),
        ),
        ("repo", str(project / ".opencode" / "skill"), 12, "skills", ("opencode",)),
        ("repo", str(project / ".gemini" / "skills"), 15, "skills", ("gemini",)),
        ("extra", str(extra), 0, "skills", ()),
        ("user", str(isolated_home / ".agents" / "skills"), 0, "skills", every),
        (
            "user",
            str(isolated_home / ".claude" / "skills"),
            1,
            "skills",
            ("claude", "opencode", "cursor"),
        ),
        ("user", str(isolated_home / ".claude" / "commands"), 2, "commands", ("claude",)),
        ("user", str(isolated_home / ".codex" / "skills"), 3, "skills", ("codex", "cursor")),
        (
            "user",
            str(isolated_home / ".config" / "opencode" / "skills"),
            4,
            "skills",
            ("opencode",),
        ),
        ("user", str(isolated_home / ".copilot" / "skills"), 8, "skills", ("copilot",)),
        ("user", str(isolated_home / ".gemini" / "skills"), 9, "skills", ("gemini",)),
        ("user", str(isolated_home / ".cursor" / "skills"), 10, "skills", ("cursor",)),
        ("user", str(isolated_home / ".config" / "skillpack" / "skills"), 11, "skills", ()),
        ("system", system_root_path(), 0, "skills", ()),
    ]
    assert [r.follow_symlinks for r in roots] == [True] * 20 + [False]


def test_folders_off_leaves_a_family_out_of_both_scopes_and_keeps_the_other_ranks(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    for folder in (
        project / ".github" / "skills",
        project / ".gemini" / "skills",
        project / ".cursor" / "skills",
        isolated_home / ".copilot" / "skills",
        isolated_home / ".cursor" / "skills",
    ):
        folder.mkdir(parents=True)
    options = DiscoveryOptions(folders_off=["copilot", "cursor"], include_system=False)

    roots = default_roots(options, cwd=str(project))

    assert [(r.scope, r.path, r.rank) for r in roots if r.scope != "admin"] == [
        ("repo", str(project / ".gemini" / "skills"), 6),
    ]


def test_folders_off_refuses_a_family_it_does_not_know() -> None:
    with pytest.raises(UsageError, match=r"'github', which is no family of folders; use some of"):
        DiscoveryOptions(folders_off=["github"])
    with pytest.raises(UsageError, match="not one; write folders_off=\\['cursor'\\]"):
        DiscoveryOptions(folders_off="cursor")


def test_a_skill_in_each_new_agent_folder_is_found_in_its_scope(
    tmp_path: Path, isolated_home: Path, write_skill: WriteSkill
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    for name, folder in {
        "copilot-repo": project / ".github" / "skills",
        "gemini-repo": project / ".gemini" / "skills",
        "cursor-repo": project / ".cursor" / "skills",
        "copilot-user": isolated_home / ".copilot" / "skills",
        "gemini-user": isolated_home / ".gemini" / "skills",
        "cursor-user": isolated_home / ".cursor" / "skills",
    }.items():
        write_skill(name, base=folder)

    catalog = discover(cwd=str(project), include_system=False, use_cache=False)

    assert {s.name: s.scope for s in catalog.skills} == {
        "copilot-repo": "repo",
        "gemini-repo": "repo",
        "cursor-repo": "repo",
        "copilot-user": "user",
        "gemini-user": "user",
        "cursor-user": "user",
    }


def test_codex_home_moves_the_codex_user_root(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = tmp_path / "codex-home"
    (codex / "skills").mkdir(parents=True)
    (isolated_home / ".codex" / "skills").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(codex))

    roots = default_roots(
        DiscoveryOptions(include_system=False, include_admin=False), cwd=str(tmp_path)
    )

    assert [(r.scope, r.path) for r in roots] == [("user", str(codex / "skills"))]


def test_opencode_user_root_follows_xdg_config_home(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLPACK_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "opencode" / "skills").mkdir(parents=True)

    roots = default_roots(
        DiscoveryOptions(include_system=False, include_admin=False), cwd=str(tmp_path)
    )

    assert str(tmp_path / "xdg" / "opencode" / "skills") in [r.path for r in roots]


def test_every_folder_opencode_reads_skills_from_is_a_user_root(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured = tmp_path / "opencode-config"
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(configured))
    folders = [
        isolated_home / ".config" / "opencode" / "skills",
        isolated_home / ".config" / "opencode" / "skill",
        isolated_home / ".opencode" / "skills",
        isolated_home / ".opencode" / "skill",
        configured / "skills",
        configured / "skill",
    ]
    for folder in folders:
        folder.mkdir(parents=True)

    roots = default_roots(
        DiscoveryOptions(include_system=False, include_admin=False), cwd=str(tmp_path)
    )

    assert [(r.scope, r.path) for r in roots] == [("user", str(f)) for f in folders]
    assert [r.rank for r in roots] == sorted(r.rank for r in roots)


def test_the_skills_paths_of_opencode_json_are_extra_roots(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    cwd = project / "pkg"
    (project / ".git").mkdir(parents=True)
    for folder in ("pkg/shared", "pkg/local", "nested", "elsewhere"):
        (project / folder).mkdir(parents=True)
    (isolated_home / "mine").mkdir()
    (project / "opencode.json").write_text('{"skills": {"paths": ["shared", "gone"]}}')
    (project / ".opencode").mkdir()
    (project / ".opencode" / "opencode.jsonc").write_text(
        '{\n  // relative to cwd, as OpenCode reads it\n  "skills": {"paths": ["local",'
        ' "~/mine", "../nested",],},\n  /* "paths": ["x"] */\n}'
    )
    (cwd / "opencode.json").write_text(
        '{"skills": {"paths": ["' + str(project / "elsewhere") + '"]}}'
    )
    (isolated_home / ".config" / "opencode").mkdir(parents=True)
    (isolated_home / ".config" / "opencode" / "opencode.json").write_text("not json")

    roots = default_roots(DiscoveryOptions(include_system=False, include_admin=False), cwd=str(cwd))

    assert [(r.scope, r.path, r.rank) for r in roots] == [
        ("extra", str(cwd / "shared"), 0),
        ("extra", str(cwd / "local"), 2),
        ("extra", str(isolated_home / "mine"), 3),
        ("extra", str(project / "nested"), 4),
        ("extra", str(project / "elsewhere"), 5),
    ]
    without_project = default_roots(
        DiscoveryOptions(include_repo=False, include_system=False), cwd=str(cwd)
    )
    assert [r.path for r in without_project] == []


def test_default_roots_leave_out_scopes_that_are_switched_off(
    tmp_path: Path, isolated_home: Path
) -> None:
    (isolated_home / "admin-skills").mkdir()
    (isolated_home / ".claude" / "skills").mkdir(parents=True)
    (tmp_path / ".claude" / "skills").mkdir(parents=True)

    roots = default_roots(
        DiscoveryOptions(
            include_admin=False, include_user=False, include_system=False, include_repo=False
        ),
        cwd=str(tmp_path),
    )

    assert roots == ()


def test_repo_skills_dir_is_a_root_only_when_configured(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "skills").mkdir()

    plain = default_roots(
        DiscoveryOptions(include_user=False, include_system=False), cwd=str(tmp_path)
    )
    configured = default_roots(
        DiscoveryOptions(include_user=False, include_system=False, repo_skills_dir=True),
        cwd=str(tmp_path),
    )

    assert [r.path for r in plain] == []
    assert [r.path for r in configured] == [str(tmp_path / "skills")]


def test_home_folder_as_cwd_gives_user_roots_not_repo_roots(isolated_home: Path) -> None:
    (isolated_home / ".claude" / "skills").mkdir(parents=True)

    roots = default_roots(DiscoveryOptions(include_system=False), cwd=str(isolated_home))

    assert [(r.scope, r.path) for r in roots] == [
        ("user", str(isolated_home / ".claude" / "skills"))
    ]


@pytest.mark.parametrize("marker", [".git", ".jj", ".skillpack"])
def test_project_root_is_the_first_ancestor_with_a_marker(tmp_path: Path, marker: str) -> None:
    project = tmp_path / "outer" / "project"
    (project / marker).mkdir(parents=True)
    cwd = project / "a" / "b"
    cwd.mkdir(parents=True)

    assert project_dirs(str(cwd)) == (str(cwd), str(project / "a"), str(project))


def test_without_a_project_marker_only_cwd_is_searched(tmp_path: Path) -> None:
    cwd = tmp_path / "loose" / "folder"
    cwd.mkdir(parents=True)

    assert project_dirs(str(cwd)) == (str(cwd),)


def test_the_environment_overrides_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_skill: WriteSkill
) -> None:
    # An override first, markers as the fallback.
    outer = tmp_path / "mono"
    (outer / "svc" / ".git").mkdir(parents=True)
    cwd = outer / "svc" / "api"
    cwd.mkdir()
    write_skill("shared", base=outer / ".agents" / "skills")
    monkeypatch.setenv("SKILLPACK_PROJECT_ROOT", str(outer))
    assert project_dirs(str(cwd)) == (str(cwd), str(outer / "svc"), str(outer))
    found = discover(cwd=str(cwd), include_user=False, include_system=False, use_cache=False)
    assert [s.name for s in found.skills] == ["shared"]
    monkeypatch.setenv("SKILLPACK_PROJECT_ROOT", str(tmp_path / "elsewhere"))
    assert project_dirs(str(cwd)) == (str(cwd), str(outer / "svc"))  # not above cwd: ignored


def test_repo_skills_above_the_project_root_are_not_found(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("outer/.claude/skills/outside")
    write_skill("outer/project/.claude/skills/inside")
    (tmp_path / "outer" / "project" / ".git").mkdir()
    cwd = tmp_path / "outer" / "project" / "src"
    cwd.mkdir()

    catalog = discover(cwd=str(cwd), include_user=False, include_system=False, use_cache=False)

    assert names(catalog) == ["inside"]
    assert catalog.skills[0].scope == "repo"


def test_nearer_repo_folder_wins_and_shadows_the_outer_one(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    (tmp_path / ".git").mkdir()
    outer = write_skill(".claude/skills/lint")
    inner = write_skill("service/.claude/skills/lint")

    catalog = discover(
        cwd=str(tmp_path / "service"), include_user=False, include_system=False, use_cache=False
    )

    winners = catalog.winners("lint")
    assert [s.dir for s in winners] == [str(inner)]
    shadowed = [s for s in catalog.named("lint") if s.dir == str(outer)]
    assert shadowed[0].shadowed_by == str(inner / "SKILL.md")
    assert codes(catalog) == ["name-shadowed"]


def test_agents_folder_beats_claude_folder_at_the_same_level(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill(".agents/skills/fmt")
    claude = write_skill(".claude/skills/fmt")

    catalog = discover(cwd=str(tmp_path), include_user=False, include_system=False, use_cache=False)

    assert len(catalog.winners("fmt")) == 1
    assert [s.dir for s in catalog.named("fmt") if s.shadowed_by] == [str(claude)]


def test_user_scope_reads_skillpack_home(isolated_home: Path, write_skill: WriteSkill) -> None:
    write_skill("mine", base=isolated_home / ".claude" / "skills")
    write_skill("xdg", base=isolated_home / ".config" / "skillpack" / "skills")

    catalog = discover(include_repo=False, include_system=False, use_cache=False)

    assert [(s.name, s.scope, s.rank) for s in catalog.skills] == [
        ("mine", "user", 1),
        ("xdg", "user", 11),
    ]


def test_admin_scope_reads_skillpack_admin_dir(
    isolated_home: Path, write_skill: WriteSkill
) -> None:
    write_skill("policy", base=isolated_home / "admin-skills")
    write_skill("policy", base=isolated_home / ".agents" / "skills")

    catalog = discover(include_repo=False, include_system=False, use_cache=False)

    assert [(s.scope, s.shadowed_by is None) for s in catalog.named("policy")] == [
        ("admin", True),
        ("user", False),
    ]


def test_system_scope_holds_the_bundled_skills() -> None:
    catalog = discover(include_repo=False, include_user=False, include_admin=False, use_cache=False)

    bundled = sorted(
        p.name for p in Path(system_root_path()).iterdir() if (p / "SKILL.md").is_file()
    )
    assert bundled, "the package ships at least one skill"
    assert sorted(s.dir.rsplit(os.sep, 1)[1] for s in catalog.skills) == bundled
    assert {s.scope for s in catalog.skills} == {"system"}


def test_extra_roots_rank_by_order(tmp_path: Path, write_skill: WriteSkill) -> None:
    first = write_skill("one/dup")
    write_skill("two/dup")

    catalog = discover(
        extra_roots=[str(tmp_path / "one"), str(tmp_path / "two")],
        include_repo=False,
        include_user=False,
        include_system=False,
        use_cache=False,
    )

    assert [(s.rank, s.shadowed_by) for s in catalog.named("dup")] == [
        (0, None),
        (1, str(first / "SKILL.md")),
    ]


def test_missing_extra_root_is_reported(tmp_path: Path) -> None:
    catalog = discover(
        options=DiscoveryOptions(
            extra_roots=[str(tmp_path / "nope")],
            include_repo=False,
            include_user=False,
            include_system=False,
            use_cache=False,
        )
    )

    assert codes(catalog) == ["root-missing"]
    assert "does not exist" in catalog.problems[0].message
    assert catalog.problems[0].path == str(tmp_path / "nope")


def test_root_that_is_a_file_is_reported(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x", encoding="utf-8")

    given = Root(path=str(target), scope="extra")
    catalog = discover(options=DiscoveryOptions(roots=[given], use_cache=False))

    assert codes(catalog) == ["root-missing"]
    assert "is not a folder" in catalog.problems[0].message


@pytest.mark.parametrize("keyword", ["roots", "extra_roots"])
def test_a_root_named_in_a_keyword_that_does_not_exist_is_refused(
    tmp_path: Path, keyword: str
) -> None:
    missing = str(tmp_path / "skilz")
    with pytest.raises(UsageError, match=rf"discover\({keyword}=\[\.\.\.\]\) names .*skilz"):
        discover(**{keyword: [missing]})  # type: ignore[arg-type]


def test_missing_default_roots_are_silent(tmp_path: Path) -> None:
    catalog = discover(cwd=str(tmp_path), include_system=False, use_cache=False)

    assert catalog.skills == () and catalog.problems == ()


# --------------------------------------------------------------------------- walk


def test_skills_at_the_depth_limit_are_found(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("a/b/c")

    catalog = run(tmp_path, max_depth=3)

    assert names(catalog) == ["c"]
    assert codes(catalog) == []


def test_skills_below_the_depth_limit_are_reported_not_silently_lost(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("a/b/c")

    catalog = run(tmp_path, max_depth=2)

    assert names(catalog) == []
    assert codes(catalog) == ["walk-truncated"]
    message = catalog.problems[0].message
    assert str(tmp_path) in message and "depth 2" in message and "max_depth" in message


def test_dir_limit_truncates_the_walk_and_says_how_to_raise_it(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    for index in range(5):
        write_skill(f"s{index}")

    catalog = run(tmp_path, max_dirs=3)

    assert names(catalog) == ["s0", "s1"]  # the root itself is the first folder listed
    assert codes(catalog) == ["walk-truncated"]
    assert "3 folders" in catalog.problems[0].message
    assert "max_dirs" in catalog.problems[0].message


@pytest.mark.parametrize(
    "rel",
    [".hidden/skill", ".git/skill", ".venv/skill", "node_modules/pkg/skill", "__pycache__/skill"],
    ids=["hidden", "git", "dot-venv", "node-modules", "pycache"],
)
def test_hidden_and_noise_folders_are_not_walked(
    tmp_path: Path, write_skill: WriteSkill, rel: str
) -> None:
    write_skill(rel)
    write_skill("visible")

    assert names(run(tmp_path)) == ["visible"]


def test_a_virtualenv_of_any_name_is_not_walked(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("env/lib/site/skill")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")

    assert names(run(tmp_path)) == []


def test_a_hidden_root_is_walked(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(".claude/skills/deploy")

    assert names(run(tmp_path / ".claude" / "skills")) == ["deploy"]


def test_nested_skills_are_found_but_resource_folders_are_reported_not_walked(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    # Codex and OpenCode load a skill inside another skill's scripts/, references/ or
    # assets/ (tests/compat); skillpack does not walk a skill's resources, and says so.
    write_skill("parent")
    write_skill("parent/child")
    for resource in ("scripts", "references", "assets"):
        write_skill(f"parent/{resource}/inner-{resource}")
    write_skill("scripts/top")  # only a skill's own resource folders are skipped
    (tmp_path / "parent" / "references" / "plain-ref").mkdir()

    catalog = run(tmp_path)

    assert names(catalog) == ["child", "parent", "top"]
    skipped = [p for p in catalog.problems if p.code == "folder-skipped"]
    assert sorted(p.path for p in skipped) == [
        str(tmp_path / "parent" / resource) for resource in ("assets", "references", "scripts")
    ]
    assert all(sorted(p.agents) == ["codex", "opencode"] for p in skipped)
    assert "scripts/ folder of a skill" in next(p for p in skipped if "scripts" in p.path).message


def test_leaf_resource_folders_are_probed_alike_with_and_without_the_index(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    # With the index, a resource folder without subfolders is probed by one lstat of
    # its SKILL.md rather than a listing: the answers must be those of a listing.
    write_skill("parent")
    (tmp_path / "parent" / "scripts").mkdir()
    (tmp_path / "parent" / "scripts" / "SKILL.md").write_text("---\nname: x\n---\n")
    (tmp_path / "parent" / "assets").mkdir()
    (tmp_path / "parent" / "assets" / "SKILL.md").symlink_to(tmp_path / "nowhere")
    (tmp_path / "parent" / "references").mkdir()
    (tmp_path / "parent" / "references" / "notes.md").write_text("notes\n")
    expected = [str(tmp_path / "parent" / r) for r in ("assets", "scripts")]

    for use_cache in (False, True, True):  # walked, walked with the index, replayed
        catalog = run(tmp_path, use_cache=use_cache)
        skipped = sorted(p.path for p in catalog.problems if p.code == "folder-skipped")
        assert (names(catalog), skipped) == (["parent"], expected)

    write_skill("parent/references", name="inner")  # into the leaf folder probed empty

    skipped = sorted(p.path for p in run(tmp_path, use_cache=True).problems)
    assert skipped == sorted([*expected, str(tmp_path / "parent" / "references")])


@pytest.mark.parametrize(
    ("root", "folder", "agents"),
    [
        (".agents/skills", "node_modules/pkg", ["codex", "copilot", "opencode"]),
        ("some/folder", "node_modules", ["codex", "copilot", "opencode"]),
        (".agents/skills", ".hidden", ["opencode"]),
        (".claude/skills", ".hidden/deeper", ["opencode"]),
        (".opencode/skills", ".hidden", None),  # OpenCode skips hidden folders there
        ("some/folder", ".hidden", None),
    ],
)
def test_a_skipped_folder_holding_a_skill_the_agents_load_is_reported(
    tmp_path: Path, write_skill: WriteSkill, root: str, folder: str, agents: list[str] | None
) -> None:
    base = tmp_path / root
    write_skill("plain", base=base)
    write_skill(f"outer/{folder}", base=base)  # in the skipped folder or below it
    catalog = run(base)

    assert names(catalog) == ["plain"]
    skipped = [p for p in catalog.problems if p.code == "folder-skipped"]
    if agents is None:
        assert skipped == []
        return
    top = base / "outer" / folder.split("/")[0]
    assert [(p.path, sorted(p.agents)) for p in skipped] == [(str(top), agents)]
    assert str(top) in skipped[0].message
    assert skipped[0].to_dict()["agents"] == dict(skipped[0].agents)


@pytest.mark.parametrize("where", ["node_modules/pkg", "node_modules/@scope/pkg"])
def test_a_skill_added_in_a_skipped_folder_is_reported_by_the_next_cached_run(
    tmp_path: Path, write_skill: WriteSkill, where: str
) -> None:
    base = tmp_path / ".agents" / "skills"
    write_skill("plain", base=base)
    (base / where).mkdir(parents=True)
    assert codes(run(base, use_cache=True)) == []

    write_skill(where, base=base)  # only the innermost folder's times change

    assert codes(run(base, use_cache=True)) == ["folder-skipped"]
    assert codes(run(base, use_cache=True)) == ["folder-skipped"]  # replayed


def test_codex_system_skills_are_left_to_codex(tmp_path: Path, write_skill: WriteSkill) -> None:
    base = tmp_path / ".codex" / "skills"
    write_skill("plain", base=base)
    write_skill(".system/bundled", base=base)

    catalog = run(base)

    assert (names(catalog), catalog.problems) == (["plain"], ())


def test_skipped_folders_without_skills_and_git_or_staging_folders_are_silent(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    base = tmp_path / ".agents" / "skills"
    write_skill("plain", base=base)
    (base / "node_modules" / "pkg").mkdir(parents=True)
    (base / ".cache").mkdir()
    write_skill(".git/hooks-skill", base=base)
    write_skill(".skillpack-txn-1/staged", base=base)

    catalog = run(base)

    assert names(catalog) == ["plain"]
    assert [p.code for p in catalog.problems] == []


def test_skill_file_name_must_be_exact(tmp_path: Path, write_skill: WriteSkill) -> None:
    folder = write_skill("lower")
    (folder / "SKILL.md").rename(folder / "skill.md")
    (tmp_path / "dir-named" / "SKILL.md").mkdir(parents=True)

    assert names(run(tmp_path)) == []


# --------------------------------------------------------------------------- symlinks


def test_a_symlink_loop_terminates_and_is_reported(tmp_path: Path, write_skill: WriteSkill) -> None:
    folder = write_skill("a/looped")
    (folder / "again").symlink_to(tmp_path / "a")
    (tmp_path / "self").symlink_to(tmp_path)

    catalog = run(tmp_path, max_depth=20)

    assert names(catalog) == ["looped"]
    loops = sorted(p.path for p in catalog.problems if p.code == "symlink-loop")
    assert loops == [str(folder / "again"), str(tmp_path / "self")]


def test_a_symlinked_skill_folder_is_followed_and_keyed_by_real_path(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    real = write_skill("store/shared")
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(real)
    (root / "again").symlink_to(real)

    catalog = run(root)

    assert len(catalog) == 1
    skill = catalog.skills[0]
    assert skill.path == str(root / "again" / "SKILL.md")  # first in sorted walk order
    assert skill.real_path == str(real / "SKILL.md")
    assert codes(catalog) == []


def test_the_same_skill_reached_from_two_roots_is_one_skill_of_the_first_root(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    real = write_skill("store/shared")
    (tmp_path / "link-root").mkdir()
    (tmp_path / "link-root" / "shared").symlink_to(real)

    catalog = run(tmp_path / "link-root", tmp_path / "store")

    assert [(s.root, s.real_path) for s in catalog.skills] == [
        (str(tmp_path / "link-root"), str(real / "SKILL.md"))
    ]


def test_a_symlinked_skill_file_is_followed(tmp_path: Path, write_skill: WriteSkill) -> None:
    real = write_skill("store/source")
    folder = tmp_path / "root" / "source"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(real / "SKILL.md")

    catalog = run(tmp_path / "root")

    assert [s.real_path for s in catalog.skills] == [str(real / "SKILL.md")]


def test_system_scope_never_follows_symlinks(tmp_path: Path, write_skill: WriteSkill) -> None:
    real = write_skill("store/elsewhere")
    linked_file = write_skill("store/by-file")
    system = tmp_path / "system"
    write_skill("own", base=system)
    (system / "linked-dir").symlink_to(real)
    (system / "by-file").mkdir()
    (system / "by-file" / "SKILL.md").symlink_to(linked_file / "SKILL.md")

    catalog = discover(
        roots=[Root(path=str(system), scope="system", follow_symlinks=False)], use_cache=False
    )

    assert names(catalog) == ["own"]


# --------------------------------------------------------------------------- plugins


@pytest.mark.parametrize("marker", [".claude-plugin", ".codex-plugin"])
def test_a_plugin_folder_namespaces_its_skills(
    tmp_path: Path, write_skill: WriteSkill, marker: str
) -> None:
    (tmp_path / "plug" / marker).mkdir(parents=True)
    (tmp_path / "plug" / marker / "plugin.json").write_text(
        json.dumps({"name": "myplugin", "version": "1.0.0"}), encoding="utf-8"
    )
    write_skill("plug/skills/foo")
    write_skill("loose")

    catalog = run(tmp_path)

    assert sorted(s.qualified_name for s in catalog.skills) == ["extra:loose", "myplugin:foo"]
    assert catalog.qualified("myplugin:foo")[0].plugin == "myplugin"


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        ("{not json", ["plugin-json-invalid"]),
        ('{"name": 3}', ["plugin-json-invalid"]),
        ('{"version": "1"}', []),
    ],
    ids=["broken-json", "name-not-a-string", "no-name-field"],
)
def test_a_plugin_without_a_usable_name_uses_its_folder_name(
    tmp_path: Path, write_skill: WriteSkill, manifest: str, problem: list[str]
) -> None:
    (tmp_path / "tools-plugin" / ".claude-plugin").mkdir(parents=True)
    (tmp_path / "tools-plugin" / ".claude-plugin" / "plugin.json").write_text(
        manifest, encoding="utf-8"
    )
    write_skill("tools-plugin/skills/foo")

    catalog = run(tmp_path)

    assert [s.qualified_name for s in catalog.skills] == ["tools-plugin:foo"]
    assert codes(catalog) == problem


def test_the_codex_sidecar_reaches_the_skill(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(
        "quiet",
        files={"agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n"},
    )

    (skill,) = run(tmp_path).skills

    assert skill.codex is not None
    assert skill.model_invocable is False


# --------------------------------------------------------------------------- collisions


def test_same_name_in_two_scopes_is_shadowed_not_dropped(
    tmp_path: Path, isolated_home: Path, write_skill: WriteSkill
) -> None:
    user = write_skill("review", base=isolated_home / ".claude" / "skills")
    repo = write_skill(".claude/skills/review")

    catalog = discover(cwd=str(tmp_path), include_system=False, use_cache=False)

    assert [(s.scope, s.shadowed_by) for s in catalog.named("review")] == [
        ("repo", None),
        ("user", str(repo / "SKILL.md")),
    ]
    (problem,) = catalog.problems
    assert (problem.code, problem.path) == ("name-shadowed", str(user / "SKILL.md"))
    assert str(repo / "SKILL.md") in problem.message


def test_same_name_twice_in_one_root_is_ambiguous(tmp_path: Path, write_skill: WriteSkill) -> None:
    one = write_skill("a/helper")
    two = write_skill("b/helper")

    catalog = run(tmp_path)

    assert len(catalog.winners("helper")) == 2
    assert all(s.shadowed_by is None for s in catalog.skills)
    (problem,) = catalog.problems
    assert problem.code == "name-ambiguous"
    assert str(one / "SKILL.md") in problem.message and str(two / "SKILL.md") in problem.message


def test_plugin_skills_in_a_tie_are_named_by_qualified_id(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    for plugin in ("alpha", "beta"):
        (tmp_path / plugin / ".claude-plugin").mkdir(parents=True)
        (tmp_path / plugin / ".claude-plugin" / "plugin.json").write_text(
            json.dumps({"name": plugin}), encoding="utf-8"
        )
        write_skill(f"{plugin}/skills/foo")

    catalog = run(tmp_path)

    # Each plugin is its own namespace, so neither copy shadows the other and
    # discovery warns of nothing; a bare `$foo` names both by qualified id when used.
    assert catalog.problems == ()
    assert all(s.shadowed_by is None for s in catalog.skills)
    (diagnostic,) = resolve_message("$foo", catalog).diagnostics
    assert diagnostic.kind == "ambiguous"
    assert diagnostic.candidates == ("alpha:foo", "beta:foo")


def test_discovery_is_deterministic(tmp_path: Path, write_skill: WriteSkill) -> None:
    for rel in ("z/x", "a/x", "m/y", "m/y/z", "b/plain"):
        write_skill(rel)

    first, second = run(tmp_path), run(tmp_path)

    assert first.skills == second.skills and first.problems == second.problems
    assert [s.path for s in first.skills] == sorted(
        (s.path for s in first.skills), key=lambda p: (Path(p).parent.name, p)
    )


# --------------------------------------------------------------------------- bad input


def test_an_unreadable_file_is_an_error_and_the_rest_loads(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = write_skill("locked")
    write_skill("fine")
    (bad / "SKILL.md").chmod(0)
    if os.access(bad / "SKILL.md", os.R_OK):  # root reads anything: deny it by hand
        real_read = _load._read_skill_md

        def deny(path: str, limit: int) -> tuple[os.stat_result, bytes | None]:
            if path == str(bad / "SKILL.md"):
                raise PermissionError(13, "Permission denied", path)
            return real_read(path, limit)

        monkeypatch.setattr(_load, "_read_skill_md", deny)

    try:
        catalog = run(tmp_path)
    finally:
        (bad / "SKILL.md").chmod(0o644)

    assert names(catalog) == ["fine"]
    (problem,) = catalog.problems
    assert (problem.code, problem.severity, problem.path) == (
        "file-unreadable",
        "error",
        str(bad / "SKILL.md"),
    )
    assert "Permission denied" in problem.message


def test_a_binary_skill_file_is_an_error_and_the_rest_loads(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    folder = write_skill("blob")
    (folder / "SKILL.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    write_skill("fine")

    catalog = run(tmp_path)

    assert names(catalog) == ["fine"]
    assert [(p.severity, p.path) for p in catalog.problems] == [("error", str(folder / "SKILL.md"))]


def test_an_oversized_skill_file_is_reported_without_being_read(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_skill("huge", body="x" * (10 * 1024 * 1024))
    fine = write_skill("fine")
    reads: list[str] = []
    real_read = _load._read_skill_md

    def spy(path: str, limit: int) -> tuple[os.stat_result, bytes | None]:
        st, data = real_read(path, limit)
        if data is not None:
            reads.append(path)
        return st, data

    monkeypatch.setattr(_load, "_read_skill_md", spy)

    catalog = run(tmp_path)

    assert names(catalog) == ["fine"]
    assert [(p.code, p.severity) for p in catalog.problems] == [("file-too-large", "error")]
    assert str(folder / "SKILL.md") not in reads
    assert reads == [str(fine / "SKILL.md")]


def test_a_permission_denied_folder_is_a_warning_and_the_rest_loads(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill("closed/inside")
    write_skill("open")
    closed = tmp_path / "closed"
    closed.chmod(0)
    try:
        if os.access(closed, os.R_OK):  # running as root: deny the listing by hand
            real_scandir = os.scandir

            def deny(path: str) -> object:
                if str(path) == str(closed):
                    raise PermissionError(13, "Permission denied", str(path))
                return real_scandir(path)

            monkeypatch.setattr(os, "scandir", deny)  # the module the walker lists with
        catalog = run(tmp_path)
    finally:
        monkeypatch.undo()
        closed.chmod(0o755)

    assert names(catalog) == ["open"]
    (problem,) = catalog.problems
    assert (problem.code, problem.severity, problem.path) == (
        "dir-unreadable",
        "warning",
        str(closed),
    )


def test_a_broken_symlink_is_ignored(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("fine")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")

    catalog = run(tmp_path)

    assert names(catalog) == ["fine"] and catalog.problems == ()


def test_catalog_orders_skills_by_scope_then_name_then_path() -> None:
    def skill(scope: Scope, name: str, path: str) -> Skill:
        return Skill(name=name, description="x", path=path, dir=os.path.dirname(path), scope=scope)

    given = [
        skill("user", "b", "/u/b/SKILL.md"),
        skill("repo", "z", "/r/z/SKILL.md"),
        skill("user", "a", "/u2/a/SKILL.md"),
        skill("user", "a", "/u1/a/SKILL.md"),
        skill("admin", "m", "/a/m/SKILL.md"),
        skill("repo", "b", "/r/b/SKILL.md"),
    ]
    expected = [
        ("admin", "m", "/a/m/SKILL.md"),
        ("repo", "b", "/r/b/SKILL.md"),
        ("repo", "z", "/r/z/SKILL.md"),
        ("user", "a", "/u1/a/SKILL.md"),
        ("user", "a", "/u2/a/SKILL.md"),
        ("user", "b", "/u/b/SKILL.md"),
    ]
    for skills in (given, given[::-1]):
        ordered = Catalog(skills=tuple(skills)).skills
        assert [(s.scope, s.name, s.path) for s in ordered] == expected
    one_scope = [s for s in given if s.scope == "user"]
    assert [s.path for s in Catalog(skills=tuple(one_scope)).skills] == [
        "/u1/a/SKILL.md",
        "/u2/a/SKILL.md",
        "/u/b/SKILL.md",
    ]


def test_collisions_leave_unique_names_alone_and_mark_repeated_ones(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("one/dup")
    write_skill("one/solo")
    write_skill("two/dup")
    write_skill("two/other")

    catalog = run(tmp_path / "one", tmp_path / "two")

    assert {s.name: s.shadowed_by for s in catalog.skills if s.name != "dup"} == {
        "solo": None,
        "other": None,
    }
    assert [s.shadowed_by is None for s in catalog.named("dup")] == [True, False]
    assert codes(catalog) == ["name-shadowed"]


def test_roots_may_be_given_as_strings_or_paths(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("first/pdf")
    write_skill("second/pdf")
    write_skill("second/docx")
    catalog = discover(
        roots=[str(tmp_path / "first"), tmp_path / "second"], include_user=False, use_cache=False
    )
    assert [(s.name, s.scope, s.rank) for s in catalog.skills] == [
        ("docx", "extra", 1),
        ("pdf", "extra", 0),
        ("pdf", "extra", 1),
    ]
    assert catalog.winners("pdf")[0].path == str(tmp_path / "first" / "pdf" / "SKILL.md")
    assert [r.path for r in catalog.roots] == [str(tmp_path / "first"), str(tmp_path / "second")]


@pytest.mark.parametrize("roots", [pytest.param("skills", id="one-string"), [3]])
def test_roots_of_the_wrong_kind_say_what_to_pass(roots: object) -> None:
    from skillpack._errors import UsageError

    with pytest.raises(UsageError, match=r"discover\(roots=\.\.\.\)"):
        discover(roots=roots, use_cache=False)  # type: ignore[arg-type]


def test_a_skill_naming_a_missing_skill_dependency_says_so(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("base-skill")
    write_skill(
        "builds-on",
        frontmatter="name: builds-on\ndescription: Uses others.\n"
        "dependencies: [base-skill, extra:base-skill, gone-skill]",
    )

    catalog = run(tmp_path)

    [missing] = [p for p in catalog.problems if p.code == "skill-dependency-missing"]
    assert missing.severity == "warning" and missing.field == "dependencies"
    assert missing.path == str(tmp_path / "builds-on" / "SKILL.md")
    assert "'gone-skill'" in missing.message and "'base-skill'" not in missing.message
    assert names(catalog) == ["base-skill", "builds-on"]


def test_turning_opencode_off_drops_its_folders_and_its_skills_paths(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".opencode" / "skills").mkdir(parents=True)
    (project / "more").mkdir()
    (project / "opencode.json").write_text('{"skills": {"paths": ["more"]}}', encoding="utf-8")
    on = default_roots(DiscoveryOptions(include_system=False), cwd=str(project))
    off = default_roots(
        DiscoveryOptions(include_system=False, folders_off=["opencode"]), cwd=str(project)
    )
    assert {r.path for r in on} >= {
        str(project / ".opencode" / "skills"),
        str(project / "more"),
    }
    assert not {r.path for r in off} & {
        str(project / ".opencode" / "skills"),
        str(project / "more"),
    }
