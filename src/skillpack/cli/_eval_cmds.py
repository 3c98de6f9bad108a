"""`skillpack eval`: does a skill trigger when it should, in skill-creator's formats."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from ._author_cmds import targets_of
from ._options import CatalogOptions, catalog_options
from ._output import emit_json, safe_text, warn

if TYPE_CHECKING:
    from .._model import Skill
    from ..runtime._eval import Progress
    from ..runtime._eval_model import ModelSpec
    from ..runtime._session import Session
    from ..select._evals import TriggerQuery, TriggerRun

METRICS = ("f1", "precision", "recall", "pass-rate")
"""What `--fail-under` compares, per skill."""


@click.command("eval")
@click.argument("target", required=False)
@click.option(
    "--queries",
    "queries_file",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    default=None,
    help="A trigger query file ([{query, should_trigger}] or {evals: [{prompt, "
    "should_trigger}]}) for the one skill TARGET names, instead of its own files.",
)
@click.option(
    "--fail-under",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Exit 1 when a skill's --metric is below this (an undefined one counts as 0).",
)
@click.option(
    "--metric",
    type=click.Choice(METRICS),
    default="f1",
    show_default=True,
    help="What --fail-under compares.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Also write each skill's trigger result (skill-creator's JSON) to "
    "OUT/<skill name>/triggers.json.",
)
@click.option(
    "--compare",
    nargs=2,
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    default=None,
    help="Compare two results (A B: before, after) instead of running anything.",
)
@click.option(
    "--model",
    default=None,
    help="Run against a model instead of offline: openai:MODEL or anthropic:MODEL "
    "(key from OPENAI_API_KEY or ANTHROPIC_API_KEY).",
)
@click.option(
    "--base-url",
    default=None,
    help="The provider's API base URL (an OpenAI-compatible server with openai:MODEL).",
)
@click.option(
    "--runs",
    type=click.IntRange(1, 100),
    default=3,
    show_default=True,
    help="Runs per query against a model (offline, one: the answer does not vary).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    default=0.5,
    show_default=True,
    help="A query triggers when its trigger rate reaches this.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Model calls at once at most.",
)
@click.option(
    "--retries",
    type=click.IntRange(0, 10),
    default=3,
    show_default=True,
    help="Retries of a call that was rate limited (429), failed on the server (5xx) "
    "or timed out, with backoff (the provider's Retry-After when it sends one).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds a model call may take.",
)
@click.option(
    "--tasks",
    is_flag=True,
    help="Run each skill's evals/evals.json instead of its trigger queries: every task "
    "with and without the skill on --model (--runs each), graded by --grader, kept "
    "under --out in skill-creator's workspace layout.",
)
@click.option(
    "--grader",
    default=None,
    help="The model that grades task outputs against their expectations (PROVIDER:MODEL; "
    "--base-url applies to it too).",
)
@catalog_options
def eval_command(
    target: str | None,
    queries_file: str | None,
    fail_under: float | None,
    metric: str,
    out_dir: str | None,
    compare: tuple[str, str] | None,
    model: str | None,
    base_url: str | None,
    runs: int,
    threshold: float,
    workers: int,
    retries: int,
    timeout: float,
    tasks: bool,
    grader: str | None,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Check whether a skill triggers when it should, and not when it should not.

    TARGET is a skill name (with --queries FILE), or a folder: a skill's folder or a
    tree of them, each skill read with its own trigger query files (trigger*.json or
    *queries*.json in the skill's folder or its evals/ folder). A folder no root
    holds joins the roots.

    Offline (no model): a query triggers the skill when skillpack would suggest it
    first for that request, the rule prepare_turn's suggestions use. Each skill
    gets skill-creator's trigger result (trigger_rate, pass per query; total,
    passed, failed) with precision, recall and F1, the skills picked per query and
    the skills that took each missed request.

    \b
    --json prints:
      {"ok": false when --fail-under fails,
       "metric", "fail_under",
       "summary": {"skills", "queries", "passed", "failed"},
       "evaluations": [{"skill_name", "description",
         "results": [{"query", "should_trigger", "trigger_rate", "triggers", "runs",
           "pass", "picked": [[ids per run]], "stolen_by": [ids], "errors"}],
         "summary": {"total", "passed", "failed", "precision", "recall", "f1",
           "tp", "fp", "fn", "tn"},
         "skill_id", "skill_path", "skill_digest", "mode", "threshold", "complete"}],
       "skipped": [{"name", "path", "why"}]}
    --compare A B --json prints:
      {"skills": [{"skill_name", "digest": {"before", "after"}, "digest_changed",
         "description_changed",
         "queries": [{"query", "should_trigger", "status": "both" | "added" | "removed",
           "before": {"trigger_rate", "pass"} | null, "after": ..., "changed"}],
         "summary": {"passed" | "failed" | "precision" | "recall" | "f1":
           {"before", "after", "delta"}}}],
       "only_before": [names], "only_after": [names]}
    """
    from .._errors import UsageError

    if compare is not None:
        if target is not None or queries_file is not None:
            raise UsageError("--compare A B reads two results; give it no TARGET or --queries.")
        _compare(compare, as_json)
        return
    if target is None:
        raise UsageError(
            "Name a skill (with --queries FILE) or a folder of skills to evaluate, or "
            "--compare A.json B.json."
        )
    from ..runtime._eval_model import ModelSpec, parse_model

    spec = None
    if model is not None:
        provider, name = parse_model(model)
        spec = ModelSpec(
            provider=provider,
            model=name,
            base_url=base_url,
            runs=runs,
            threshold=threshold,
            workers=workers,
            retries=retries,
            timeout=timeout,
        )
    elif base_url is not None:
        raise UsageError("--base-url is for --model; offline runs need no server.")
    session, targets = targets_of(target, catalog, purpose="evaluate")
    if tasks or grader is not None:
        if not (tasks and spec is not None and grader is not None and out_dir is not None):
            raise UsageError(
                "Task evals need --tasks, --model PROVIDER:MODEL, --grader PROVIDER:MODEL "
                "and --out DIR together."
            )
        grader_provider, grader_model = parse_model(grader)
        grader_spec = dataclasses.replace(spec, provider=grader_provider, model=grader_model)
        _run_tasks(session, targets, spec, grader_spec, out_dir, as_json=as_json)
        return
    plan, skipped = _plan(session, targets, queries_file)
    aborted = None
    if spec is None:
        results = _run_offline(session, plan, threshold)
    else:
        from ..runtime._eval_model import EvalAborted

        try:
            results = _run_model(session, plan, spec)
        except EvalAborted as exc:
            results, aborted = list(exc.runs), str(exc)
    if out_dir is not None:
        _write_results(out_dir, results)
    failing = _failing(results, metric, fail_under)
    _report(results, skipped, metric, fail_under, failing, aborted, as_json=as_json)
    if failing or aborted:
        raise SystemExit(1)


