"""`skillpack triggers`: listed requests from the frontmatter and evals/triggers.toml."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import REAL_SKILLS
from skillpack.cli._app import cli
from skillpack.cli._output import safe_text

FLAGS = ("--no-user", "--no-system", "--no-cache")

FILLER = ("tax", "chess", "yoga", "poetry", "knitting", "astronomy", "baking", "sailing")


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["triggers", *args, *FLAGS], catch_exceptions=False)
    assert result.exit_code == code, (result.exit_code, result.output)
    return result


@pytest.fixture
def skills(write_skill: Any, tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        "deploy-app",
        base=root,
        frontmatter="""
            name: deploy-app
            description: >-
              Deploy the web app to production servers with zero downtime.
              Use when shipping a build.
            metadata:
              triggers:
                - deploy the web app with zero downtime
        """,
        files={"evals/triggers.toml": 'triggers = ["write the changelog for the release"]\n'},
    )
    write_skill(
        "release-notes",
        base=root,
        description="Write release notes and a changelog entry from merged pull requests. "
        "Use when tagging a release.",
        files={"evals/triggers.toml": 'triggers = ["write the changelog for the release"]\n'},
    )
    for topic in FILLER:
        write_skill(
            f"{topic}-helper",
            base=root,
            description=f"Answer questions about {topic} in plain words.",
        )
    return root


def test_a_request_that_picks_another_skill_exits_1_and_names_it(skills: Path) -> None:
    target = str(skills / "deploy-app")
    data = json.loads(run(target, "--root", str(skills), "--json", code=1).stdout)

    assert data["ok"] is False
    [skill] = data["skills"]
    assert skill["name"] == "deploy-app"
    by_source = {r["source"]: r for r in skill["requests"]}
    assert by_source["metadata.triggers"]["outcome"] == "picked"
    other = by_source["evals/triggers.toml"]
    assert other["outcome"] == "other"
    assert other["picked"]["name"] == "release-notes"
    assert other["terms"] == ["write", "changelog", "release"]


def test_a_skill_whose_requests_pick_it_passes(skills: Path) -> None:
    data = json.loads(run("release-notes", "--root", str(skills), "--json").stdout)

    assert data["ok"] is True
    assert [s["name"] for s in data["skills"]] == ["release-notes"]
    assert data["summary"]["picked"] == 1


def test_a_folder_checks_every_skill_under_it(skills: Path) -> None:
    result = run(str(skills), code=1)

    assert result.stdout.startswith(
        "10 skills checked, 3 listed requests: 2 pick their skill, "
        "1 pick another skill, 0 pick nothing;"
    )
    assert '  FAIL  "write the changelog for the release" picks release-notes' in result.stdout
    assert "lint  description-no-when" in result.stdout  # the filler skills never say when


def test_an_unknown_name_is_an_error(skills: Path) -> None:
    result = CliRunner().invoke(cli, ["triggers", "nope", "--root", str(skills), *FLAGS])

    assert result.exit_code == 1
    assert "No skill named 'nope'" in result.stderr


def test_a_folder_without_skills_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["triggers", str(tmp_path / "empty"), *FLAGS])

    assert result.exit_code == 1
    assert "No skill under" in result.stderr


def test_skill_text_cannot_reach_the_terminal_raw() -> None:
    # The report writes every skill-provided text through `safe_text`.
    assert safe_text("ok\x1b[2J\u202eevil\n") == "ok\\x1b[2J\\u202eevil\\n"


@pytest.mark.corpus
def test_the_real_corpus_reports_competing_pairs_with_shared_words() -> None:
    roots = [REAL_SKILLS / p for p in ("openai__skills/skills/.curated", "expo__skills/.claude")]
    args = [str(REAL_SKILLS), *(arg for r in roots for arg in ("--root", str(r))), "--json"]
    result = CliRunner().invoke(cli, ["triggers", *args, *FLAGS], catch_exceptions=False)
    data = json.loads(result.stdout)

    # Some authors list keywords ("component", "hooks") that other skills hold too.
    assert result.exit_code == 1 and data["summary"]["other"] > 0
    assert data["summary"]["skills"] > 300 and data["summary"]["requests"] > 100
    assert len(data["pairs"]) > 20
    for pair in data["pairs"]:
        a, b = pair["skills"]
        assert a["path"] != b["path"]
        assert all(p.startswith(str(REAL_SKILLS)) for p in (a["path"], b["path"]))
    # Most pairs share words of their name or description; the others meet in bodies.
    assert sum(1 for pair in data["pairs"] if pair["terms"]) > len(data["pairs"]) / 2
