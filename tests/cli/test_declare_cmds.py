"""CLI: `deps`, `new`, `load --allow-shell`, and what `list`/`show` say about declarations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillpack.cli._app import cli

SIDECAR = (
    "dependencies:\n  tools:\n"
    "    - {type: env_var, value: CLI_DEMO_TOKEN, description: The token}\n"
    "    - {type: mcp, value: github, url: 'https://x.example/mcp'}\n"
    "    - {type: cli, value: gh}\n"
    "permissions:\n  network: {enabled: true, allowed_domains: [api.example.com]}\n"
    "  file_system: {write: [./out]}\n"
)


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    return result


@pytest.fixture
def root(write_skill: Any, tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    write_skill(
        "needy",
        base=base,
        frontmatter="name: needy\ndescription: Needs things. Use in tests.\nhooks:\n"
        "  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        "        - {type: command, command: ./check.sh, once: true}\n",
        body="Branch: !`echo main`\nNope: !`touch ran`\n",
        files={"agents/openai.yaml": SIDECAR},
    )
    write_skill("plain", base=base)
    return base


def scope_args(root: Path) -> list[str]:
    return ["--root", str(root), "--no-user", "--no-system", "--cwd", str(root)]


def test_deps_json_lists_every_dependency_and_its_state(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLI_DEMO_TOKEN", raising=False)
    data = json.loads(run("deps", "needy", *scope_args(root), "--json").stdout)
    assert [(d["name"], d["state"]) for d in data["env_vars"]] == [("CLI_DEMO_TOKEN", "missing")]
    [server] = data["mcp_servers"]
    assert (server["name"], server["state"]) == ("github", "missing")
    assert server["add"].startswith('[[mcp_servers]]\nname = "github"')
    assert data["other"] == [{"type": "cli", "value": "gh"}]
    assert data["permissions"]["write"] == ["./out"]
    assert data["missing"] == [
        {"type": "env_var", "name": "CLI_DEMO_TOKEN"},
        {"type": "mcp", "name": "github"},
    ]
    monkeypatch.setenv("CLI_DEMO_TOKEN", "set")
    again = json.loads(run("deps", "needy", *scope_args(root), "--json").stdout)
    assert again["env_vars"][0]["state"] == "present"
    assert again["env_vars"][0]["source"] == "environment"
    assert "set" not in json.dumps(again)  # states, never values


def test_deps_counts_the_configured_mcp_servers(root: Path) -> None:
    (root / ".skillpack").mkdir()
    (root / ".skillpack" / "config.toml").write_text(
        # Loopback, a port nothing listens on: `list` connects to it and fails at once.
        '[[mcp_servers]]\nname = "github"\nurl = "http://127.0.0.1:9/mcp"\n',
        encoding="utf-8",
    )
    data = json.loads(run("deps", "needy", *scope_args(root), "--json").stdout)
    assert (data["mcp_servers"][0]["state"], data["mcp_servers"][0]["source"]) == (
        "present",
        "config",
    )
    listed = json.loads(run("list", *scope_args(root), "--json").stdout)
    [needy] = [s for s in listed["skills"] if s["name"] == "needy"]
    assert {"type": "mcp", "name": "github"} not in needy["missing_dependencies"]


def test_deps_text_says_what_to_add(root: Path) -> None:
    out = run("deps", "needy", *scope_args(root)).stdout
    assert "CLI_DEMO_TOKEN" in out and "missing" in out
    assert "MCP server 'github' (https://x.example/mcp) is not available" in out
    assert "permissions requested (the host decides; never applied by skillpack)" in out
    assert "declares no dependencies" in run("deps", "plain", *scope_args(root)).stdout


def test_list_flags_missing_dependencies(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLI_DEMO_TOKEN", raising=False)
    data = json.loads(run("list", *scope_args(root), "--json").stdout)
    by_name = {s["name"]: s for s in data["skills"]}
    assert by_name["needy"]["missing_dependencies"] == [
        {"type": "env_var", "name": "CLI_DEMO_TOKEN"},
        {"type": "mcp", "name": "github"},
    ]
    assert by_name["plain"]["missing_dependencies"] == []
    assert "missing-deps" in run("list", *scope_args(root)).stdout


def test_show_shows_permissions_hooks_and_commands(root: Path) -> None:
    data = json.loads(run("show", "needy", *scope_args(root), "--json").stdout)
    assert data["skill"]["missing_dependencies"][0]["name"] == "CLI_DEMO_TOKEN"
    assert data["dependencies"]["permissions"]["allowed_domains"] == ["api.example.com"]
    assert data["skill"]["codex"]["permissions"]["network"] is True
    assert data["hooks"] == [
        {
            "event": "PreToolUse",
            "matcher": "Bash",
            "type": "command",
            "command": "./check.sh",
            "timeout": None,
            "once": True,
        }
    ]
    assert [c["command"] for c in data["shell_commands"]] == ["echo main", "touch ran"]
    text = run("show", "needy", *scope_args(root)).stdout
    for expected in (
        "permissions",
        "network: on",
        "writes: ./out",
        "PreToolUse[Bash]",
        "run only under a host shell policy",
    ):
        assert expected in text


def test_load_runs_nothing_without_allow_shell(root: Path) -> None:
    out = run("load", "needy", *scope_args(root)).stdout
    assert "Branch: !`echo main`" in out
    assert not (root / "needy" / "ran").exists()


def test_load_allow_shell_runs_only_what_the_patterns_allow(root: Path) -> None:
    result = run("load", "needy", *scope_args(root), "--allow-shell", "echo *")
    assert "Branch: main" in result.stdout
    assert "[shell command not run: touch ran" in result.stdout
    assert "line 2: refused: touch ran" in result.stderr
    assert not (root / "needy" / "ran").exists()
    data = json.loads(
        run("load", "needy", *scope_args(root), "--allow-shell", "echo *", "--json").stdout
    )
    assert [(c["command"], c["status"]) for c in data["commands"]] == [
        ("echo main", "ok"),
        ("touch ran", "refused"),
    ]


def test_load_rejects_a_bad_pattern_and_a_lone_shell_flag(root: Path) -> None:
    bad = run("load", "needy", *scope_args(root), "--allow-shell", "re:(", code=2)
    assert "not a valid regular expression" in bad.stderr
    lone = run("load", "needy", *scope_args(root), "--shell", code=2)
    assert "--shell needs at least one --allow-shell" in lone.stderr


def test_new_writes_a_template_that_passes_strict_validation(
    isolated_home: Path, tmp_path: Path
) -> None:
    data = json.loads(run("new", "team-notes", "--cwd", str(tmp_path), "--json").stdout)
    path = isolated_home / ".agents" / "skills" / "team-notes" / "SKILL.md"
    assert data["path"] == str(path) and data["in_catalog"] is True
    assert data["digest"].startswith("sha256:")
    check = json.loads(run("validate", "--strict", str(path.parent), "--json").stdout)
    assert check["results"][0]["valid"] is True
    again = run("new", "team-notes", "--cwd", str(tmp_path), code=2)
    assert "A skill already exists at" in again.stderr


def test_new_project_goes_to_the_project_root(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    out = run("new", "repo-rules", "--project", "--cwd", str(project / "src")).stdout
    assert f"created {project / '.agents' / 'skills' / 'repo-rules' / 'SKILL.md'}" in out


@pytest.mark.parametrize("name", ["../escape", "a/b", "Bad", "x" * 65])
def test_new_refuses_a_bad_name(name: str, isolated_home: Path, tmp_path: Path) -> None:
    result = run("new", name, "--cwd", str(tmp_path), code=2)
    assert "skillpack:" in result.stderr
    assert not (isolated_home / ".agents").exists()
