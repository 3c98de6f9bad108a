"""`skillpack eval`'s offline half: a skill's eval files found through the session's
reader, and its trigger queries run through the turn's own suggestions.

Offline, a query triggers a skill when `prepare_turn` would suggest that skill first
for it (`resolution_suggestions`, the one rule the turns use): no model, the same
answer a turn gives, in milliseconds per query. The formats are `select._evals`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._errors import SkillNotFoundError, UsageError
from .._model import Skill
from ..select._evals import (
    TASK_EVALS_FILE,
    QueryRun,
    TaskEvals,
    TriggerQuery,
    TriggerRun,
    is_trigger_file,
    parse_task_evals,
    parse_trigger_queries,
)

if TYPE_CHECKING:
    from ._session import Session

Progress = Callable[[int, int, str], None]
"""`progress(done, total, what)`: called after each query."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillEvalFiles:
    """The eval files a skill's folder holds, read and checked."""

    skill: Skill
    trigger_files: tuple[str, ...]
    """Trigger query files, relative to the skill's folder."""
    queries: tuple[TriggerQuery, ...]
    """Their queries, merged (a text listed twice counts once)."""
    tasks: TaskEvals | None
    """`evals/evals.json`, when there is one."""


def eval_files(session: Session, skill: Skill) -> SkillEvalFiles:
    """The trigger query files (`select._evals.is_trigger_file`) and
    `evals/evals.json` in `skill`'s folder.

    Raises:
        UsageError: a file is not in its format (the message names it).
    """
    files, _truncated = session.reader.list_files(skill)
    found = sorted(f for f in files if is_trigger_file(f))
    queries: dict[str, TriggerQuery] = {}
    for relpath in found:
        text = session.reader.read_file(skill, relpath)
        for query in parse_trigger_queries(text, source=f"{skill.dir}/{relpath}"):
            queries.setdefault(query.query, query)
    tasks = None
    if TASK_EVALS_FILE in files:
        text = session.reader.read_file(skill, TASK_EVALS_FILE)
        tasks = parse_task_evals(text, source=f"{skill.dir}/{TASK_EVALS_FILE}")
    return SkillEvalFiles(
        skill=skill, trigger_files=tuple(found), queries=tuple(queries.values()), tasks=tasks
    )


def skill_id(session: Session, skill: Skill) -> str:
    """The id that picks exactly `skill` (what suggestions and tool enums show)."""
    from ..select._resolve import shown_ids

    return shown_ids(session.catalog, [skill], is_visible=session.skills.is_visible)[0]


def offline_picks(session: Session, query: str) -> tuple[str, ...]:
    """The skills `prepare_turn` would suggest for `query` as a user's message, by
    SKILL.md path, first the one it puts first (nothing is loaded)."""
    from ._session import resolution_suggestions

    return tuple(s.path for s in resolution_suggestions(session, session.resolve(query)))


def offline_trigger_run(
    session: Session,
    skill: Skill,
    queries: Sequence[TriggerQuery],
    *,
    progress: Progress | None = None,
) -> TriggerRun:
    """Run `queries` offline: each triggers `skill` when the turn's suggestions put it
    first (one run per query: the answer does not vary).

    Raises:
        UsageError: skills are off, or `[search] suggestions = 0` turns suggestions off
            (the offline rule has nothing to read).
    """
    session.skills.require_skills_enabled()
    if not session.config.search_suggestions:
        raise UsageError(
            "The offline eval reads the turn's suggestions, and `[search] suggestions = 0` "
            "turns them off. Set `suggestions` to 1 or more in the config's [search] table, "
            "or run against a model with --model."
        )
    by_path = {s.path: s for s in session.catalog.skills}
    ids: dict[str, str] = {}

    def shown(path: str) -> str:
        if path not in ids:
            ids[path] = skill_id(session, by_path[path]) if path in by_path else path
        return ids[path]

    results = []
    for done, query in enumerate(queries, 1):
        paths = offline_picks(session, query.query)
        results.append(
            QueryRun(
                query=query,
                triggers=int(bool(paths) and paths[0] == skill.path),
                runs=1,
                picked=(tuple(shown(p) for p in paths),),
            )
        )
        if progress is not None:
            progress(done, len(queries), query.query)
    return TriggerRun(
        skill_name=skill.name,
        skill_id=skill_id(session, skill),
        skill_path=skill.path,
        description=skill.description,
        digest=session.skills.digest(skill),
        results=tuple(results),
        mode="offline",
    )


def target_skills(
    session: Session, *, folder: str | None, name: str | None, purpose: str = "evaluate"
) -> list[Skill]:
    """The skills the model may use under `folder` (a real path), or the one `name`
    picks, or (neither) all of them: what `skillpack eval` and `skillpack triggers`
    work on.

    Raises:
        SkillNotFoundError: none (the message names `purpose`).
    """
    from ._workspace import lookup_skill

    model_skills = session.skills.model_skills()
    if folder is not None:
        prefix = folder.rstrip(os.sep) + os.sep
        targets = [s for s in model_skills if (s.real_path or s.path).startswith(prefix)]
        where = f"under {folder}"
    elif name:
        found = lookup_skill(session.catalog, name)
        targets = [s for s in model_skills if s.key == found.key]
        where = f"named {name!r} that the model may use"
    else:
        targets = list(model_skills)
        where = "the model may use"
    if not targets:
        raise SkillNotFoundError(
            f"No skill {where}. Run `skillpack list` to see the catalog; a skill with "
            f"`disable-model-invocation: true` is never picked, so it has nothing to {purpose}."
        )
    return targets
