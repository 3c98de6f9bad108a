"""The trigger check: listed requests, their outcomes, competitors and pairs."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest

from skillpack._model import Catalog, Root, Skill
from skillpack.index._search import SkillSearch
from skillpack.select._triggers import (
    TRIGGERS_FILE,
    Hit,
    TriggerRequest,
    check_triggers,
    listed_triggers,
)


def make_skill(name: str, description: str, **fields: Any) -> Skill:
    return Skill(
        name=name,
        description=description,
        path=f"/r/{name}/SKILL.md",
        dir=f"/r/{name}",
        real_path=f"/r/{name}/SKILL.md",
        root="/r",
        mtime_ns=1,
        size=1,
        **fields,
    )


# -- the lists ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "file_text", "expected"),
    [
        ({}, None, []),
        (
            {"metadata": {"triggers": ["ship it", "deploy the app"]}},
            None,
            [("ship it", "metadata.triggers"), ("deploy the app", "metadata.triggers")],
        ),
        (
            {"metadata": {"triggers": "deploy, release, roll back"}},
            None,
            [
                ("deploy", "metadata.triggers"),
                ("release", "metadata.triggers"),
                ("roll back", "metadata.triggers"),
            ],
        ),
        (
            {"metadata": {"triggers": "ship it, now\nroll back the release\n"}},
            None,
            [("ship it, now", "metadata.triggers"), ("roll back the release", "metadata.triggers")],
        ),
        ({"extra": {"triggers": ["ship it"]}}, None, [("ship it", "triggers")]),
        ({}, 'triggers = ["ship it", "  "]\n', [("ship it", TRIGGERS_FILE)]),
        (
            {"metadata": {"triggers": ["Ship it"]}},
            'triggers = ["ship it", "release"]\n',
            [("Ship it", "metadata.triggers"), ("release", TRIGGERS_FILE)],
        ),
    ],
    ids=[
        "none",
        "metadata-list",
        "metadata-commas",
        "metadata-lines",
        "top-level",
        "file",
        "duplicates-once",
    ],
)
def test_listed_requests_come_from_the_frontmatter_and_the_file(
    fields: dict[str, Any], file_text: str | None, expected: list[tuple[str, str]]
) -> None:
    requests, problems = listed_triggers(make_skill("s", "S.", **fields), file_text)

    assert [(r.text, r.source) for r in requests] == expected
    assert problems == ()


@pytest.mark.parametrize(
    ("fields", "file_text", "where"),
    [
        ({"metadata": {"triggers": {"a": 1}}}, None, "/r/s/SKILL.md"),
        ({"metadata": {"triggers": ["ok", 3]}}, None, "/r/s/SKILL.md"),
        ({}, "triggers = [", f"/r/s/{TRIGGERS_FILE}"),
        ({}, 'triggers = "one request"', f"/r/s/{TRIGGERS_FILE}"),
        ({}, "triggers = [1, 2]", f"/r/s/{TRIGGERS_FILE}"),
    ],
    ids=["mapping", "not-text", "bad-toml", "toml-string", "toml-numbers"],
)
def test_a_broken_list_is_a_problem_not_a_crash(
    fields: dict[str, Any], file_text: str | None, where: str
) -> None:
    requests, problems = listed_triggers(make_skill("s", "S.", **fields), file_text)

    assert requests == ()
    [problem] = problems
    assert (problem.code, problem.severity, problem.path) == ("triggers-invalid", "warning", where)
    assert "triggers = [" in problem.message


# -- the check ------------------------------------------------------------------------

DEPLOY = make_skill(
    "deploy-app",
    "Deploy the web app to production servers with zero downtime. Use when shipping a build.",
)
RELEASE = make_skill(
    "release-notes",
    "Write release notes and a changelog entry from merged pull requests. Use when tagging "
    "a release.",
)
ROLLOUT = make_skill(
    "rollout",
    "Deploy the web app to production servers in stages, watching error rates. Use when "
    "shipping a risky build.",
)
GARDEN = make_skill("gardening", "Water the tomato plants on the balcony every morning.")
FILLER = tuple(
    make_skill(f"{topic}-helper", f"Answer questions about {topic} in plain words.")
    for topic in ("tax", "chess", "yoga", "poetry", "knitting", "astronomy", "baking", "sailing")
)
"""Unrelated skills: BM25 needs a catalog where shared words are not in half of it."""
CATALOG = (DEPLOY, RELEASE, ROLLOUT, GARDEN, *FILLER)


def real_search(skills: Sequence[Skill]) -> Any:
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=lambda s: "")
    catalog = Catalog(skills=tuple(skills), roots=(Root(path="/r", scope="extra"),))

    def run(request: str, limit: int) -> list[Hit]:
        return [
            Hit(skill=r.skill, score=r.score, strong=r.match == "strong")
            for r in search.search(catalog, request, limit=limit)
        ]

    return run


def listed(*texts: str) -> tuple[TriggerRequest, ...]:
    return tuple(TriggerRequest(text=t, source=TRIGGERS_FILE) for t in texts)


def test_each_listed_request_is_picked_goes_elsewhere_or_picks_nothing() -> None:
    requests = listed(
        "write the changelog for the release",  # release-notes holds these words
        "deploy the web app with zero downtime",
        "book a table for two at eight",
    )

    report = check_triggers([DEPLOY], CATALOG, {DEPLOY.key: requests}, real_search(CATALOG))

    [check] = report.skills
    outcomes = [(r.outcome, r.picked.skill.name if r.picked else None) for r in check.requests]
    assert outcomes == [("other", "release-notes"), ("picked", "deploy-app"), ("nothing", None)]
    other = check.requests[0]
    assert other.terms == ("write", "changelog", "release")
    assert other.missing == ("write", "changelog", "release")
    assert check.requests[2].rank is None
    assert report.failed


def test_only_a_request_that_picks_another_skill_fails_the_check() -> None:
    requests = listed("deploy the web app with zero downtime", "book a table for two")

    report = check_triggers([DEPLOY], CATALOG, {DEPLOY.key: requests}, real_search(CATALOG))

    assert [r.outcome for r in report.skills[0].requests] == ["picked", "nothing"]
    assert not report.failed
    assert report.to_dict()["ok"] is True


def test_a_skill_without_listed_requests_still_gets_competitors_from_its_description() -> None:
    report = check_triggers([DEPLOY, GARDEN], CATALOG, {}, real_search(CATALOG))

    deploy, garden = report.skills
    assert deploy.requests == ()
    assert [(c.skill.name, c.via) for c in deploy.competitors] == [("rollout", "description")]
    assert garden.competitors == ()
    assert not report.failed  # competition alone never fails the check


def test_two_skills_that_find_each_other_are_one_pair() -> None:
    report = check_triggers([DEPLOY, ROLLOUT], CATALOG, {}, real_search(CATALOG))

    [pair] = report.pairs
    assert {s.name for s in pair.skills} == {"deploy-app", "rollout"}
    assert pair.via == ("description",)


def test_shared_words_are_the_probe_words_both_skills_hold_rarest_first() -> None:
    report = check_triggers([DEPLOY], CATALOG, {}, real_search(CATALOG))

    [competitor] = report.skills[0].competitors
    # Both hold deploy, web, app, production, servers, shipping and build (each in
    # 2 of the catalog's skills); "downtime" and "zero" only deploy-app does; "use"
    # is in most skills, so it comes last when it is listed at all.
    assert "downtime" not in competitor.terms and "zero" not in competitor.terms
    assert set(competitor.terms) <= {
        "deploy",
        "web",
        "app",
        "production",
        "servers",
        "shipping",
        "build",
        "use",
    }
    assert len(competitor.terms) == 6


def test_the_json_shape() -> None:
    requests = listed("write the changelog for the release")
    report = check_triggers([DEPLOY], CATALOG, {DEPLOY.key: requests}, real_search(CATALOG))

    data = report.to_dict()

    assert set(data) == {"ok", "summary", "skills", "pairs"}
    assert data["summary"] == {
        "skills": 1,
        "requests": 1,
        "picked": 0,
        "other": 1,
        "nothing": 0,
        "pairs": len(data["pairs"]),
        "lint": 0,
    }
    [skill] = data["skills"]
    assert set(skill) == {
        "name",
        "qualified_name",
        "path",
        "requests",
        "competitors",
        "lint",
        "problems",
    }
    [request] = skill["requests"]
    assert set(request) == {"request", "source", "outcome", "rank", "picked", "terms", "missing"}
    assert set(request["picked"]) == {"name", "qualified_name", "path", "score"}
    assert all(
        set(c) == {"name", "qualified_name", "path", "via", "ahead", "terms"}
        for c in skill["competitors"]
    )
