"""`skillpack eval` offline: eval files found in a skill's folder, and queries run
through the turn's own suggestions."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REAL_SKILLS
from skillpack._errors import SkillNotFoundError, UsageError
from skillpack.config._schema import Config
from skillpack.discovery._memory import MemorySkills
from skillpack.discovery._options import DiscoveryOptions
from skillpack.runtime._eval import eval_files, offline_trigger_run, target_skills
from skillpack.runtime._session import Session
from skillpack.select._evals import TriggerQuery


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n"


QUERIES = json.dumps(
    [
        {"query": "fill in the fields of this PDF form", "should_trigger": True},
        {"query": "write the changelog entry for the release", "should_trigger": False},
    ]
)

FILES = {
    "/s/pdf-forms/SKILL.md": skill_md(
        "pdf-forms", "Fill in PDF forms and extract their fields. Use for fillable PDF forms."
    ),
    "/s/pdf-forms/evals/trigger_eval.json": QUERIES,
    "/s/pdf-forms/evals/more-queries.json": json.dumps(
        {"evals": [{"prompt": "fill in the fields of this PDF form", "should_trigger": True}]}
    ),
    "/s/pdf-forms/evals/evals.json": json.dumps(
        {"skill_name": "pdf-forms", "evals": [{"id": 1, "prompt": "fill form.pdf"}]}
    ),
    "/s/changelog/SKILL.md": skill_md(
        "changelog", "Write the changelog entry for a release from merged pull requests."
    ),
    "/s/changelog/triggers.json": "[{",
}


@pytest.fixture
def session() -> Iterator[Session]:
    memory = MemorySkills(FILES)
    with Session(memory.catalog(), reader=memory, session_id="s") as opened:
        yield opened


def test_a_skill_folder_gives_its_query_files_merged_and_its_evals_json(
    session: Session,
) -> None:
    pdf = next(s for s in session.catalog.skills if s.name == "pdf-forms")

    files = eval_files(session, pdf)

    assert files.trigger_files == ("evals/more-queries.json", "evals/trigger_eval.json")
    assert [q.query for q in files.queries] == [
        "fill in the fields of this PDF form",
        "write the changelog entry for the release",
    ]
    assert files.tasks is not None and files.tasks.evals[0].prompt == "fill form.pdf"


def test_a_broken_query_file_names_its_path(session: Session) -> None:
    changelog = next(s for s in session.catalog.skills if s.name == "changelog")

    with pytest.raises(UsageError, match="/s/changelog/triggers.json: not valid JSON"):
        eval_files(session, changelog)


def test_offline_a_query_triggers_when_the_turn_suggests_the_skill_first(
    session: Session,
) -> None:
    pdf = next(s for s in session.catalog.skills if s.name == "pdf-forms")
    seen: list[tuple[int, int]] = []

    run = offline_trigger_run(
        session,
        pdf,
        eval_files(session, pdf).queries,
        progress=lambda done, total, _q: seen.append((done, total)),
    )

    data = run.to_dict()
    assert [(r["triggers"], r["pass"]) for r in data["results"]] == [(1, True), (0, True)]
    assert data["results"][1]["picked"] == [["changelog"]]
    assert data["skill_digest"].startswith("sha256:")
    assert data["mode"] == "offline"
    assert seen == [(1, 2), (2, 2)]


def test_a_missed_query_names_the_skill_that_took_it(session: Session) -> None:
    pdf = next(s for s in session.catalog.skills if s.name == "pdf-forms")
    query = TriggerQuery(query="write the changelog entry for the release", should_trigger=True)

    [result] = offline_trigger_run(session, pdf, [query]).to_dict()["results"]

    assert (result["pass"], result["stolen_by"]) == (False, ["changelog"])


def test_offline_eval_refuses_when_suggestions_are_off() -> None:
    memory = MemorySkills(FILES)
    config = Config(search_suggestions=0)
    with Session(memory.catalog(), reader=memory, session_id="s", config=config) as session:
        pdf = next(s for s in session.catalog.skills if s.name == "pdf-forms")
        with pytest.raises(UsageError, match=r"\[search\] suggestions = 0"):
            offline_trigger_run(session, pdf, [TriggerQuery(query="x", should_trigger=True)])


def test_targets_are_the_model_skills_under_a_folder_or_one_name(session: Session) -> None:
    assert [s.name for s in target_skills(session, folder="/s/pdf-forms", name=None)] == [
        "pdf-forms"
    ]
    assert [s.name for s in target_skills(session, folder=None, name="changelog")] == ["changelog"]
    assert len(target_skills(session, folder=None, name=None)) == 2
    with pytest.raises(SkillNotFoundError, match="No skill under /elsewhere.*nothing to check"):
        target_skills(session, folder="/elsewhere", name=None, purpose="check")


# -- the real corpus -----------------------------------------------------------------

CORPUS_SKILLS = (
    "getsentry__skills/skills/commit/SKILL.md",
    "getsentry__skills/skills/pr-writer/SKILL.md",
    "getsentry__skills/skills/create-branch/SKILL.md",
)
OTHER_REQUESTS = 60
"""Requests meant for other skills (or none) taken as should-not-trigger queries."""


def corpus_queries(path: str) -> list[TriggerQuery]:
    requests = Path(__file__).resolve().parents[2] / "eval" / "suggest_requests.toml"
    listed = tomllib.loads(requests.read_text(encoding="utf-8"))["request"]
    mine = [r for r in listed if path in r["expect"]]
    others = [r for r in listed if path not in r["expect"]][:OTHER_REQUESTS]
    return [
        TriggerQuery(query=r["query"], should_trigger=path in r["expect"]) for r in mine + others
    ]


@pytest.mark.corpus
def test_offline_results_agree_with_prepare_turns_first_suggestion_on_the_real_corpus() -> None:
    options = DiscoveryOptions(
        extra_roots=(str(REAL_SKILLS),), include_user=False, include_system=False
    )
    with Session.open(options=options, refresh="manual") as session:
        compared = 0
        for relpath in CORPUS_SKILLS:
            path = str(REAL_SKILLS / relpath)
            target = next(s for s in session.catalog.skills if s.path == path)
            queries = corpus_queries(relpath)
            run = offline_trigger_run(session, target, queries)
            for query, result in zip(queries, run.results, strict=True):
                suggestions = session.prepare_turn(query.query).suggestions
                first = suggestions[0].path if suggestions else None
                assert bool(result.triggers) is (first == path), query.query
                assert result.picked[0] == tuple(s.id for s in suggestions)
                compared += 1
            assert run.summary()["tp"] > 0  # the skill's own requests do pick it
    assert compared >= 3 * OTHER_REQUESTS