def _report(
    runs: Sequence[TriggerRun],
    skipped: Sequence[Mapping[str, str]],
    metric: str,
    fail_under: float | None,
    failing: Sequence[str],
    aborted: str | None,
    *,
    as_json: bool,
) -> None:
    if as_json:
        document: dict[str, Any] = {
            "ok": not failing,
            "metric": metric,
            "fail_under": fail_under,
            "summary": _totals(runs),
            "evaluations": [run.to_dict() for run in runs],
            "skipped": skipped,
        }
        from ._errors import error_fields

        if aborted:
            document["ok"] = False
            document["error"] = error_fields("EXECUTION_ERROR", aborted)
        elif failing:
            document["error"] = error_fields("EVAL_FAILED", _failing_message(failing, metric))
        emit_json(document)
        return
    _print_runs(runs, skipped)
    if failing:
        click.echo(safe_text(_failing_message(failing, metric)))
    if aborted:
        warn(aborted)


def _plan(
    session: Session, targets: Sequence[Skill], queries_file: str | None
) -> tuple[list[tuple[Skill, tuple[TriggerQuery, ...]]], list[dict[str, str]]]:
    from .._errors import UsageError
    from ..runtime._eval import eval_files

    plan: list[tuple[Skill, tuple[TriggerQuery, ...]]] = []
    skipped = []
    if queries_file is not None:
        if len(targets) != 1:
            raise UsageError(
                f"--queries FILE is for one skill, and the target holds {len(targets)}; "
                "name the skill, or drop --queries to use each skill's own query files."
            )
        plan.append((targets[0], _read_queries(queries_file)))
    else:
        for skill in targets:
            files = eval_files(session, skill)
            if files.queries:
                plan.append((skill, files.queries))
            else:
                skipped.append(
                    {
                        "name": skill.name,
                        "path": skill.path,
                        "why": "no trigger query file (trigger*.json or *queries*.json "
                        "beside its SKILL.md or in evals/)",
                    }
                )
    if not plan:
        raise UsageError(
            "No skill there has trigger queries. Write evals/trigger_eval.json beside a "
            'SKILL.md ([{"query": "...", "should_trigger": true}, ...]) or pass --queries FILE.'
        )
    return plan, skipped


