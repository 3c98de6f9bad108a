"""Acceptance conditions of the discovery/search/loading seed (002 §13), via API and CLI.

1. `.agents/skills/**/SKILL.md` from the project root down to cwd is enumerated.
2. `~/.agents/skills/**/SKILL.md` is enumerated as user scope.
3. Same-named skills of equal precedence: `skill_load` by name alone is ambiguous.
4. `skill_search("release")` returns candidates from name/description.
5. `skill_load` returns the SKILL.md body and the base directory.
6. Loading the same skill again does not inject the body twice.
7. The catalog status can be inspected (`Session.inspect(include_skills=True)`).
8. Loaded references survive compaction (`Session.compacted()` re-arms full loads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillpack import Session, SkillTools
from skillpack.cli._app import cli


@pytest.fixture
def project(tmp_path: Path, write_skill: Any, isolated_home: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "packages" / "app"
    cwd.mkdir(parents=True)
    write_skill(
        "release-notes",
        base=repo / ".agents" / "skills",
        description="Draft release notes from merged commits.",
        body="# Release notes\n\nCollect commits since the last tag.\n",
        files={"references/template.md": "## Template\n"},
    )
    write_skill(
        "tools/repo-review",
        base=repo / ".agents" / "skills",
        name="repo-review",
        description="Review a pull request with a risk-first checklist.",
    )
    write_skill(
        "app-local", base=cwd / ".agents" / "skills", description="Conventions of the app package."
    )
    write_skill("a/twin", base=repo / ".agents" / "skills", name="twin", description="First twin.")
    write_skill("b/twin", base=repo / ".agents" / "skills", name="twin", description="Second twin.")
    write_skill(
        "personal",
        base=isolated_home / ".agents" / "skills",
        description="My personal helper for release chores.",
    )
    return cwd


def cli_json(*args: str) -> Any:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_1_and_2_repo_chain_and_user_scope_are_enumerated(project: Path) -> None:
    session = Session.open(cwd=str(project), include_system=False)
    scopes = {s.name: s.scope for s in session.catalog.skills}
    assert scopes == {
        "release-notes": "repo",
        "repo-review": "repo",
        "app-local": "repo",
        "twin": "repo",
        "personal": "user",
    }
    listed = cli_json("list", "--cwd", str(project), "--no-system")
    assert {s["name"]: s["scope"] for s in listed["skills"]} == scopes


def test_3_same_name_load_by_name_is_ambiguous(project: Path) -> None:
    tools = SkillTools(Session.open(cwd=str(project), include_system=False))
    result = tools.skill_load(name="twin")
    assert result["ok"] is False and result["error"]["code"] == "AMBIGUOUS"
    candidates = result["error"]["candidates"]
    assert [Path(c).parent.parent.name for c in sorted(candidates)] == ["a", "b"]
    by_path = tools.skill_load(path=candidates[0])
    assert by_path["ok"], by_path


def test_4_search_release_finds_name_and_description_matches(project: Path) -> None:
    tools = SkillTools(Session.open(cwd=str(project), include_system=False))
    result = tools.skill_search("release")
    names = [r["name"] for r in result["data"]["results"]]
    assert names[0] == "release-notes"
    assert "personal" in names  # matched through its description
    cli = cli_json("search", "release", "--cwd", str(project), "--no-system")
    assert [r["name"] for r in cli["results"]] == names


def test_5_and_6_load_returns_body_and_base_dir_then_a_reminder(project: Path) -> None:
    tools = SkillTools(Session.open(cwd=str(project), include_system=False))
    first = tools.skill_load(name="release-notes")["data"]
    base = str(Path(project).parents[1] / ".agents" / "skills" / "release-notes")
    assert "Collect commits since the last tag." in first["content"]
    assert f"Base directory for this skill: {base}" in first["content"]
    assert "- references/template.md" in first["content"]
    second = tools.skill_load(name="release-notes")["data"]
    assert second["already_loaded"] is True
    assert "Collect commits" not in second["content"]


def test_7_inspect_reports_catalog_status(project: Path) -> None:
    session = Session.open(cwd=str(project), include_system=False)
    session.load(name="release-notes")
    status = session.inspect(include_skills=True)
    assert status["counts"]["skills"] == 6
    assert status["counts"]["in_model_catalog"] == 6
    assert [item["name"] for item in status["loaded"]] == ["release-notes"]
    assert {s["name"] for s in status["skills"]} >= {"release-notes", "personal"}
    assert "skills" not in session.inspect()


def test_8_references_survive_compaction(project: Path) -> None:
    session = Session.open(cwd=str(project), include_system=False)
    session.load(name="release-notes")
    assert session.load(name="release-notes").reminder
    session.compacted()
    again = session.load(name="release-notes")
    assert not again.reminder and "Collect commits" in again.text
    session.compacted(kept=[again.skill.path])
    assert session.load(name="release-notes").reminder
