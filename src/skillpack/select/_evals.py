"""Skill evals in the formats skill authors already use (pure): Anthropic's
skill-creator (`skills/skill-creator` in `anthropics/skills`) and agentskills.io.

* Trigger queries: a JSON array `[{"query", "should_trigger"}, ...]`, or
  `{"evals": [{"prompt", "should_trigger"}, ...]}` (`parse_trigger_queries`).
* Task evals: `evals/evals.json`, `{"skill_name", "evals": [{"id", "prompt",
  "expected_output", "files", "expectations"}]}` (`parse_task_evals`).
* Where they sit in a skill folder (`is_trigger_file`, `TASK_EVALS_FILE`).
* A trigger run's result (`TriggerRun.to_dict`): skill-creator's fields exactly as
  it names them (`skill_name`, `description`, `results[{query, should_trigger,
  trigger_rate, triggers, runs, pass}]`, `summary{total, passed, failed}`), so its
  own tools read it, with skillpack's additions beside them (precision, recall and
  F1 in `summary`; the skills picked per query; the skill's digest).
* What changed between two runs (`compare_runs`).

The runners that fill a `TriggerRun` (offline through the session's suggestions,
or against a model) live in `runtime/_eval.py`.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import UsageError

TASK_EVALS_FILE = "evals/evals.json"
"""A skill's task evals, relative to its folder (skill-creator's place for them)."""

TRIGGER_FILE_PATTERNS = ("trigger*.json", "*queries*.json")
"""Names of trigger query files, in the skill's folder or its `evals/` folder:
`trigger_eval.json`, `triggers.json`, `trigger-queries.json`, `eval_queries.json`.
skill-creator names no place for them (its scripts take `--eval-set FILE`); these
are the names its docs and the agentskills.io pages use in their examples."""

DEFAULT_THRESHOLD = 0.5
"""A query triggers when its trigger rate reaches this (skill-creator's default)."""

DEFAULT_RUNS = 3
"""Runs per query against a model (skill-creator's `--runs-per-query`)."""

RESULT_FIELDS = ("query", "should_trigger", "trigger_rate", "triggers", "runs", "pass")
"""skill-creator's fields of one query's result, in its order."""


# -- reading --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class TriggerQuery:
    """One request and whether it should pick the skill."""

    query: str
    should_trigger: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskEval:
    """One task of `evals/evals.json`."""

    id: int | str
    prompt: str
    expected_output: str = ""
    files: tuple[str, ...] = ()
    """Input files, relative to the skill's folder."""
    expectations: tuple[str, ...] = ()
    """What a good output does, each graded passed or not."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskEvals:
    """A skill's `evals/evals.json`."""

    skill_name: str
    evals: tuple[TaskEval, ...]


def is_trigger_file(relpath: str) -> bool:
    """Whether `relpath` (relative to a skill's folder, `/`-separated) names a
    trigger query file: a `TRIGGER_FILE_PATTERNS` name in the folder itself or in
    `evals/`."""
    parts = relpath.replace("\\", "/").split("/")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "evals"):
        return False
    name = parts[-1].lower()
    if name == "evals.json":
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in TRIGGER_FILE_PATTERNS)


def _bad(source: str, why: str, fix: str) -> UsageError:
    return UsageError(f"{source}: {why}. {fix}")


_QUERY_FIX = (
    'Write a JSON array such as [{"query": "a request", "should_trigger": true}], '
    'or {"evals": [{"prompt": "a request", "should_trigger": false}]}.'
)


