"""`skillpack eval --model`: trigger queries against a scripted OpenAI-compatible
server and an Anthropic-shaped one on 127.0.0.1, through the real SDKs."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from model_server import Script, serve

from skillpack._errors import UsageError
from skillpack._model import Skill
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._eval_model import (
    EvalAborted,
    ModelSpec,
    api_key,
    model_trigger_runs,
    parse_model,
)
from skillpack.runtime._session import Session
from skillpack.select._evals import TriggerQuery


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n"


FILES = {
    "/s/pdf-forms/SKILL.md": skill_md(
        "pdf-forms", "Fill in PDF forms and extract their fields. Use for fillable PDF forms."
    ),
    "/s/changelog/SKILL.md": skill_md(
        "changelog", "Write the changelog entry for a release from merged pull requests."
    ),
}

FILL = "fill in this PDF form"
NOTES = "write the release notes"
PORT = "which port does PostgreSQL use"
QUERIES = (
    TriggerQuery(query=FILL, should_trigger=True),
    TriggerQuery(query=NOTES, should_trigger=True),
    TriggerQuery(query=PORT, should_trigger=False),
)
ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


@pytest.fixture
def session() -> Iterator[Session]:
    memory = MemorySkills(FILES)
    with Session(memory.catalog(), reader=memory, session_id="s") as opened:
        yield opened


def pdf(session: Session) -> Skill:
    return next(s for s in session.catalog.skills if s.name == "pdf-forms")


def spec(provider: str, url: str, **kwargs: object) -> ModelSpec:
    base = f"{url}/v1" if provider == "openai" else url
    options: dict[str, object] = {"retries": 2, "timeout": 5.0, "workers": 3, **kwargs}
    return ModelSpec(provider=provider, model="scripted", base_url=base, **options)  # type: ignore[arg-type]


def scripted() -> Script:
    return Script(
        answers={
            FILL: ["pdf-forms", "pdf-forms", None],  # 2 of 3 runs
            NOTES: ["changelog", None, "pdf-forms"],  # never pdf-forms first twice
            PORT: [None, "pdf-forms", None],  # 1 of 3: a false trigger under 0.5
        }
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_trigger_rates_over_runs_the_threshold_and_precision_recall(
    session: Session, provider: str
) -> None:
    script = scripted()
    with serve(script) as url:
        [run] = model_trigger_runs(session, [(pdf(session), QUERIES)], spec(provider, url), env=ENV)

    data = run.to_dict()
    rates = {r["query"]: (r["triggers"], r["runs"], r["pass"]) for r in data["results"]}
    assert rates == {FILL: (2, 3, True), NOTES: (1, 3, False), PORT: (1, 3, True)}
    assert data["mode"] == f"{provider}:scripted"
    assert data["summary"]["precision"] == 1.0
    assert data["summary"]["recall"] == 0.5
    notes = next(r for r in data["results"] if r["query"] == NOTES)
    assert notes["stolen_by"] == ["changelog"]
    assert sorted(map(tuple, notes["picked"])) == [(), ("changelog",), ("pdf-forms",)]
    first = script.requests[0]
    tools = [t["function"]["name"] if "function" in t else t["name"] for t in first["tools"]]
    assert tools == ["skill_search", "skill_load", "use_skill", "skill_read_file"]
    system = first["messages"][0]["content"] if provider == "openai" else first["system"]
    assert "pdf-forms" in system and "changelog" in system


def test_a_higher_threshold_fails_a_two_in_three_query(session: Session) -> None:
    with serve(scripted()) as url:
        [run] = model_trigger_runs(
            session,
            [(pdf(session), QUERIES[:1])],
            spec("openai", url, threshold=0.7),
            env=ENV,
        )

    [result] = run.to_dict()["results"]
    assert (result["trigger_rate"], result["pass"]) == (0.6667, False)


@pytest.mark.parametrize("tool", ["use_skill", "skill_read_file"])
def test_use_skill_or_reading_the_skill_md_triggers_too(session: Session, tool: str) -> None:
    script = Script(answers={FILL: ["pdf-forms"]}, tool=tool)
    with serve(script) as url:
        [run] = model_trigger_runs(
            session, [(pdf(session), QUERIES[:1])], spec("anthropic", url, runs=2), env=ENV
        )

    assert run.results[0].triggers == 2


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_search_is_answered_and_the_load_after_it_decides(
    session: Session, provider: str
) -> None:
    script = Script(answers={FILL: ["pdf-forms"]}, search_first={FILL})
    with serve(script) as url:
        [run] = model_trigger_runs(
            session, [(pdf(session), QUERIES[:1])], spec(provider, url, runs=1), env=ENV
        )

    assert run.results[0].triggers == 1
    last = script.requests[1]["messages"][-1]
    if provider == "openai":
        assert last["role"] == "tool" and "pdf-forms" in last["content"]
    else:
        [answer] = last["content"]
        assert answer["type"] == "tool_result" and "pdf-forms" in answer["content"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limits_and_server_errors_are_retried(
    session: Session, provider: str, status: int
) -> None:
    script = Script(answers={FILL: ["pdf-forms"]}, failures={FILL: [status, status]})
    with serve(script) as url:
        [run] = model_trigger_runs(
            session, [(pdf(session), QUERIES[:1])], spec(provider, url, runs=1), env=ENV
        )

    assert (run.results[0].triggers, run.results[0].errors) == (1, 0)
    assert len(script.requests) == 3


def test_a_call_failing_past_its_retries_counts_as_not_triggered_and_says_so(
    session: Session,
) -> None:
    script = Script(answers={FILL: ["pdf-forms"]}, failures={FILL: [429, 429, 429]})
    said: list[str] = []
    with serve(script) as url:
        [run] = model_trigger_runs(
            session,
            [(pdf(session), QUERIES[:1])],
            spec("openai", url, runs=2, retries=1, workers=1),
            env=ENV,
            warn=said.append,
        )

    result = run.to_dict()["results"][0]
    assert (result["triggers"], result["runs"], result["errors"]) == (1, 2, 1)
    assert said == [
        f"openai:scripted: rate limited (429) after 1 retries on {FILL!r}; counted as not triggered"
    ]


def test_a_timeout_counts_as_not_triggered(session: Session) -> None:
    script = Script(answers={FILL: ["pdf-forms"]}, delay={FILL: 1.0})
    said: list[str] = []
    with serve(script) as url:
        [run] = model_trigger_runs(
            session,
            [(pdf(session), QUERIES[:1])],
            spec("anthropic", url, runs=1, retries=0, timeout=0.2),
            env=ENV,
            warn=said.append,
        )

    assert (run.results[0].triggers, run.results[0].errors) == (0, 1)
    assert "no answer within 0.2 s" in said[0]


def test_a_refused_key_stops_the_eval_and_keeps_what_was_done(session: Session) -> None:
    script = Script(status_all=401)
    with serve(script) as url, pytest.raises(EvalAborted) as raised:
        model_trigger_runs(session, [(pdf(session), QUERIES)], spec("openai", url), env=ENV)

    assert "the key was refused (401): check OPENAI_API_KEY" in str(raised.value)
    [run] = raised.value.runs
    assert run.complete is False
    assert len(script.requests) < 9  # it stopped instead of trying every run


def test_runs_done_before_an_abort_are_kept(session: Session) -> None:
    script = Script(answers={FILL: ["pdf-forms"]}, failures={NOTES: [404]})
    with serve(script) as url, pytest.raises(EvalAborted) as raised:
        model_trigger_runs(
            session,
            [(pdf(session), QUERIES[:2])],
            spec("openai", url, runs=1, workers=1),
            env=ENV,
        )

    [run] = raised.value.runs
    assert [(r.query.query, r.triggers) for r in run.results] == [(FILL, 1)]
    assert "no model 'scripted' there (404)" in str(raised.value)


def test_model_specs_and_keys_are_checked_before_anything_runs() -> None:
    assert parse_model("anthropic:claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    for bad in ("gpt-4.1", "gemini:pro", "openai:"):
        with pytest.raises(UsageError, match="PROVIDER:MODEL"):
            parse_model(bad)
    with pytest.raises(UsageError, match="Set ANTHROPIC_API_KEY"):
        api_key("anthropic", {}, base_url=None)
    assert api_key("openai", {}, base_url="http://127.0.0.1:1/v1") == "none"
    assert api_key("openai", ENV, base_url=None) == "sk-test"


def test_a_spec_is_a_frozen_value() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ModelSpec(provider="openai", model="m").model = "n"  # type: ignore[misc]


def test_the_command_runs_a_tree_against_the_server_and_keeps_partial_results(
    write_skill: Any, tmp_path: Path
) -> None:
    import json

    from click.testing import CliRunner

    from skillpack.cli._app import cli

    queries = json.dumps([{"query": FILL, "should_trigger": True}])
    write_skill(
        "pdf-forms",
        base=tmp_path / "skills",
        description="Fill in PDF forms and extract their fields.",
        files={"evals/trigger_eval.json": queries},
    )
    flags = ["--no-user", "--no-system", "--no-cache", "--json", "--runs", "2"]
    out = tmp_path / "out"
    script = Script(answers={FILL: ["pdf-forms"]})
    with serve(script) as url:
        ok = CliRunner().invoke(
            cli,
            [
                "eval",
                str(tmp_path / "skills"),
                "--model",
                "openai:scripted",
                "--base-url",
                f"{url}/v1",
                *flags,
            ],
            env=ENV,
        )
        script.status_all = 401
        refused = CliRunner().invoke(
            cli,
            [
                "eval",
                str(tmp_path / "skills"),
                "--model",
                "openai:scripted",
                "--base-url",
                f"{url}/v1",
                "--out",
                str(out),
                *flags,
            ],
            env=ENV,
        )

    assert ok.exit_code == 0, ok.output
    [evaluation] = json.loads(ok.stdout)["evaluations"]
    assert evaluation["results"][0]["trigger_rate"] == 1.0
    assert "skillpack: eval: 2/2 queries" in ok.stderr
    assert refused.exit_code == 1
    data = json.loads(refused.stdout)
    assert data["ok"] is False and data["error"]["code"] == "EXECUTION_ERROR"
    written = json.loads((out / "pdf-forms" / "triggers.json").read_text("utf-8"))
    assert written["complete"] is False
