"""`skillpack eval`: trigger queries in skill-creator's format, run offline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillpack.cli._app import cli

FLAGS = ("--no-user", "--no-system", "--no-cache")


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["eval", *args, *FLAGS], catch_exceptions=False)
    assert result.exit_code == code, (result.exit_code, result.output)
    return result


def queries(*pairs: tuple[str, bool]) -> str:
    return json.dumps([{"query": q, "should_trigger": s} for q, s in pairs])


@pytest.fixture
def skills(write_skill: Any, tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        "pdf-forms",
        base=root,
        description="Fill in PDF forms and extract their fields. Use for fillable PDF forms.",
        files={
            "evals/trigger_eval.json": queries(
                ("fill in the fields of this PDF form", True),
                ("write the changelog entry for the release", False),
            )
        },
    )
    write_skill(
        "changelog",
        base=root,
        description="Write the changelog entry for a release from merged pull requests.",
        files={
            "eval_queries.json": queries(
                ("write the changelog entry for the release", True),
                ("fill in the fields of this PDF form", True),
            )
        },
    )
    write_skill("no-queries", base=root, description="Bake bread. Use when baking.")
    return root


def test_a_tree_runs_every_skill_with_its_own_query_files(skills: Path) -> None:
    result = run(str(skills), "--json")

    data = json.loads(result.stdout)
    by_name = {e["skill_name"]: e for e in data["evaluations"]}
    assert sorted(by_name) == ["changelog", "pdf-forms"]
    assert by_name["pdf-forms"]["summary"]["passed"] == 2
    missed = by_name["changelog"]["results"][1]
    assert (missed["pass"], missed["stolen_by"]) == (False, ["pdf-forms"])
    assert by_name["changelog"]["summary"]["recall"] == 0.5
    assert data["summary"] == {"skills": 2, "queries": 4, "passed": 3, "failed": 1}
    assert [s["name"] for s in data["skipped"]] == ["no-queries"]
    assert data["ok"] is True
    assert "skillpack: eval: 4/4 queries" in result.stderr


def test_fail_under_fails_ci_on_the_skill_under_the_bar(skills: Path) -> None:
    data = json.loads(run(str(skills), "--json", "--fail-under", "0.9", code=1).stdout)

    assert data["ok"] is False
    assert data["error"]["code"] == "EVAL_FAILED"
    assert "changelog (0.67)" in data["error"]["message"]


def test_fail_under_on_the_pass_rate_in_text(skills: Path) -> None:
    result = run(str(skills), "--fail-under", "0.5", "--metric", "pass-rate")

    assert "changelog  offline, 2 queries: 1 pass, 1 fail" in result.stdout
    assert (
        '  MISS   "fill in the fields of this PDF form" (rate 0.00; taken by pdf-forms)'
        in result.stdout
    )
    assert "skipped no-queries" in result.stdout


def test_a_name_with_a_query_file_and_out_writes_skill_creators_json(
    skills: Path, tmp_path: Path
) -> None:
    file = tmp_path / "q.json"
    file.write_text(queries(("write the changelog entry for the release", True)), "utf-8")
    out = tmp_path / "out"

    run("changelog", "--root", str(skills), "--queries", str(file), "--out", str(out))

    written = json.loads((out / "changelog" / "triggers.json").read_text("utf-8"))
    assert list(written)[:4] == ["skill_name", "description", "results", "summary"]
    assert written["summary"]["total"] == 1


def test_a_query_file_for_a_tree_of_skills_is_refused(skills: Path, tmp_path: Path) -> None:
    file = tmp_path / "q.json"
    file.write_text(queries(("x", True)), "utf-8")

    result = run(str(skills), "--queries", str(file), "--json", code=2)

    assert "--queries FILE is for one skill" in json.loads(result.stdout)["error"]["message"]


def test_no_target_and_no_compare_is_a_usage_error() -> None:
    result = run("--json", code=2)

    assert "Name a skill" in json.loads(result.stdout)["error"]["message"]


def test_a_tree_without_query_files_says_how_to_write_one(write_skill: Any, tmp_path: Path) -> None:
    write_skill("bread", base=tmp_path / "t", description="Bake bread. Use when baking.")

    result = run(str(tmp_path / "t"), "--json", code=2)

    assert "evals/trigger_eval.json" in json.loads(result.stdout)["error"]["message"]


def test_compare_shows_what_changed_between_two_versions(skills: Path, tmp_path: Path) -> None:
    before = tmp_path / "before.json"
    before.write_text(run(str(skills), "--json").stdout, "utf-8")
    skill_md = skills / "changelog" / "SKILL.md"
    skill_md.write_text(
        "---\nname: changelog\ndescription: Summarise merged pull requests for a team "
        "newsletter.\n---\nSteps.\n",
        "utf-8",
    )
    after = tmp_path / "after.json"
    after.write_text(run(str(skills), "--json").stdout, "utf-8")

    data = json.loads(run("--compare", str(before), str(after), "--json").stdout)
    text = run("--compare", str(before), str(after)).stdout

    changelog = next(s for s in data["skills"] if s["skill_name"] == "changelog")
    assert changelog["digest_changed"] and changelog["description_changed"]
    assert changelog["summary"]["recall"] == {"before": 0.5, "after": 0.0, "delta": -0.5}
    assert "changelog: SKILL.md changed, description changed" in text
    assert "  recall: 0.5 -> 0.0 (-0.5)" in text
    assert '"write the changelog entry for the release": 1.0 pass -> 0.0 fail' in text
    pdf = next(s for s in data["skills"] if s["skill_name"] == "pdf-forms")
    assert pdf["digest_changed"] is False


def test_compare_refuses_a_file_that_is_no_result(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}', "utf-8")

    result = run("--compare", str(bad), str(bad), "--json", code=2)

    assert "no trigger result" in json.loads(result.stdout)["error"]["message"]


def test_a_terminal_gets_a_bar_on_stderr_and_ci_gets_plain_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from skillpack.cli import _eval_cmds

    with _eval_cmds._progress(3, each=True) as tick:
        for done in range(1, 4):
            tick(done, 3, "q")
    plain = capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with _eval_cmds._progress(2) as tick:
        tick(1, 2, "q")
        tick(2, 2, "q")

    assert plain.splitlines() == [f"skillpack: eval: {n}/3 queries" for n in (1, 2, 3)]
    assert "skillpack: eval:" not in capsys.readouterr().err
