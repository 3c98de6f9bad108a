"""Config files: locations, schema, merging, enable state and atomic writes."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from skillpack._errors import SkillIOError, UsageError
from skillpack._model import Skill
from skillpack._paths import project_root, user_config_dir
from skillpack.config._files import (
    add_permission,
    load_config,
    project_config_path,
    set_skill_enabled,
    user_config_path,
)
from skillpack.config._schema import Config, ConfigLayer, merge_layers, parse_config
from skillpack.config._toml_writer import dumps_toml
from skillpack.runtime._permissions import PermissionGate
from skillpack.select._rules import Decision, PermissionRules


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_at(folder: Path, name: str | None = None, **kwargs: Any) -> Skill:
    return Skill(
        name=name or folder.name,
        description="A test skill.",
        path=str(folder / "SKILL.md"),
        dir=str(folder),
        real_path=str(folder.resolve() / "SKILL.md"),
        **kwargs,
    )


# --- locations ----------------------------------------------------------------------


def test_user_config_lives_under_skillpack_home(isolated_home: Path) -> None:
    assert user_config_dir() == isolated_home / ".config" / "skillpack"
    assert user_config_path() == isolated_home / ".config" / "skillpack" / "config.toml"


def test_user_config_follows_xdg_without_skillpack_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SKILLPACK_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert user_config_dir() == tmp_path / "xdg" / "skillpack"


def test_user_config_falls_back_to_home_dot_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SKILLPACK_HOME")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_config_path() == tmp_path / ".config" / "skillpack" / "config.toml"


@pytest.mark.parametrize(
    ("marker", "is_dir"),
    [
        pytest.param(".git", True, id="git-dir"),
        pytest.param(".git", False, id="git-file-worktree"),
        pytest.param(".jj", True, id="jj"),
        pytest.param(".skillpack", True, id="skillpack"),
    ],
)
def test_project_root_is_the_first_ancestor_with_a_marker(
    tmp_path: Path, marker: str, is_dir: bool
) -> None:
    root = tmp_path / "repo"
    cwd = root / "a" / "b"
    cwd.mkdir(parents=True)
    if is_dir:
        (root / marker).mkdir()
    else:
        (root / marker).write_text("gitdir: elsewhere\n", encoding="utf-8")
    assert project_root(cwd) == root.resolve()
    assert project_config_path(str(cwd)) == root.resolve() / ".skillpack" / "config.toml"


def test_project_root_is_the_nearest_marker(project: Path) -> None:
    inner = project / "src" / "deep"
    (project / "src" / ".jj").mkdir()
    assert project_root(inner) == (project / "src").resolve()


def test_project_root_is_cwd_when_no_marker(tmp_path: Path) -> None:
    cwd = tmp_path / "loose" / "dir"
    cwd.mkdir(parents=True)
    assert project_root(cwd) == cwd.resolve()


# --- schema -------------------------------------------------------------------------

FULL = """
multi_mention = "all"
roots = ["~/mine", "rel/skills", "/abs/skills"]
repo_skills_dir = true
[skills]
disabled = ["pdf", "acme:tool", "./vendor/x/SKILL.md"]
enabled = ["docx"]
[budget]
context_window_fraction = 0.05
chars = 8000
[discovery]
max_depth = 3
max_dirs = 100
folders_off = ["copilot", "cursor"]
[permissions]
allow = ["safe-*"]
deny = ["evil", "~/untrusted/*"]
ask = ["*"]
"""


def test_every_schema_key_is_read(tmp_path: Path, isolated_home: Path) -> None:
    base = tmp_path / "base"
    layer, problems = parse_config(FULL, path="/x/config.toml", base=base)
    assert problems == ()
    config = merge_layers([layer])
    assert config.multi_mention == "all"
    assert config.roots == (
        str(isolated_home / "mine"),
        str(base / "rel" / "skills"),
        "/abs/skills",
    )
    assert config.repo_skills_dir is True
    assert config.disabled == ("pdf", "acme:tool", str(base / "vendor" / "x"))
    assert config.enabled == ("docx",)
    assert (config.budget_fraction, config.budget_chars) == (0.05, 8000)
    assert (config.max_depth, config.max_dirs) == (3, 100)
    assert config.folders_off == ("copilot", "cursor")
    assert config.permissions.allow == ("safe-*",)
    assert config.permissions.deny == ("evil", str(isolated_home / "untrusted" / "*"))
    assert config.permissions.ask == ("*",)
    assert config.permissions.where("deny", "evil") == "/x/config.toml"
    assert config.sources == ("/x/config.toml",)


def test_empty_config_gives_the_defaults() -> None:
    layer, problems = parse_config("", path="c.toml", base="/")
    assert problems == ()
    config = merge_layers([layer])
    assert config == Config(sources=("c.toml",))
    assert (config.multi_mention, config.budget_fraction, config.budget_chars) == (
        "choose-one",
        0.02,
        16000,
    )
    assert (config.max_depth, config.max_dirs, config.repo_skills_dir) == (6, 2000, False)


TYPE_ERRORS = [
    pytest.param(
        'multi_mention = "some"', "multi_mention", '"choose-one" or "all"', 1, id="mm-value"
    ),
    pytest.param("multi_mention = 1", "multi_mention", '"choose-one" or "all"', 1, id="mm-type"),
    pytest.param('roots = "x"', "roots", "an array of strings", 1, id="roots-string"),
    pytest.param("roots = [1]", "roots", "an array of strings", 1, id="roots-ints"),
    pytest.param('repo_skills_dir = "yes"', "repo_skills_dir", "a boolean", 1, id="bool"),
    pytest.param("skills = 3", "skills", "a table", 1, id="skills-not-table"),
    pytest.param(
        '[skills]\ndisabled = "pdf"', "skills.disabled", "an array of strings", 2, id="disabled"
    ),
    pytest.param(
        "[skills]\nenabled = [true]", "skills.enabled", "an array of strings", 2, id="enabled"
    ),
    pytest.param(
        '[budget]\ncontext_window_fraction = "2%"',
        "budget.context_window_fraction",
        "a number greater than 0",
        2,
        id="fraction-type",
    ),
    pytest.param(
        "[budget]\ncontext_window_fraction = 2",
        "budget.context_window_fraction",
        "at most 1",
        2,
        id="fraction-range",
    ),
    pytest.param(
        "[budget]\nchars = 1.5", "budget.chars", "an integer of at least 1", 2, id="chars-float"
    ),
    pytest.param(
        "[budget]\nchars = 0", "budget.chars", "an integer of at least 1", 2, id="chars-zero"
    ),
    pytest.param("[budget]\nchars = true", "budget.chars", "an integer", 2, id="chars-bool"),
    pytest.param(
        "[discovery]\nmax_depth = -1", "discovery.max_depth", "at least 0", 2, id="depth-negative"
    ),
    pytest.param(
        '[discovery]\n\n"max_dirs" = "many"',
        "discovery.max_dirs",
        "at least 1",
        3,
        id="dirs-quoted-key",
    ),
    pytest.param(
        '[discovery]\nfolders_off = ["github"]',
        "discovery.folders_off",
        "an array of folder families, from agents, claude, opencode, codex, copilot, gemini",
        2,
        id="folders-off-unknown",
    ),
    pytest.param(
        '[permissions]\nallow = "pdf"', "permissions.allow", "an array of strings", 2, id="allow"
    ),
    pytest.param(
        "[permissions]\ndeny = [[1]]", "permissions.deny", "an array of strings", 2, id="deny"
    ),
    pytest.param("permissions = []", "permissions", "a table", 1, id="permissions-array"),
]


@pytest.mark.parametrize(("text", "key", "expected", "line"), TYPE_ERRORS)
def test_wrong_types_are_errors_naming_file_key_and_type(
    text: str, key: str, expected: str, line: int
) -> None:
    layer, problems = parse_config(text, path="/p/config.toml", base="/p")
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.code, problem.severity, problem.field, problem.line) == (
        "config-value-invalid",
        "error",
        key,
        line,
    )
    assert "/p/config.toml" in problem.message
    assert f"`{key}`" in problem.message
    assert expected in problem.message
    assert merge_layers([layer]) == Config(sources=("/p/config.toml",))


def test_a_wrong_key_does_not_spoil_its_neighbours() -> None:
    layer, problems = parse_config(
        '[budget]\nchars = "lots"\ncontext_window_fraction = 0.1\n', path="c", base="/"
    )
    assert [p.field for p in problems] == ["budget.chars"]
    config = merge_layers([layer])
    assert (config.budget_chars, config.budget_fraction) == (16000, 0.1)


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        pytest.param("colour = 1", "colour", 1, id="top-level"),
        pytest.param("[skills]\n\ndisabld = []", "skills.disabld", 3, id="in-table"),
        pytest.param("[theme]\nx = 1", "theme", None, id="unknown-table"),
    ],
)
def test_unknown_keys_are_warnings(text: str, key: str, line: int | None) -> None:
    _, problems = parse_config(text, path="/c.toml", base="/")
    assert [(p.code, p.severity, p.field) for p in problems] == [
        ("config-key-unknown", "warning", key)
    ]
    assert problems[0].line == line
    assert "/c.toml" in problems[0].message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        pytest.param("a = [1,\n", 1, id="end-of-document"),
        pytest.param("roots = []\n[skills\n", 2, id="bad-header"),
        pytest.param('x = 1\ny = "unterminated\n', 2, id="bad-string"),
    ],
)
def test_broken_toml_is_one_error_with_file_and_line(text: str, line: int) -> None:
    layer, problems = parse_config(text, path="/p/config.toml", base="/p")
    assert layer.values == {}
    [problem] = problems
    assert (problem.code, problem.severity, problem.line) == ("config-invalid", "error", line)
    assert "/p/config.toml" in problem.message
    assert f"line {line}" in problem.message


def test_broken_project_file_leaves_the_user_config_in_force(project: Path) -> None:
    write(user_config_path(), 'multi_mention = "all"\n')
    bad = write(project / ".skillpack" / "config.toml", "[budget\nchars = 1\n")
    config, problems = load_config(cwd=str(project / "src"))
    assert config.multi_mention == "all"
    assert [(p.code, p.path) for p in problems] == [("config-invalid", str(bad))]


def test_non_utf8_file_is_reported(project: Path) -> None:
    path = project / ".skillpack" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(b"roots = ['\xff']\n")
    config, problems = load_config(cwd=str(project))
    assert config == Config()
    assert [p.code for p in problems] == ["config-invalid"]
    assert "UTF-8" in problems[0].message


def test_byte_order_mark_is_tolerated(project: Path) -> None:
    write(project / ".skillpack" / "config.toml", '\ufeffmulti_mention = "all"\n')
    config, problems = load_config(cwd=str(project))
    assert (config.multi_mention, problems) == ("all", ())


# --- merging ------------------------------------------------------------------------


def test_project_wins_scalars_and_its_roots_come_first(project: Path, isolated_home: Path) -> None:
    write(
        user_config_path(),
        'multi_mention = "all"\nroots = ["user-roots"]\n[budget]\nchars = 100\n',
    )
    write(
        project / ".skillpack" / "config.toml",
        'multi_mention = "choose-one"\nroots = ["proj-roots"]\n[discovery]\nmax_depth = 2\n',
    )
    config, problems = load_config(cwd=str(project / "src" / "deep"))
    assert problems == ()
    assert config.multi_mention == "choose-one"
    assert config.budget_chars == 100
    assert config.max_depth == 2
    assert config.roots == (
        str(project.resolve() / "proj-roots"),
        str(isolated_home / "user-roots"),
    )
    assert config.sources == (
        str(user_config_path()),
        str(project.resolve() / ".skillpack" / "config.toml"),
    )


def test_layers_can_be_skipped(project: Path) -> None:
    write(user_config_path(), 'multi_mention = "all"\n')
    write(project / ".skillpack" / "config.toml", "repo_skills_dir = true\n")
    assert load_config(cwd=str(project), user=False)[0].multi_mention == "choose-one"
    assert load_config(cwd=str(project), project=False)[0].repo_skills_dir is False


def layer(text: str, path: str) -> ConfigLayer:
    parsed, problems = parse_config(text, path=path, base="/base")
    assert problems == ()
    return parsed


@pytest.mark.parametrize(
    ("user", "project", "disabled", "enabled"),
    [
        pytest.param(
            'disabled = ["a", "b"]', 'enabled = ["a"]', ("b",), ("a",), id="project-enables"
        ),
        pytest.param('enabled = ["a"]', 'disabled = ["a"]', ("a",), (), id="project-disables"),
        pytest.param('disabled = ["a"]', 'disabled = ["a", "c"]', ("a", "c"), (), id="union"),
        pytest.param("", 'disabled = ["a"]\nenabled = ["b"]', ("a",), ("b",), id="project-only"),
    ],
)
def test_enable_state_merges_by_layer(
    user: str, project: str, disabled: tuple[str, ...], enabled: tuple[str, ...]
) -> None:
    config = merge_layers(
        [layer(f"[skills]\n{user}", "user.toml"), layer(f"[skills]\n{project}", "p.toml")]
    )
    assert (config.disabled, config.enabled) == (disabled, enabled)


def test_permission_lists_concatenate_with_their_origins() -> None:
    config = merge_layers(
        [
            layer('[permissions]\nallow = ["a"]\nask = ["*"]', "user.toml"),
            layer('[permissions]\nallow = ["b"]\ndeny = ["c"]', "p.toml"),
        ]
    )
    rules = config.permissions
    assert (rules.allow, rules.deny, rules.ask) == (("a", "b"), ("c",), ("*",))
    assert rules.where("allow", "a") == "user.toml"
    assert rules.where("deny", "c") == "p.toml"
    assert "p.toml" in rules.explain(Skill(name="c", description="d", path="/c/SKILL.md", dir="/c"))


def test_mcp_servers_merge_by_name_the_project_winning() -> None:
    config = merge_layers(
        [
            layer(
                '[[mcp_servers]]\nname = "github"\nurl = "https://user"\n'
                '[[mcp_servers]]\nname = "notes"\ncommand = "notes-mcp"',
                "user.toml",
            ),
            layer('[[mcp_servers]]\nname = "github"\nurl = "https://project"', "p.toml"),
        ]
    )
    assert [(s["name"], s.get("url")) for s in config.mcp_servers] == [
        ("github", "https://project"),
        ("notes", None),
    ]
    assert config.to_dict()["mcp_servers"][1] == {"name": "notes", "command": "notes-mcp"}


@pytest.mark.parametrize(
    "text",
    ['mcp_servers = "github"', '[[mcp_servers]]\nurl = "https://x"', "mcp_servers = [1]"],
)
def test_a_bad_mcp_servers_value_is_a_problem(text: str) -> None:
    parsed, problems = parse_config(text, path="/c.toml", base="/")
    assert "mcp_servers" not in parsed.values
    assert [p.code for p in problems] == ["config-value-invalid"]
    assert "each with a `name` string" in problems[0].message


# --- enable state -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "enabled"),
    [
        pytest.param("pdf", False, id="name"),
        # `<scope>:<name>` names only skills outside plugins.
        pytest.param("user:pdf", True, id="scope-id-spares-a-plugin-skill"),
        pytest.param("acme:pdf", False, id="plugin-qualified"),
        pytest.param("{dir}", False, id="folder"),
        pytest.param("{dir}/SKILL.md", False, id="skill-md"),
        pytest.param("{real}", False, id="real-folder"),
        pytest.param("{dir}/../pdf", False, id="unnormalized-path"),
        pytest.param("pdf-tools", True, id="other-name"),
        pytest.param("repo:pdf", True, id="other-scope"),
        pytest.param("{dir}-old", True, id="other-path"),
    ],
)
def test_is_enabled_matches_names_and_paths(tmp_path: Path, entry: str, enabled: bool) -> None:
    real = tmp_path / "real" / "pdf"
    real.mkdir(parents=True)
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "pdf"
    link.symlink_to(real, target_is_directory=True)
    skill = skill_at(link, scope="user", plugin="acme")
    text = entry.format(dir=link, real=real)
    config = merge_layers([layer(dumps_toml({"skills": {"disabled": [text]}}), "u")])
    assert config.is_enabled(skill) is enabled


def test_symlinked_entry_matches_a_skill_found_by_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real" / "pdf"
    real.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(dumps_toml({"skills": {"disabled": [str(link)]}}))
    config, problems = load_config(cwd=str(tmp_path))
    assert problems == ()
    assert config.is_enabled(skill_at(real.resolve())) is False
    # The value itself does no I/O: built directly, it is told the alias.
    assert Config(disabled=(str(link),)).is_enabled(skill_at(real.resolve())) is True
    aliased = Config(disabled=(str(link),), path_aliases={str(link): str(real.resolve())})
    assert aliased.is_enabled(skill_at(real.resolve())) is False


def test_enabled_entry_in_another_form_overrides_disabled(tmp_path: Path) -> None:
    folder = tmp_path / "pdf"
    folder.mkdir()
    config = Config(disabled=("pdf",), enabled=(str(folder),))
    assert config.is_enabled(skill_at(folder)) is True


def test_relative_path_entry_in_project_file_resolves_against_the_root(project: Path) -> None:
    folder = project / ".claude" / "skills" / "pdf"
    folder.mkdir(parents=True)
    write(project / ".skillpack" / "config.toml", '[skills]\ndisabled = [".claude/skills/pdf"]\n')
    config, _ = load_config(cwd=str(project / "src"))
    assert config.is_enabled(skill_at(folder)) is False


# --- writes -------------------------------------------------------------------------


def read_toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_disable_then_enable_round_trips_in_the_user_config() -> None:
    skill = Skill(name="pdf", description="d", path="/s/pdf/SKILL.md", dir="/s/pdf")
    path = set_skill_enabled("pdf", False)
    assert path == user_config_path()
    assert read_toml(path) == {"skills": {"disabled": ["pdf"]}}
    assert load_config(project=False)[0].is_enabled(skill) is False
    set_skill_enabled("pdf", True)
    assert read_toml(path) == {"skills": {"disabled": []}}
    assert load_config(project=False)[0].is_enabled(skill) is True


def test_enabling_a_skill_that_is_not_disabled_writes_nothing() -> None:
    path = set_skill_enabled("pdf", True)
    assert not path.exists()


def test_repeating_a_write_does_not_rewrite_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    path = set_skill_enabled("pdf", False)
    add_permission("pdf*", "deny")
    before = path.read_bytes()
    replaced: list[str] = []
    real_replace = os.replace

    def counting_replace(src: str, dst: str) -> None:
        replaced.append(dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", counting_replace)
    set_skill_enabled("pdf", False)
    add_permission("pdf*", "deny")
    assert replaced == []
    assert path.read_bytes() == before


def test_project_can_re_enable_what_the_user_disabled(project: Path) -> None:
    skill = Skill(name="pdf", description="d", path="/s/pdf/SKILL.md", dir="/s/pdf")
    set_skill_enabled("pdf", False)
    path = set_skill_enabled("pdf", True, scope="project", cwd=str(project / "src"))
    assert path == project.resolve() / ".skillpack" / "config.toml"
    assert read_toml(path) == {"skills": {"enabled": ["pdf"]}}
    assert load_config(cwd=str(project))[0].is_enabled(skill) is True
    set_skill_enabled("pdf", False, scope="project", cwd=str(project))
    assert read_toml(path) == {"skills": {"enabled": [], "disabled": ["pdf"]}}
    assert load_config(cwd=str(project))[0].is_enabled(skill) is False


def test_project_enable_of_a_skill_the_user_never_disabled_writes_nothing(
    project: Path,
) -> None:
    path = set_skill_enabled("pdf", True, scope="project", cwd=str(project))
    assert not path.exists()


def test_a_path_is_stored_absolute_and_matched_in_any_spelling(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "pdf"
    folder.mkdir(parents=True)
    path = set_skill_enabled("skills/pdf/SKILL.md", False, cwd=str(tmp_path))
    assert read_toml(path) == {"skills": {"disabled": [str(folder)]}}
    set_skill_enabled(str(folder) + "/", True, cwd="/")
    assert read_toml(path) == {"skills": {"disabled": []}}


KEPT = """\
colour = "blue"   # unknown, kept
multi_mention = "all"
[skills]
disabled = ["old"]
note = "it's kept"
[extra.nested]
when = 1979-05-27T07:32:00Z
quote = "a \\"b\\" \\\\ c"
[[plugins]]
name = "one"
[[plugins]]
name = "two"
"""


def test_writes_keep_every_other_key(project: Path) -> None:
    path = write(project / ".skillpack" / "config.toml", KEPT)
    before = tomllib.loads(KEPT)
    set_skill_enabled("new", False, scope="project", cwd=str(project))
    add_permission("x*", "ask", scope="project", cwd=str(project))
    after = read_toml(path)
    before["skills"]["disabled"].append("new")
    before["permissions"] = {"ask": ["x*"]}
    assert after == before


def test_a_broken_file_is_not_overwritten(project: Path) -> None:
    broken = "[skills\ndisabled = [\n"
    path = write(project / ".skillpack" / "config.toml", broken)
    with pytest.raises(UsageError, match=r"config\.toml is not valid TOML.*left unchanged"):
        set_skill_enabled("pdf", False, scope="project", cwd=str(project))
    with pytest.raises(UsageError, match="not valid TOML"):
        add_permission("pdf", "deny", scope="project", cwd=str(project))
    assert path.read_text(encoding="utf-8") == broken


@pytest.mark.parametrize(
    ("text", "key"),
    [
        pytest.param("skills = 1\n", "`skills`", id="skills-scalar"),
        pytest.param('[skills]\ndisabled = "pdf"\n', "`skills.disabled`", id="disabled-string"),
        pytest.param("[skills]\nenabled = [1]\n", "`skills.enabled`", id="enabled-ints"),
    ],
)
def test_a_wrong_typed_key_is_not_overwritten(text: str, key: str) -> None:
    path = write(user_config_path(), text)
    with pytest.raises(UsageError, match=key):
        set_skill_enabled("pdf", False)
    assert path.read_text(encoding="utf-8") == text


def test_a_failed_replace_leaves_the_old_file_and_no_temp_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = set_skill_enabled("old", False)
    before = path.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(SkillIOError, match="old file is unchanged"):
        set_skill_enabled("new", False)
    assert path.read_bytes() == before
    # The lock file that serializes writers stays (deleting it would be a race).
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.toml", "config.toml.lock"]


def test_a_write_creates_missing_directories_and_keeps_the_file_mode() -> None:
    path = add_permission("pdf", "allow")
    assert path.parent.is_dir()
    assert read_toml(path) == {"permissions": {"allow": ["pdf"]}}
    path.chmod(0o600)
    add_permission("docx", "allow")
    assert path.stat().st_mode & 0o777 == 0o600


def test_add_permission_moves_a_glob_between_lists() -> None:
    add_permission("pdf", "allow")
    add_permission("pdf", "deny")
    path = add_permission("other", "ask")
    assert read_toml(path) == {"permissions": {"allow": [], "deny": ["pdf"], "ask": ["other"]}}
    config, _ = load_config(project=False)
    assert config.permissions.deny == ("pdf",)


@pytest.mark.parametrize(
    ("glob", "decision"),
    [pytest.param(" ", "deny", id="empty-glob"), pytest.param("pdf", "maybe", id="bad-decision")],
)
def test_add_permission_rejects_bad_arguments(glob: str, decision: Any) -> None:
    with pytest.raises(UsageError):
        add_permission(glob, decision)


def test_an_always_answer_is_persisted_through_the_gate(project: Path) -> None:
    def remember(glob: str, decision: Decision) -> None:
        add_permission(glob, decision, scope="project", cwd=str(project))

    gate = PermissionGate(
        PermissionRules(ask=("*",)), ask=lambda skill, action: "always", remember=remember
    )
    skill = Skill(name="pdf", description="d", path="/s/pdf/SKILL.md", dir="/s/pdf", scope="repo")
    assert gate.check(skill) is True
    config, _ = load_config(cwd=str(project))
    assert config.permissions.allow == ("repo:pdf",)
    assert PermissionGate(config.permissions.merged(PermissionRules(ask=("*",)))).check(skill)