def _run_offline(
    session: Session, plan: Sequence[tuple[Skill, Sequence[TriggerQuery]]], threshold: float
) -> list[TriggerRun]:
    from ..runtime._eval import offline_trigger_run

    runs = []
    with _progress(sum(len(q) for _s, q in plan)) as progress:
        for skill, queries in plan:
            run = offline_trigger_run(session, skill, queries, progress=progress)
            runs.append(dataclasses.replace(run, threshold=threshold))
    return runs


def _run_model(
    session: Session, plan: Sequence[tuple[Skill, Sequence[TriggerQuery]]], spec: ModelSpec
) -> list[TriggerRun]:
    from ..runtime._eval_model import model_trigger_runs

    with _progress(sum(len(q) for _s, q in plan) * spec.runs, each=True) as progress:
        return model_trigger_runs(session, plan, spec, progress=progress, warn=warn)


def _read_queries(path: str) -> tuple[TriggerQuery, ...]:
    from .._errors import SkillIOError
    from ..select._evals import parse_trigger_queries

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillIOError(f"Cannot read the query file {path}: {exc}") from exc
    return parse_trigger_queries(text, source=path)


def _run_tasks(
    session: Session,
    targets: Sequence[Skill],
    spec: ModelSpec,
    grader: ModelSpec,
    out_dir: str,
    *,
    as_json: bool,
) -> None:
    from .._errors import UsageError
    from ..runtime._eval import eval_files
    from ..runtime._eval_model import EvalProviderError
    from ..runtime._eval_tasks import run_task_evals

    plan = [
        (skill, files.tasks) for skill in targets if (files := eval_files(session, skill)).tasks
    ]
    if not plan:
        raise UsageError(
            "No skill there has task evals. Write evals/evals.json beside a SKILL.md "
            '({"skill_name": "...", "evals": [{"id": 1, "prompt": "...", '
            '"expectations": ["..."]}]}).'
        )
    done: list[dict[str, Any]] = []
    aborted = None
    total = sum(len(t.evals) for _s, t in plan) * 2 * spec.runs
    with _progress(total, each=True) as progress:
        for skill, evals in plan:
            try:
                folder, document = run_task_evals(
                    session, skill, evals, spec, grader, out_dir, progress=progress, warn=warn
                )
            except EvalProviderError as exc:
                aborted = str(exc)
                break
            done.append(
                {
                    "skill_name": skill.name,
                    "skill_path": skill.path,
                    "workspace": str(folder),
                    "run_summary": document["run_summary"],
                }
            )
    if as_json:
        result: dict[str, Any] = {"ok": aborted is None, "benchmarks": done}
        if aborted:
            from ._errors import error_fields

            result["error"] = error_fields("EXECUTION_ERROR", aborted)
        emit_json(result)
    else:
        lines = []
        for item in done:
            summary = item["run_summary"]
            w, wo = summary["with_skill"], summary["without_skill"]
            lines.append(
                f"{item['skill_name']}  pass rate with the skill {w['pass_rate']['mean']:.2f} "
                f"(sd {w['pass_rate']['stddev']:.2f}), without {wo['pass_rate']['mean']:.2f} "
                f"(sd {wo['pass_rate']['stddev']:.2f}), delta {summary['delta']['pass_rate']}; "
                f"tokens {summary['delta']['tokens']}; {item['workspace']}"
            )
        click.echo(safe_text("\n".join(lines), multiline=True))
        if aborted:
            warn(aborted)
    if aborted:
        raise SystemExit(1)


# -- progress ---------------------------------------------------------------------------

PLAIN_EVERY = 25
"""Without a terminal, one progress line per this many queries (and at the end)."""


