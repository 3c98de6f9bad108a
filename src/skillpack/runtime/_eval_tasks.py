"""`skillpack eval --tasks`: a skill's `evals/evals.json` run with and without the
skill, graded, and kept in skill-creator's workspace layout.

Each task's prompt (with its `files` attached as text) goes to the executor model
`runs` times in each configuration: `with_skill` has the skill's body in the system
prompt, as a turn that loaded it has (`runtime._session.render_body`); `without_skill` has no
system prompt. The grader model then judges each output against the task's
expectations (`select._evals.parse_grading`). Under `OUT/<skill>-workspace/
iteration-<N>/` (the next free N) each task gets `eval-<id>/eval_metadata.json` and
`<configuration>/run-<k>/{outputs/output.md, timing.json, grading.json}`, written as
each run ends (an eval that stops keeps them); `benchmark.json` comes last.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import SkillpackError, UsageError
from .._model import Skill
from ..select._evals import (
    CONFIGURATIONS,
    Graded,
    TaskEval,
    TaskEvals,
    TaskRun,
    benchmark,
    parse_grading,
)
from ._eval_model import EvalProviderError, ModelSpec, ProviderChat, api_key, failure_of
from ._session import render_body

if TYPE_CHECKING:
    from ._eval import Progress
    from ._session import Session

GRADER_SYSTEM = (
    "You grade an AI assistant's output against a list of expectations. For each "
    "expectation decide whether the output meets it, quoting the output as evidence. "
    'Reply with JSON only: {"expectations": [{"text": <the expectation>, "passed": '
    'true|false, "evidence": <a short quote or reason>}]}.'
)


def workspace_dir(out_dir: str, skill: Skill) -> Path:
    """`OUT/<skill>-workspace/iteration-<N>`, N the first number not yet used."""
    base = Path(out_dir, f"{skill.name}-workspace")
    n = 1
    while (base / f"iteration-{n}").exists():
        n += 1
    return base / f"iteration-{n}"


def _prompt(session: Session, skill: Skill, task: TaskEval) -> str:
    parts = [task.prompt]
    for relpath in task.files:
        try:
            text = session.reader.read_file(skill, relpath)
        except SkillpackError as exc:
            raise UsageError(
                f"Eval {task.id} of {skill.name}: the file {relpath} cannot be attached "
                f"as text ({exc}). List text files in `files`, relative to the skill's folder."
            ) from exc
        parts.append(f"File {relpath}:\n```\n{text}\n```")
    return "\n\n".join(parts)


def _grader_message(task: TaskEval, output: str) -> str:
    listed = "\n".join(f"- {e}" for e in task.expectations)
    return (
        f"Task given to the assistant:\n{task.prompt}\n\n"
        f"What a good result looks like:\n{task.expected_output or '(not said)'}\n\n"
        f"The assistant's output:\n{output}\n\nExpectations:\n{listed}"
    )


def run_task_evals(
    session: Session,
    skill: Skill,
    tasks: TaskEvals,
    executor: ModelSpec,
    grader: ModelSpec,
    out_dir: str,
    *,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Run, grade and write every task of `tasks`; returns the iteration folder and
    benchmark.json's document.

    Raises:
        UsageError: no key, or a task's file cannot be attached.
        EvalProviderError: a provider refused the eval (bad key, unknown model); the
            runs already written stay.
    """
    from ._tools import SkillTools

    environ = os.environ if env is None else env
    tools = SkillTools(session)
    run_chat = ProviderChat(
        executor, api_key(executor.provider, environ, base_url=executor.base_url), tools
    )
    grade_chat = ProviderChat(
        grader, api_key(grader.provider, environ, base_url=grader.base_url), tools
    )
    folder = workspace_dir(out_dir, skill)
    prompts = {task.id: _prompt(session, skill, task) for task in tasks.evals}
    with_skill = render_body(session, skill)
    names = {task.id: f"eval-{task.id}" for task in tasks.evals}
    for task in tasks.evals:
        _write(
            folder / names[task.id] / "eval_metadata.json",
            {
                "eval_id": task.id,
                "eval_name": names[task.id],
                "prompt": task.prompt,
                "assertions": list(task.expectations),
            },
        )
    jobs = [
        (task, config, k)
        for task in tasks.evals
        for config in CONFIGURATIONS
        for k in range(1, executor.runs + 1)
    ]
    stop = threading.Event()
    lock = threading.Lock()
    failures: list[str] = []
    finished: list[TaskRun] = []

    def call(
        chat: ProviderChat, system: str, user: str, where: str
    ) -> tuple[str, int, float, bool]:
        start = time.monotonic()
        try:
            text, tokens = chat.complete(system, user)
            return text, tokens, time.monotonic() - start, False
        except (
            chat.sdk.APIStatusError,
            chat.sdk.APITimeoutError,
            chat.sdk.APIConnectionError,
        ) as exc:
            fatal, message = failure_of(exc, chat.spec, chat.sdk, where)
            if fatal:
                with lock:
                    failures.append(message)
                stop.set()
                raise _Stop from exc
            if warn is not None:
                warn(message)
            return "", 0, time.monotonic() - start, True

    def one(job: tuple[TaskEval, str, int]) -> None:
        task, config, k = job
        if stop.is_set():
            return
        where = f"on eval {task.id} ({config}, run {k})"
        try:
            system = with_skill if config == "with_skill" else ""
            output, tokens, seconds, failed = call(run_chat, system, prompts[task.id], where)
            graded: tuple[Graded, ...]
            grader_seconds = 0.0
            if failed:
                graded = tuple(
                    Graded(text=e, passed=False, evidence="the executor call failed")
                    for e in task.expectations
                )
            else:
                reply, _t, grader_seconds, grader_failed = call(
                    grade_chat, GRADER_SYSTEM, _grader_message(task, output), where
                )
                failed = grader_failed
                try:
                    graded = parse_grading(reply, task.expectations)
                except UsageError as exc:
                    failed = True
                    graded = tuple(
                        Graded(text=e, passed=False, evidence=str(exc)) for e in task.expectations
                    )
        except _Stop:
            return
        run = TaskRun(
            eval_id=task.id,
            configuration=config,
            run_number=k,
            output=output,
            tokens=tokens,
            executor_seconds=seconds,
            grader_seconds=grader_seconds,
            graded=graded,
            errors=int(failed),
        )
        run_dir = folder / names[task.id] / config / f"run-{k}"
        (run_dir / "outputs").mkdir(parents=True, exist_ok=True)
        (run_dir / "outputs" / "output.md").write_text(output, encoding="utf-8")
        _write(run_dir / "timing.json", run.timing())
        _write(run_dir / "grading.json", run.grading())
        with lock:
            finished.append(run)
            count = len(finished)
        if progress is not None:
            progress(count, len(jobs), f"eval {task.id} {config} run {k}")

    with ThreadPoolExecutor(max_workers=max(1, executor.workers)) as pool:
        list(pool.map(one, jobs))
    order = {(t.id, c, k): i for i, (t, c, k) in enumerate(jobs)}
    finished.sort(key=lambda r: order[(r.eval_id, r.configuration, r.run_number)])
    document = benchmark(
        finished,
        metadata={
            "skill_name": skill.name,
            "skill_path": skill.path,
            "skill_digest": session.skills.digest(skill),
            "executor_model": executor.label,
            "analyzer_model": grader.label,
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "evals_run": [task.id for task in tasks.evals],
            "runs_per_configuration": executor.runs,
            "complete": not failures,
        },
        names=names,
    )
    _write(folder / "benchmark.json", document)
    if failures:
        raise EvalProviderError(f"{failures[0]} The runs done are in {folder}.")
    return folder, document


class _Stop(Exception):
    """A provider refused the eval: this run ends unwritten."""


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