def _load(text: str, source: str, fix: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(source, f"not valid JSON (line {exc.lineno}, column {exc.colno})", fix) from exc


def parse_trigger_queries(text: str, *, source: str) -> tuple[TriggerQuery, ...]:
    """The queries of a trigger query file, duplicates (same text) merged as
    skill-creator merges them: the first one's `should_trigger` is kept.

    Args:
        text: The file's text.
        source: Where it came from, for messages.

    Raises:
        UsageError: the file is not one of the two shapes; the message says where.
    """
    data = _load(text, source, _QUERY_FIX)
    key = "query"
    if isinstance(data, dict) and isinstance(data.get("evals"), list):
        data, key = data["evals"], "prompt"
    if not isinstance(data, list):
        raise _bad(source, "it holds neither a list of queries nor an `evals` list", _QUERY_FIX)
    found: dict[str, TriggerQuery] = {}
    for i, item in enumerate(data):
        where = f"item {i + 1}"
        if not isinstance(item, dict):
            raise _bad(source, f"{where} is not an object", _QUERY_FIX)
        query = item.get(key, item.get("query") if key == "prompt" else None)
        if not isinstance(query, str) or not query.strip():
            raise _bad(source, f"{where} has no `{key}` text", _QUERY_FIX)
        should = item.get("should_trigger")
        if not isinstance(should, bool):
            raise _bad(source, f"{where} needs `should_trigger`: true or false", _QUERY_FIX)
        found.setdefault(query, TriggerQuery(query=query, should_trigger=should))
    if not found:
        raise _bad(source, "it lists no queries", _QUERY_FIX)
    return tuple(found.values())


_TASK_FIX = (
    'Write {"skill_name": "...", "evals": [{"id": 1, "prompt": "...", '
    '"expected_output": "...", "files": [], "expectations": ["..."]}]}.'
)


def parse_task_evals(text: str, *, source: str) -> TaskEvals:
    """A skill's `evals/evals.json` (skill-creator's schema; `assertions` is read
    as `expectations`, as agentskills.io names them).

    Raises:
        UsageError: the file does not follow the schema; the message says where.
    """
    data = _load(text, source, _TASK_FIX)
    if not isinstance(data, dict) or not isinstance(data.get("evals"), list):
        raise _bad(source, "it has no `evals` list", _TASK_FIX)
    name = data.get("skill_name", "")
    if not isinstance(name, str):
        raise _bad(source, "`skill_name` is not a text", _TASK_FIX)
    evals = []
    for i, item in enumerate(data["evals"]):
        where = f"eval {i + 1}"
        if not isinstance(item, dict):
            raise _bad(source, f"{where} is not an object", _TASK_FIX)
        prompt = item.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise _bad(source, f"{where} has no `prompt`", _TASK_FIX)
        eval_id = item.get("id", i)
        if isinstance(eval_id, bool) or not isinstance(eval_id, int | str):
            raise _bad(
                source, f"{where} has an `id` that is neither a number nor a text", _TASK_FIX
            )
        expected = item.get("expected_output", "")
        files = item.get("files", [])
        expectations: Any = item.get("expectations", item.get("assertions", []))
        if not isinstance(expected, str):
            raise _bad(source, f"{where}: `expected_output` is not a text", _TASK_FIX)
        for field, value in (("files", files), ("expectations", expectations)):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _bad(source, f"{where}: `{field}` is not a list of texts", _TASK_FIX)
        evals.append(
            TaskEval(
                id=eval_id,
                prompt=prompt,
                expected_output=expected,
                files=tuple(files),
                expectations=tuple(expectations),
            )
        )
    ids = [e.id for e in evals]
    if len(set(ids)) != len(ids):
        raise _bad(source, "two evals share an `id`", "Give each eval its own `id`.")
    return TaskEvals(skill_name=name, evals=tuple(evals))


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class QueryRun:
    """One query's outcome over its runs."""

    query: TriggerQuery
    triggers: int
    """Runs in which the skill was picked."""
    runs: int
    picked: tuple[tuple[str, ...], ...]
    """Per run, the skills picked, first the one that decides (ids as the model
    passes them); a run that failed picked nothing."""
    errors: int = 0
    """Runs that failed (a provider error after its retries): counted as not triggered,
    as skill-creator counts a crashed run."""

    @property
    def trigger_rate(self) -> float:
        return self.triggers / self.runs if self.runs else 0.0

    def passed(self, threshold: float) -> bool:
        """skill-creator's rule: the rate reaches `threshold` when the query should
        trigger, stays below it when it should not."""
        triggered = self.trigger_rate >= threshold
        return triggered if self.query.should_trigger else not triggered


@dataclass(frozen=True, kw_only=True, slots=True)
class TriggerRun:
    """One skill's trigger eval: its queries' outcomes and how they were obtained."""

    skill_name: str
    skill_id: str
    """The id that picks exactly this skill (what `picked` lists for it)."""
    skill_path: str
    description: str
    digest: str | None
    """`sha256:` of its SKILL.md when run (None: the reader cannot tell)."""
    results: tuple[QueryRun, ...]
    mode: str
    """`offline`, or `PROVIDER:MODEL`."""
    threshold: float = DEFAULT_THRESHOLD
    complete: bool = True
    """False when the run stopped early (the results hold what was obtained)."""

    def counts(self) -> dict[str, int]:
        """True/false positives and negatives, a query triggering at the threshold."""
        tp = fp = fn = tn = 0
        for r in self.results:
            triggered = r.trigger_rate >= self.threshold
            if r.query.should_trigger:
                tp, fn = (tp + 1, fn) if triggered else (tp, fn + 1)
            else:
                fp, tn = (fp + 1, tn) if triggered else (fp, tn + 1)
        return {"tp": tp, "fp": fp, "fn": fn, "tn": tn}

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.passed(self.threshold))

    def summary(self) -> dict[str, Any]:
        """skill-creator's `summary` plus precision, recall and F1 (null when
        undefined: no query triggered, or none should)."""
        c = self.counts()
        precision = _ratio(c["tp"], c["tp"] + c["fp"])
        recall = _ratio(c["tp"], c["tp"] + c["fn"])
        f1 = None
        if precision is not None and recall is not None:
            f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        return {
            "total": len(self.results),
            "passed": self.passed,
            "failed": len(self.results) - self.passed,
            "precision": _round(precision),
            "recall": _round(recall),
            "f1": _round(f1),
            **c,
        }

    def to_dict(self) -> dict[str, Any]:
        """skill-creator's trigger-result JSON, skillpack's fields beside its own."""
        return {
            "skill_name": self.skill_name,
            "description": self.description,
            "results": [self._result(r) for r in self.results],
            "summary": self.summary(),
            "skill_id": self.skill_id,
            "skill_path": self.skill_path,
            "skill_digest": self.digest,
            "mode": self.mode,
            "threshold": self.threshold,
            "complete": self.complete,
        }

    def _result(self, r: QueryRun) -> dict[str, Any]:
        firsts = Counter(run[0] for run in r.picked if run)
        stolen = (
            []
            if not r.query.should_trigger
            else [skill for skill, _n in firsts.most_common() if skill != self.skill_id]
        )
        return {
            "query": r.query.query,
            "should_trigger": r.query.should_trigger,
            "trigger_rate": round(r.trigger_rate, 4),
            "triggers": r.triggers,
            "runs": r.runs,
            "pass": r.passed(self.threshold),
            "picked": [list(run) for run in r.picked],
            "stolen_by": stolen if not r.passed(self.threshold) else [],
            "errors": r.errors,
        }


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# -- comparing two runs ---------------------------------------------------------------


