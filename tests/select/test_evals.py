"""The eval formats: skill-creator's query files, evals.json and trigger results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from skillpack._errors import UsageError
from skillpack.select._evals import (
    RESULT_FIELDS,
    Graded,
    QueryRun,
    TaskRun,
    TriggerQuery,
    TriggerRun,
    benchmark,
    compare_runs,
    is_trigger_file,
    parse_grading,
    parse_task_evals,
    parse_trigger_queries,
    stats,
    trigger_documents,
)

SCHEMAS = Path(__file__).parent / "schemas"


def schema(name: str) -> Any:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def query_run(text: str, should: bool, triggers: int, runs: int, *picked: str) -> QueryRun:
    return QueryRun(
        query=TriggerQuery(query=text, should_trigger=should),
        triggers=triggers,
        runs=runs,
        picked=tuple((p,) if p else () for p in picked),
    )


def trigger_run(*results: QueryRun, digest: str | None = "sha256:" + "a" * 64) -> TriggerRun:
    return TriggerRun(
        skill_name="commit",
        skill_id="commit",
        skill_path="/skills/commit/SKILL.md",
        description="Commit changes. Use when committing.",
        digest=digest,
        results=results,
        mode="offline",
    )


def test_a_query_array_and_an_evals_object_both_read() -> None:
    array = '[{"query": "commit this", "should_trigger": true}]'
    wrapped = '{"evals": [{"prompt": "what is 2+2", "should_trigger": false}]}'

    assert parse_trigger_queries(array, source="a.json") == (
        TriggerQuery(query="commit this", should_trigger=True),
    )
    assert parse_trigger_queries(wrapped, source="b.json") == (
        TriggerQuery(query="what is 2+2", should_trigger=False),
    )


def test_a_repeated_query_counts_once_with_its_first_answer() -> None:
    text = json.dumps(
        [
            {"query": "commit", "should_trigger": True},
            {"query": "commit", "should_trigger": False},
        ]
    )

    assert parse_trigger_queries(text, source="q.json") == (
        TriggerQuery(query="commit", should_trigger=True),
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[{", "not valid JSON (line 1, column 3)"),
        ('{"queries": []}', "neither a list of queries"),
        ('["commit"]', "item 1 is not an object"),
        ('[{"query": " ", "should_trigger": true}]', "item 1 has no `query` text"),
        ('[{"query": "x", "should_trigger": "yes"}]', "item 1 needs `should_trigger`"),
        ("[]", "it lists no queries"),
    ],
)
def test_a_bad_query_file_says_where_and_how_to_fix(text: str, said: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_trigger_queries(text, source="evals/trigger_eval.json")

    message = str(raised.value)
    assert message.startswith("evals/trigger_eval.json: ")
    assert said in message
    assert '"should_trigger": true' in message


@pytest.mark.parametrize(
    ("path", "is_one"),
    [
        ("evals/trigger_eval.json", True),
        ("evals/triggers.json", True),
        ("trigger-queries.json", True),
        ("evals/eval_queries.json", True),
        ("evals/Trigger_Eval.JSON", True),
        ("evals/evals.json", False),
        ("evals/triggers.toml", False),
        ("references/trigger_eval.json", False),
        ("evals/files/queries.json", False),
    ],
)
def test_trigger_files_are_found_by_name_beside_the_skill_or_in_evals(
    path: str, is_one: bool
) -> None:
    assert is_trigger_file(path) is is_one


EVALS_JSON = {
    "skill_name": "pdf",
    "evals": [
        {
            "id": 1,
            "prompt": "Fill the form in form.pdf",
            "expected_output": "A filled PDF",
            "files": ["evals/files/form.pdf"],
            "expectations": ["The output is a PDF", "Every field is filled"],
        }
    ],
}


def test_an_evals_json_that_fits_skill_creators_schema_reads_whole() -> None:
    jsonschema.validate(EVALS_JSON, schema("evals"))

    tasks = parse_task_evals(json.dumps(EVALS_JSON), source="evals/evals.json")

    assert tasks.skill_name == "pdf"
    [task] = tasks.evals
    assert (task.id, task.files, task.expectations) == (
        1,
        ("evals/files/form.pdf",),
        ("The output is a PDF", "Every field is filled"),
    )


def test_agentskills_assertions_read_as_expectations() -> None:
    text = json.dumps({"evals": [{"id": 2, "prompt": "p", "assertions": ["a"]}]})

    assert parse_task_evals(text, source="e.json").evals[0].expectations == ("a",)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"skill_name": "x"}, "no `evals` list"),
        ({"evals": [{"id": 1}]}, "eval 1 has no `prompt`"),
        ({"evals": [{"id": True, "prompt": "p"}]}, "`id` that is neither"),
        ({"evals": [{"prompt": "p", "files": "a.pdf"}]}, "`files` is not a list"),
        ({"evals": [{"id": 1, "prompt": "p"}, {"id": 1, "prompt": "q"}]}, "share an `id`"),
    ],
)
def test_a_bad_evals_json_says_what(data: Any, said: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_task_evals(json.dumps(data), source="evals/evals.json")

    assert str(raised.value).startswith("evals/evals.json: ")
    assert said in str(raised.value)


def test_a_trigger_result_validates_against_skill_creators_schema_and_ours() -> None:
    run = trigger_run(
        query_run("commit my work", True, 2, 3, "commit", "commit", "pr-writer"),
        query_run("open a PR", False, 0, 3, "pr-writer", "pr-writer", ""),
    )

    document = json.loads(json.dumps(run.to_dict()))

    jsonschema.validate(document, schema("trigger_result"))
    jsonschema.validate(document, schema("skillpack_additions"))
    assert list(document)[:4] == ["skill_name", "description", "results", "summary"]
    assert all(list(r)[: len(RESULT_FIELDS)] == list(RESULT_FIELDS) for r in document["results"])
    assert document["results"][0]["trigger_rate"] == 0.6667


def test_a_result_without_a_required_field_fails_the_schema() -> None:
    document = trigger_run(query_run("commit", True, 1, 1, "commit")).to_dict()
    del document["results"][0]["trigger_rate"]

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, schema("trigger_result"))


def test_pass_follows_the_threshold_both_ways() -> None:
    half = query_run("q", True, 1, 2, "commit", "x")
    under = query_run("q", True, 1, 3, "commit", "x", "x")
    negative_half = query_run("n", False, 1, 2, "commit", "x")

    assert half.passed(0.5) is True
    assert under.passed(0.5) is False
    assert negative_half.passed(0.5) is False
    assert negative_half.passed(0.6) is True


def test_precision_recall_and_f1_count_a_query_as_triggered_at_the_threshold() -> None:
    run = trigger_run(
        query_run("a", True, 1, 1, "commit"),  # tp
        query_run("b", True, 0, 1, "pr-writer"),  # fn
        query_run("c", True, 0, 1, ""),  # fn
        query_run("d", False, 1, 1, "commit"),  # fp
        query_run("e", False, 0, 1, "pr-writer"),  # tn
    )

    summary = run.summary()

    assert (summary["tp"], summary["fp"], summary["fn"], summary["tn"]) == (1, 1, 2, 1)
    assert summary["precision"] == 0.5
    assert summary["recall"] == 0.3333
    assert summary["f1"] == 0.4
    assert (summary["total"], summary["passed"], summary["failed"]) == (5, 2, 3)


def test_precision_is_null_when_nothing_triggered() -> None:
    summary = trigger_run(query_run("a", True, 0, 1, "x")).summary()

    assert (summary["precision"], summary["recall"], summary["f1"]) == (None, 0.0, None)


def test_a_missed_request_names_the_skills_that_took_it_most_often_first() -> None:
    run = trigger_run(query_run("q", True, 1, 4, "pr-writer", "commit", "branch", "pr-writer"))

    [result] = run.to_dict()["results"]

    assert result["stolen_by"] == ["pr-writer", "branch"]
    assert result["picked"] == [["pr-writer"], ["commit"], ["branch"], ["pr-writer"]]


def test_a_passing_or_negative_query_names_no_thief() -> None:
    run = trigger_run(
        query_run("q", True, 2, 3, "commit", "commit", "x"),
        query_run("n", False, 1, 3, "commit", "x", "x"),
    )

    assert [r["stolen_by"] for r in run.to_dict()["results"]] == [[], []]


def test_compare_reports_digests_rates_and_summary_deltas() -> None:
    before = trigger_run(
        query_run("a", True, 0, 1, "x"),
        query_run("gone", False, 0, 1, "x"),
        digest="sha256:" + "a" * 64,
    ).to_dict()
    after = trigger_run(
        query_run("a", True, 1, 1, "commit"),
        query_run("new", False, 0, 1, "x"),
        digest="sha256:" + "b" * 64,
    ).to_dict()

    diff = compare_runs(
        trigger_documents(before, source="a.json"),
        trigger_documents({"evaluations": [after]}, source="b.json"),
    )

    [skill] = diff["skills"]
    assert skill["digest_changed"] is True
    assert skill["description_changed"] is False
    by_query = {q["query"]: q for q in skill["queries"]}
    assert by_query["a"]["before"] == {"trigger_rate": 0.0, "pass": False}
    assert by_query["a"]["after"] == {"trigger_rate": 1.0, "pass": True}
    assert (by_query["gone"]["status"], by_query["new"]["status"]) == ("removed", "added")
    assert skill["summary"]["passed"] == {"before": 1, "after": 2, "delta": 1}
    assert skill["summary"]["recall"] == {"before": 0.0, "after": 1.0, "delta": 1.0}
    assert diff["only_before"] == diff["only_after"] == []


def test_compare_names_skills_only_one_side_has() -> None:
    a = {**trigger_run(query_run("a", True, 1, 1, "commit")).to_dict(), "skill_name": "one"}
    b = {**trigger_run(query_run("a", True, 1, 1, "commit")).to_dict(), "skill_name": "two"}

    diff = compare_runs(trigger_documents(a, source="a"), trigger_documents(b, source="b"))

    assert (diff["skills"], diff["only_before"], diff["only_after"]) == ([], ["one"], ["two"])


def test_a_file_that_is_no_trigger_result_is_refused() -> None:
    with pytest.raises(UsageError, match="no trigger result"):
        trigger_documents({"skill_name": "x", "results": [{"q": 1}]}, source="r.json")


def task_run(config: str, k: int, passed: tuple[bool, ...], seconds: float, tokens: int) -> TaskRun:
    return TaskRun(
        eval_id=1,
        configuration=config,
        run_number=k,
        output="out",
        tokens=tokens,
        executor_seconds=seconds,
        grader_seconds=0.5,
        graded=tuple(Graded(text=f"e{i}", passed=p, evidence="") for i, p in enumerate(passed)),
    )


def test_grading_and_benchmark_validate_against_skill_creators_schemas() -> None:
    runs = [
        task_run("with_skill", 1, (True, True), 2.0, 100),
        task_run("with_skill", 2, (True, False), 4.0, 140),
        task_run("without_skill", 1, (False, False), 1.0, 60),
        task_run("without_skill", 2, (True, False), 1.0, 60),
    ]
    metadata = {
        "skill_name": "s",
        "skill_path": "/s/SKILL.md",
        "executor_model": "openai:m",
        "analyzer_model": "openai:g",
        "timestamp": "2026-12-06T00:00:00Z",
        "evals_run": [1],
        "runs_per_configuration": 2,
    }

    document = benchmark(runs, metadata=metadata, names={1: "eval-1"})

    jsonschema.validate(runs[0].grading(), schema("grading"))
    jsonschema.validate(document, schema("benchmark"))
    with_skill = document["run_summary"]["with_skill"]
    assert with_skill["pass_rate"] == {"mean": 0.75, "stddev": 0.3536, "min": 0.5, "max": 1.0}
    assert with_skill["time_seconds"]["stddev"] == 1.4142  # sample: n - 1
    assert document["run_summary"]["delta"] == {
        "pass_rate": "+0.50",
        "time_seconds": "+2.0",
        "tokens": "+60",
    }


def test_one_value_has_no_spread_and_none_is_all_zeros() -> None:
    assert stats([0.5]) == {"mean": 0.5, "stddev": 0.0, "min": 0.5, "max": 0.5}
    assert stats([]) == {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}


def test_a_grading_reply_is_matched_by_text_then_position_and_a_gap_fails() -> None:
    reply = json.dumps(
        {
            "expectations": [
                {"text": "b", "passed": True, "evidence": "yes"},
                {"text": "B, reworded", "passed": True, "evidence": "pos"},
                {"text": "c, reworded", "passed": True, "evidence": "third"},
            ]
        }
    )

    graded = parse_grading(f"```json\n{reply}\n```", ["a", "b", "c"])

    assert [(g.text, g.passed, g.evidence) for g in graded] == [
        ("a", False, "not graded"),
        ("b", True, "yes"),
        ("c", True, "third"),
    ]
    with pytest.raises(UsageError, match="no `expectations` list"):
        parse_grading('{"ok": true}', ["a"])