@contextmanager
def _progress(total: int, *, each: bool = False) -> Iterator[Progress]:
    """A bar on a terminal's stderr, plain lines on stderr otherwise (stdout keeps
    the report or the JSON): one per `PLAIN_EVERY` queries, or per query (`each`:
    model runs take seconds each)."""
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(
            TextColumn("eval"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task("eval", total=total)
            yield lambda _done, _of, _what: bar.advance(task)
        return
    count = 0

    def line(_done: int, _of: int, _what: str) -> None:
        nonlocal count
        count += 1
        if each or count % PLAIN_EVERY == 0 or count == total:
            sys.stderr.write(f"skillpack: eval: {count}/{total} queries\n")
            sys.stderr.flush()

    yield line


# -- results ---------------------------------------------------------------------------


def _metric(run: TriggerRun, metric: str) -> float:
    summary = run.summary()
    if metric == "pass-rate":
        return summary["passed"] / summary["total"] if summary["total"] else 0.0
    value = summary[metric]
    return float(value) if value is not None else 0.0


def _failing(runs: Sequence[TriggerRun], metric: str, fail_under: float | None) -> list[str]:
    if fail_under is None:
        return []
    return [
        f"{run.skill_id} ({_metric(run, metric):.2f})"
        for run in runs
        if _metric(run, metric) < fail_under
    ]


def _failing_message(failing: Sequence[str], metric: str) -> str:
    return f"{metric} under --fail-under: {', '.join(failing)}"


def _totals(runs: Sequence[TriggerRun]) -> dict[str, int]:
    return {
        "skills": len(runs),
        "queries": sum(len(run.results) for run in runs),
        "passed": sum(run.passed for run in runs),
        "failed": sum(len(run.results) - run.passed for run in runs),
    }


def _write_results(out_dir: str, runs: Sequence[TriggerRun]) -> None:
    from pathlib import Path

    from ..config._atomic import write_atomic

    used: dict[str, int] = {}
    for run in runs:
        name = run.skill_name
        used[name] = used.get(name, 0) + 1
        folder = os.path.join(out_dir, name if used[name] == 1 else f"{name}-{used[name]}")
        os.makedirs(folder, exist_ok=True)
        write_atomic(
            Path(folder, "triggers.json"),
            json.dumps(run.to_dict(), indent=2) + "\n",
            what="trigger result",
        )


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print_runs(runs: Sequence[TriggerRun], skipped: Sequence[Mapping[str, str]]) -> None:
    lines = []
    for run in runs:
        s = run.summary()
        lines.append(
            f"{run.skill_id}  {run.mode}, {s['total']} queries: {s['passed']} pass, "
            f"{s['failed']} fail; precision {_fmt(s['precision'])}, recall "
            f"{_fmt(s['recall'])}, F1 {_fmt(s['f1'])}"
        )
        for r in run.to_dict()["results"]:
            if r["pass"]:
                continue
            said = f'"{r["query"]}"'
            if r["should_trigger"]:
                took = ", ".join(r["stolen_by"]) or "no skill"
                lines.append(f"  MISS   {said} (rate {r['trigger_rate']:.2f}; taken by {took})")
            else:
                lines.append(f"  FALSE  {said} should not trigger (rate {r['trigger_rate']:.2f})")
    for skip in skipped:
        lines.append(f"skipped {skip['name']} ({skip['path']}): {skip['why']}")
    totals = _totals(runs)
    lines.append(
        f"{totals['skills']} skills, {totals['queries']} queries: {totals['passed']} pass, "
        f"{totals['failed']} fail."
    )
    click.echo(safe_text("\n".join(lines), multiline=True))


# -- compare ---------------------------------------------------------------------------


def _load_result(path: str) -> dict[str, Mapping[str, Any]]:
    from .._errors import SkillIOError, UsageError
    from ..select._evals import trigger_documents

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise SkillIOError(f"Cannot read {path}: {exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not JSON ({exc}); pass a trigger result file.") from exc
    return trigger_documents(data, source=path)


def _compare(paths: tuple[str, str], as_json: bool) -> None:
    from ..select._evals import compare_runs

    diff = compare_runs(_load_result(paths[0]), _load_result(paths[1]))
    if as_json:
        emit_json(diff)
        return
    lines = []
    for skill in diff["skills"]:
        digest = "changed" if skill["digest_changed"] else "same"
        description = "changed" if skill["description_changed"] else "same"
        lines.append(f"{skill['skill_name']}: SKILL.md {digest}, description {description}")
        for field, change in skill["summary"].items():
            if change["before"] != change["after"]:
                delta = "" if change["delta"] is None else f" ({change['delta']:+g})"
                lines.append(
                    f"  {field}: {_show(change['before'])} -> {_show(change['after'])}{delta}"
                )
        for q in skill["queries"]:
            if not q["changed"]:
                continue
            before = "absent" if q["before"] is None else _rate_text(q["before"])
            after = "absent" if q["after"] is None else _rate_text(q["after"])
            lines.append(f'  "{q["query"]}": {before} -> {after}')
    for name in diff["only_before"]:
        lines.append(f"{name}: only in {paths[0]}")
    for name in diff["only_after"]:
        lines.append(f"{name}: only in {paths[1]}")
    if not lines:
        warn("the two results share no skill")
    click.echo(safe_text("\n".join(lines), multiline=True))


def _show(value: Any) -> str:
    return "-" if value is None else str(value)


def _rate_text(rate: Mapping[str, Any]) -> str:
    verdict = "pass" if rate.get("pass") else "fail"
    return f"{_show(rate.get('trigger_rate'))} {verdict}"