def trigger_documents(data: Any, *, source: str) -> dict[str, Mapping[str, Any]]:
    """Skill name -> trigger-result document, from a file that holds one
    (skill-creator's `run_eval.py` output, or one `--out` wrote) or many
    (`skillpack eval --json`: `{"evaluations": [...]}`).

    Raises:
        UsageError: neither shape.
    """
    documents = data.get("evaluations") if isinstance(data, dict) else None
    if documents is None:
        documents = [data]
    found: dict[str, Mapping[str, Any]] = {}
    for doc in documents:
        if not (
            isinstance(doc, dict)
            and isinstance(doc.get("skill_name"), str)
            and isinstance(doc.get("results"), list)
            and all(isinstance(r, dict) and isinstance(r.get("query"), str) for r in doc["results"])
        ):
            raise _bad(
                source,
                "it is no trigger result (`skill_name`, `results[{query, ...}]`)",
                "Pass files written by `skillpack eval --json` or `--out`, or by "
                "skill-creator's run_eval.py.",
            )
        found[doc["skill_name"]] = doc
    return found


SUMMARY_DELTAS = ("passed", "failed", "precision", "recall", "f1")
"""The summary fields whose change `compare_runs` reports."""


def compare_runs(
    before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """What changed from `before` to `after` (each `trigger_documents`' answer): per
    skill in both, whether its digest and description changed, each query's trigger
    rate and pass before and after (queries only one side has are listed as added or
    removed), and the summary's deltas; skills only one side has are named."""
    skills = []
    for name in [n for n in before if n in after]:
        a, b = before[name], after[name]
        rates_a = {r["query"]: r for r in a["results"]}
        rates_b = {r["query"]: r for r in b["results"]}
        queries = []
        for query in [*rates_a, *(q for q in rates_b if q not in rates_a)]:
            ra, rb = rates_a.get(query), rates_b.get(query)
            queries.append(
                {
                    "query": query,
                    "should_trigger": (rb or ra or {}).get("should_trigger"),
                    "status": "removed" if rb is None else "added" if ra is None else "both",
                    "before": None if ra is None else _rate(ra),
                    "after": None if rb is None else _rate(rb),
                    "changed": ra is None or rb is None or _rate(ra) != _rate(rb),
                }
            )
        sa, sb = a.get("summary", {}), b.get("summary", {})
        skills.append(
            {
                "skill_name": name,
                "digest": {"before": a.get("skill_digest"), "after": b.get("skill_digest")},
                "digest_changed": a.get("skill_digest") != b.get("skill_digest"),
                "description_changed": a.get("description") != b.get("description"),
                "queries": queries,
                "summary": {
                    field: {
                        "before": sa.get(field),
                        "after": sb.get(field),
                        "delta": _delta(sa.get(field), sb.get(field)),
                    }
                    for field in SUMMARY_DELTAS
                },
            }
        )
    return {
        "skills": skills,
        "only_before": [n for n in before if n not in after],
        "only_after": [n for n in after if n not in before],
    }


def _rate(result: Mapping[str, Any]) -> dict[str, Any]:
    return {"trigger_rate": result.get("trigger_rate"), "pass": result.get("pass")}


def _delta(a: Any, b: Any) -> float | None:
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    return round(b - a, 4) if numbers else None


# -- task evals: grading and the benchmark ----------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Graded:
    """One expectation, graded (grading.json's `{text, passed, evidence}`)."""

    text: str
    passed: bool
    evidence: str


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskRun:
    """One run of one task eval in one configuration."""

    eval_id: int | str
    configuration: str
    """`with_skill` or `without_skill`."""
    run_number: int
    output: str
    tokens: int
    executor_seconds: float
    grader_seconds: float
    graded: tuple[Graded, ...]
    errors: int = 0
    """Calls that failed (the executor's or the grader's)."""

    def summary(self) -> dict[str, Any]:
        passed = sum(1 for g in self.graded if g.passed)
        total = len(self.graded)
        return {
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "pass_rate": round(passed / total, 4) if total else 0.0,
        }

    def grading(self) -> dict[str, Any]:
        """grading.json, as skill-creator's grader writes it (no tool calls here:
        the executor answers in one reply)."""
        return {
            "expectations": [
                {"text": g.text, "passed": g.passed, "evidence": g.evidence} for g in self.graded
            ],
            "summary": self.summary(),
            "execution_metrics": {
                "tool_calls": {},
                "total_tool_calls": 0,
                "total_steps": 1,
                "errors_encountered": self.errors,
                "output_chars": len(self.output),
                "transcript_chars": len(self.output),
            },
            "timing": {
                "executor_duration_seconds": round(self.executor_seconds, 3),
                "grader_duration_seconds": round(self.grader_seconds, 3),
                "total_duration_seconds": round(self.executor_seconds + self.grader_seconds, 3),
            },
        }

    def timing(self) -> dict[str, Any]:
        """timing.json."""
        return {
            "total_tokens": self.tokens,
            "duration_ms": round(self.executor_seconds * 1000),
            "total_duration_seconds": round(self.executor_seconds, 3),
        }


GRADER_FIX = 'Reply with JSON only: {"expectations": [{"text", "passed", "evidence"}]}.'


def parse_grading(text: str, expectations: Sequence[str]) -> tuple[Graded, ...]:
    """The grader's reply (JSON, possibly inside a ``` fence) read against the
    expectations it was given, in their order; an expectation it left out fails
    with that as its evidence.

    Raises:
        UsageError: the reply holds no such JSON.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise UsageError(f"The grader's reply is not JSON. {GRADER_FIX}") from exc
    listed = data.get("expectations") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        raise UsageError(f"The grader's reply has no `expectations` list. {GRADER_FIX}")
    by_text = {
        item["text"]: item
        for item in listed
        if isinstance(item, dict) and isinstance(item.get("text"), str)
    }
    graded = []
    for i, expectation in enumerate(expectations):
        item = by_text.get(expectation)
        if item is None and i < len(listed) and isinstance(listed[i], dict):
            # A reworded expectation at the same place, unless it is another's own.
            item = None if listed[i].get("text") in expectations else listed[i]
        if item is None:
            graded.append(Graded(text=expectation, passed=False, evidence="not graded"))
            continue
        graded.append(
            Graded(
                text=expectation,
                passed=item.get("passed") is True,
                evidence=str(item.get("evidence", "")),
            )
        )
    return tuple(graded)


def stats(values: Sequence[float]) -> dict[str, float]:
    """`{mean, stddev, min, max}` as skill-creator's benchmark writes them: the
    sample standard deviation (n - 1; 0 for a single value), 4 decimals."""
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    mean = sum(values) / len(values)
    spread = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
    return {
        "mean": round(mean, 4),
        "stddev": round(spread**0.5, 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


CONFIGURATIONS = ("with_skill", "without_skill")


def benchmark(
    runs: Sequence[TaskRun], *, metadata: Mapping[str, Any], names: Mapping[Any, str]
) -> dict[str, Any]:
    """benchmark.json: every run, each configuration's mean and sample stddev of
    pass rate, time and tokens, and the delta (with minus without, signed text as
    skill-creator writes it)."""
    summary: dict[str, Any] = {}
    for config in CONFIGURATIONS:
        mine = [r for r in runs if r.configuration == config]
        summary[config] = {
            "pass_rate": stats([r.summary()["pass_rate"] for r in mine]),
            "time_seconds": stats([r.executor_seconds for r in mine]),
            "tokens": stats([float(r.tokens) for r in mine]),
        }
    with_, without = summary["with_skill"], summary["without_skill"]
    summary["delta"] = {
        "pass_rate": f"{with_['pass_rate']['mean'] - without['pass_rate']['mean']:+.2f}",
        "time_seconds": f"{with_['time_seconds']['mean'] - without['time_seconds']['mean']:+.1f}",
        "tokens": f"{with_['tokens']['mean'] - without['tokens']['mean']:+.0f}",
    }
    return {
        "metadata": dict(metadata),
        "runs": [
            {
                "eval_id": r.eval_id,
                "eval_name": names.get(r.eval_id, f"eval-{r.eval_id}"),
                "configuration": r.configuration,
                "run_number": r.run_number,
                "result": {
                    **{k: v for k, v in r.summary().items()},
                    "time_seconds": round(r.executor_seconds, 3),
                    "tokens": r.tokens,
                    "tool_calls": 0,
                    "errors": r.errors,
                },
                "expectations": [
                    {"text": g.text, "passed": g.passed, "evidence": g.evidence} for g in r.graded
                ],
                "notes": [],
            }
            for r in runs
        ],
        "run_summary": summary,
        "notes": [],
    }
