"""The CLI as a user meets it: JSON errors everywhere, enable/disable results, roots, denials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillpack._model import Skill
from skillpack.cli._app import COMMANDS, cli
from skillpack.cli._catalog_cmds import skill_summaries_json
from skillpack.runtime._summary import skill_summary


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def skills(write_skill: Any, tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill("pdf-forms", base=root, description="Fill PDF forms. Use for PDFs.")
    write_skill("broken", base=root, text="no frontmatter here\n")
    return root


@pytest.fixture
def project(tmp_path: Path, write_skill: Any) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    write_skill("lint", base=root / ".claude" / "skills")
    return root


# -- --json errors, every command ---------------------------------------------------

FAILING: dict[str, tuple[str, ...]] = {
    "list": ("--cwd", "/no/such/folder"),
    "validate": ("{broken}",),
    "show": ("no-such-skill",),
    "resolve": ("$x", "--cwd", "/no/such/folder"),
    "render": ("--context-window", "1000", "--budget-chars", "10"),
    "load": ("no-such-skill",),
    "enable": ("no-such-skill",),
    "disable": ("no-such-skill",),
    "search": ("   ",),
    "triggers": ("no-such-skill",),
    "eval": ("no-such-skill",),
    "deps": ("no-such-skill",),
    "new": ("Not A Valid Name!",),
    "context": ("--context-window", "1000", "--budget-chars", "10"),
    "serve": ("--transport", "http", "--port", "70000"),
    "mcp": ("--transport", "http", "--token-file", "/no/such/file"),
    "install": ("./no/such/folder", "--cwd", "/"),
    "update": ("no-such-skill", "--cwd", "/"),
    "remove": ("no-such-skill", "--cwd", "/"),
    "doctor": ("--cwd", "/no/such/folder"),
    "publish": ("{broken}", "--out", "{broken}"),
    "audit": ("no-such-skill", "--cwd", "/"),
    "ui": ("--pick",),  # the test runner is no terminal
}
"""A failing input per command; a command missing here still gets the generic case."""


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", ["specific", "unknown option"])
def test_every_command_fails_with_a_json_error_on_stdout(
    command: str, case: str, skills: Path
) -> None:
    if case == "specific":
        if command not in FAILING:
            pytest.skip(f"no specific failing input listed for `{command}`")
        args = [a.format(broken=skills / "broken") for a in FAILING[command]]
        if "--cwd" not in args and command not in ("validate", "publish"):
            args += ["--root", str(skills), "--no-user"]
    else:
        args = ["--no-such-option"]
    result = invoke(command, *args, "--json")

    assert result.exit_code != 0, result.output
    document = json.loads(result.stdout)
    error = document["error"]
    assert isinstance(error["code"], str) and error["code"].isupper()
    assert isinstance(error["message"], str) and error["message"]


def test_json_error_codes_name_the_failure(skills: Path) -> None:
    missing = invoke("show", "pdf-form", "--root", str(skills), "--json")
    assert json.loads(missing.stdout)["error"]["code"] == "NOT_FOUND"
    assert missing.exit_code == 1
    bad_cwd = invoke("list", "--cwd", "/no/such/folder", "--json")
    assert json.loads(bad_cwd.stdout)["error"]["code"] == "INVALID_PARAM"
    assert bad_cwd.exit_code == 2
    invalid = invoke("validate", str(skills / "broken"), "--json")
    data = json.loads(invalid.stdout)
    assert data["error"]["code"] == "INVALID_SKILL" and data["results"][0]["valid"] is False


def test_without_json_errors_stay_on_stderr(skills: Path) -> None:
    result = invoke("show", "nope", "--root", str(skills))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "No skill named 'nope'" in result.stderr


def test_a_cwd_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    result = invoke("list", "--cwd", str(tmp_path / "missing"))
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


# -- enable / disable report the resulting state ------------------------------------


def state(project: Path, *args: str) -> Any:
    result = invoke(*args, "--cwd", str(project), "--json")
    return result.exit_code, json.loads(result.stdout)


def test_enable_after_a_project_disable_says_the_project_decides(project: Path) -> None:
    code, off = state(project, "disable", "lint", "--project")
    project_file = project / ".skillpack" / "config.toml"
    assert code == 0
    assert off["enabled"] is False and off["decided_by"] == str(project_file)

    code, result = state(project, "enable", "lint")

    assert code == 1
    error = result["error"]
    assert error["code"] == "DECIDED_ELSEWHERE"
    assert error["enabled"] is False and error["decided_by"] == str(project_file)
    assert "--project" in error["message"]
    code, on = state(project, "enable", "lint", "--project")
    assert code == 0 and on["enabled"] is True


def test_a_project_disable_under_a_user_enable_says_the_user_file_decides(
    project: Path, isolated_home: Path
) -> None:
    user_file = isolated_home / ".config" / "skillpack" / "config.toml"
    user_file.parent.mkdir(parents=True)
    # A qualified entry is another entry than the bare name: the project's `disabled`
    # does not drop it, and an `enabled` entry naming the skill wins.
    user_file.write_text('[skills]\nenabled = ["repo:lint"]\n', encoding="utf-8")

    code, result = state(project, "disable", "lint", "--project")

    assert code == 1
    assert result["error"]["decided_by"] == str(user_file)
    assert result["error"]["enabled"] is True


def test_enable_and_disable_report_enabled_and_who_decides(project: Path) -> None:
    code, off = state(project, "disable", "lint")
    assert code == 0 and off["enabled"] is False
    assert off["decided_by"] == off["config"]
    code, on = state(project, "enable", "lint")
    assert code == 0 and on["enabled"] is True
    text = invoke("disable", "lint", "--cwd", str(project))
    assert text.exit_code == 0 and text.stdout.startswith("disabled repo:lint")


def test_text_enable_that_cannot_take_effect_exits_1_on_stderr(project: Path) -> None:
    invoke("disable", "lint", "--project", "--cwd", str(project))
    result = invoke("enable", "lint", "--cwd", str(project))
    assert result.exit_code == 1
    assert "still disabled" in result.stderr and result.stdout == ""


# -- list shows the roots; list and show mark denied skills ---------------------------


def test_text_list_shows_the_roots_it_searched(project: Path) -> None:
    (project / ".claude" / "commands").mkdir()
    result = invoke("list", "--cwd", str(project), "--no-system")
    assert result.exit_code == 0
    assert "searched 2 roots" in result.stdout
    assert str(project / ".claude" / "skills") in result.stdout
    assert f"{project / '.claude' / 'commands'} (commands) [also read by claude]" in result.stdout
    assert (
        f"{project / '.claude' / 'skills'} [also read by claude, opencode, copilot, cursor]"
        in result.stdout
    )


def test_list_json_names_the_agents_that_read_each_root(project: Path) -> None:
    (project / ".github" / "skills").mkdir(parents=True)
    result = invoke("list", "--cwd", str(project), "--no-system", "--json")
    roots = {root["path"]: root for root in json.loads(result.stdout)["roots"]}
    assert roots[str(project / ".github" / "skills")] == {
        "path": str(project / ".github" / "skills"),
        "scope": "repo",
        "kind": "skills",
        "agents": ["copilot"],
    }


def test_list_and_show_mark_a_denied_skill(project: Path) -> None:
    config = project / ".skillpack" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\ndeny = ["lint"]\n', encoding="utf-8")

    listed = json.loads(invoke("list", "--cwd", str(project), "--json").stdout)
    [lint] = [s for s in listed["skills"] if s["name"] == "lint"]
    assert lint["permission"] == "deny"
    text = invoke("list", "--cwd", str(project), "--no-system").stdout
    assert "denied" in text
    shown = json.loads(invoke("show", "lint", "--cwd", str(project), "--json").stdout)
    assert shown["skill"]["permission"] == "deny"
    assert "denied by permission rule" in invoke("show", "lint", "--cwd", str(project)).stdout


@pytest.mark.parametrize("decision", ["allow", "ask", "deny"])
def test_skill_summaries_json_with_permissions_is_json_dumps(decision: str) -> None:
    skill = Skill(name="a", description="A.", path="/r/a/SKILL.md", dir="/r/a")
    expected = json.dumps([skill_summary(skill, enabled=True, permission=decision)])
    assert skill_summaries_json([skill], permission=lambda s: decision) == expected


def test_show_prints_when_to_use_version_dependencies_and_paths(project: Path) -> None:
    folder = project / ".claude" / "skills" / "sql-review"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: sql-review\ndescription: Review SQL.\nwhen_to_use: On migrations.\n"
        'version: "2.1"\ndependencies: [lint, gone-skill]\npaths: ["**/*.sql"]\n---\nBody\n',
        encoding="utf-8",
    )
    result = invoke("show", "sql-review", "--cwd", str(project), "--no-system")
    assert result.exit_code == 0, result.stderr
    for label, value in (
        ("when to use", "On migrations."),
        ("version", "2.1"),
        ("depends on", "lint, gone-skill"),
        ("paths", "**/*.sql"),
    ):
        assert any(label in line and value in line for line in result.stdout.splitlines()), label
    assert "skill-dependency-missing" in result.stdout + result.stderr
    data = json.loads(
        invoke("show", "sql-review", "--cwd", str(project), "--no-system", "--json").stdout
    )
    assert (data["skill"]["version"], data["skill"]["dependencies"]) == (
        "2.1",
        ["lint", "gone-skill"],
    )
