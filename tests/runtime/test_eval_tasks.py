"""`skillpack eval --tasks`: evals.json run with and without the skill against the
scripted servers, graded, in skill-creator's workspace layout."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from model_server import Script, serve

from skillpack._model import Skill
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._eval_model import EvalProviderError, ModelSpec
from skillpack.runtime._eval_tasks import run_task_evals
from skillpack.runtime._session import Session
from skillpack.select._evals import parse_task_evals

EVALS = {
    "skill_name": "haiku",
    "evals": [
        {
            "id": 1,
            "prompt": "Write a poem about rain",
            "expected_output": "A haiku",
            "files": ["evals/files/style.txt"],
            "expectations": ["three lines", "mentions rain"],
        }
    ],
}
FILES = {
    "/s/haiku/SKILL.md": "---\nname: haiku\ndescription: Write haiku. Use for poems.\n---\n"
    "Always answer in three lines.\n",
    "/s/haiku/evals/evals.json": json.dumps(EVALS),
    "/s/haiku/evals/files/style.txt": "calm",
}
PROMPT = "Write a poem about rain\n\nFile evals/files/style.txt:\n```\ncalm\n```"
ENV = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}


def grade(message: str) -> str:
    """Pass "three lines" when the output has three lines; "mentions rain" always."""
    output = message.split("The assistant's output:\n", 1)[1].split("\n\nExpectations:", 1)[0]
    three = len(output.splitlines()) == 3
    return (
        "```json\n"
        + json.dumps(
            {
                "expectations": [
                    {"text": "three lines", "passed": three, "evidence": f"{output!r}"},
                    {"text": "mentions rain", "passed": True, "evidence": "rain"},
                ]
            }
        )
        + "\n```"
    )


@pytest.fixture
def session() -> Iterator[Session]:
    memory = MemorySkills(FILES)
    with Session(memory.catalog(), reader=memory, session_id="s") as opened:
        yield opened


def haiku(session: Session) -> Skill:
    return session.catalog.skills[0]


def spec(provider: str, url: str, runs: int = 2) -> ModelSpec:
    base = f"{url}/v1" if provider == "openai" else url
    return ModelSpec(provider=provider, model="scripted", base_url=base, runs=runs, retries=0)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_tasks_run_with_and_without_the_skill_graded_into_the_workspace(
    session: Session, provider: str, tmp_path: Path
) -> None:
    script = Script(
        texts={
            (PROMPT, True): "rain on the roof\nsoft and calm\nthe night listens",
            (PROMPT, False): "It rains. The end.",
        },
        grade=grade,
    )
    tasks = parse_task_evals(json.dumps(EVALS), source="evals.json")
    with serve(script) as url:
        folder, document = run_task_evals(
            session, haiku(session), tasks, spec(provider, url), spec("openai", url), str(tmp_path)
        )

    assert folder == tmp_path / "haiku-workspace" / "iteration-1"
    metadata = json.loads((folder / "eval-1" / "eval_metadata.json").read_text())
    assert metadata["assertions"] == ["three lines", "mentions rain"]
    run = folder / "eval-1" / "with_skill" / "run-2"
    grading = json.loads((run / "grading.json").read_text())
    assert grading["summary"] == {"passed": 2, "failed": 0, "total": 2, "pass_rate": 1.0}
    assert [e["text"] for e in grading["expectations"]] == ["three lines", "mentions rain"]
    assert (run / "outputs" / "output.md").read_text().startswith("rain on the roof")
    assert json.loads((run / "timing.json").read_text())["total_tokens"] == 15
    without = json.loads(
        (folder / "eval-1" / "without_skill" / "run-1" / "grading.json").read_text()
    )
    assert without["summary"]["pass_rate"] == 0.5
    summary = document["run_summary"]
    assert summary["with_skill"]["pass_rate"] == {
        "mean": 1.0,
        "stddev": 0.0,
        "min": 1.0,
        "max": 1.0,
    }
    assert summary["without_skill"]["pass_rate"]["mean"] == 0.5
    assert summary["delta"]["pass_rate"] == "+0.50"
    assert [(r["configuration"], r["run_number"]) for r in document["runs"]] == [
        ("with_skill", 1),
        ("with_skill", 2),
        ("without_skill", 1),
        ("without_skill", 2),
    ]
    assert json.loads((folder / "benchmark.json").read_text()) == document
    with_system = [r for r in script.requests if "tools" not in r and "Always answer" in str(r)]
    assert len(with_system) == 2


def test_a_second_run_goes_to_the_next_iteration(session: Session, tmp_path: Path) -> None:
    tasks = parse_task_evals(json.dumps(EVALS), source="evals.json")
    with serve(Script(grade=grade)) as url:
        first, _ = run_task_evals(
            session,
            haiku(session),
            tasks,
            spec("openai", url, 1),
            spec("openai", url),
            str(tmp_path),
        )
        second, _ = run_task_evals(
            session,
            haiku(session),
            tasks,
            spec("openai", url, 1),
            spec("openai", url),
            str(tmp_path),
        )

    assert (first.name, second.name) == ("iteration-1", "iteration-2")


def test_an_unreadable_grading_reply_fails_the_expectations_and_says_why(
    session: Session, tmp_path: Path
) -> None:
    tasks = parse_task_evals(json.dumps(EVALS), source="evals.json")
    with serve(Script(grade=lambda _m: "looks good to me")) as url:
        folder, document = run_task_evals(
            session,
            haiku(session),
            tasks,
            spec("openai", url, 1),
            spec("openai", url),
            str(tmp_path),
        )

    [first, _second] = document["runs"]
    assert first["result"]["passed"] == 0 and first["result"]["errors"] == 1
    assert "The grader's reply is not JSON" in first["expectations"][0]["evidence"]


def test_a_refused_key_stops_and_keeps_the_workspace(session: Session, tmp_path: Path) -> None:
    tasks = parse_task_evals(json.dumps(EVALS), source="evals.json")
    with serve(Script(status_all=401)) as url, pytest.raises(EvalProviderError) as raised:
        run_task_evals(
            session, haiku(session), tasks, spec("openai", url), spec("openai", url), str(tmp_path)
        )

    assert "the key was refused (401)" in str(raised.value)
    folder = tmp_path / "haiku-workspace" / "iteration-1"
    benchmark = json.loads((folder / "benchmark.json").read_text())
    assert benchmark["metadata"]["complete"] is False
    assert (folder / "eval-1" / "eval_metadata.json").exists()


def test_the_command_runs_task_evals_of_a_tree(write_skill: Any, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillpack.cli._app import cli

    write_skill(
        "haiku",
        base=tmp_path / "skills",
        description="Write haiku. Use for poems.",
        files={"evals/evals.json": json.dumps(EVALS), "evals/files/style.txt": "calm"},
    )
    out = tmp_path / "out"
    script = Script(texts={(PROMPT, True): "a\nb\nc"}, grade=grade)
    with serve(script) as url:
        args = ["eval", str(tmp_path / "skills"), "--tasks", "--model", "openai:m"]
        args += ["--grader", "openai:g", "--base-url", f"{url}/v1", "--out", str(out)]
        args += ["--runs", "1", "--no-user", "--no-system", "--no-cache"]
        result = CliRunner().invoke(cli, [*args, "--json"], env=ENV)
        text = CliRunner().invoke(cli, args, env=ENV)
        missing = CliRunner().invoke(cli, [*args[:5], "--json", "--no-user", "--no-system"])

    assert result.exit_code == 0, result.output
    [bench] = json.loads(result.stdout)["benchmarks"]
    assert bench["workspace"] == str(out / "haiku-workspace" / "iteration-1")
    assert bench["run_summary"]["delta"]["pass_rate"] == "+0.50"
    assert "haiku  pass rate with the skill 1.00 (sd 0.00), without 0.50" in text.stdout
    assert "iteration-2" in text.stdout
    assert missing.exit_code == 2
    assert "--grader PROVIDER:MODEL" in json.loads(missing.stdout)["error"]["message"]
