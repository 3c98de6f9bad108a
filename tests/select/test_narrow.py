"""Narrowing a list of skills by a typed name: the resolver's matching, tier by tier."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_resolve import make

from skillpack._model import Catalog, Skill
from skillpack.select._narrow import SkillNames, typed_id
from skillpack.select._resolve import mention_for

CATALOG = Catalog(
    skills=(
        make("pdf"),
        make("pdf-tools"),
        make("edit-pdf"),
        make("deploy-app"),
        make("lint", plugin="acme"),
        make("code_review"),
        make("pdf", scope="user"),
    )
)
NAMES = SkillNames(CATALOG.skills)


def shown(found: Sequence[tuple[Skill, str]]) -> list[tuple[str, str]]:
    return [(skill.qualified_name, tier) for skill, tier in found]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # exact first (every scope), then prefix, then inside; catalog order within
        (
            "pdf",
            [
                ("repo:pdf", "exact"),
                ("user:pdf", "exact"),
                ("repo:pdf-tools", "prefix"),
                ("repo:edit-pdf", "substring"),
            ],
        ),
        ("PDF-T", [("repo:pdf-tools", "prefix")]),
        ("$deploy", [("repo:deploy-app", "prefix")]),
        ("/deploy-app", [("repo:deploy-app", "exact")]),
        # one letter only starts names: inside a name it says nothing
        ("d", [("repo:deploy-app", "prefix")]),
        ("ep", [("repo:deploy-app", "substring")]),
        # spaces and `_` read as `-`, both sides
        ("code review", [("repo:code_review", "exact")]),
        # a qualified id matches scope or plugin namespaces
        ("acme:lint", [("acme:lint", "exact")]),
        ("repo:lint", []),  # a plugin skill's qualified id is its plugin's
        ("user:p", [("user:pdf", "prefix")]),
        ("", []),
        ("   ", []),
        ("zzz", []),
    ],
)
def test_names_match_exact_then_prefix_then_inside(
    query: str, expected: list[tuple[str, str]]
) -> None:
    assert shown(NAMES.match(query)) == expected


def test_a_qualified_prefix_names_the_namespace() -> None:
    assert shown(NAMES.match("acme:")) == [("acme:lint", "prefix")]
    assert [n for n, _ in shown(NAMES.match("repo:"))] == [  # catalog order
        "repo:code_review",
        "repo:deploy-app",
        "repo:edit-pdf",
        "repo:pdf",
        "repo:pdf-tools",
    ]


def test_near_misses_are_the_resolvers_close_names() -> None:
    assert [s.name for s in NAMES.near_misses("deplyo-app")] == ["deploy-app"]
    assert NAMES.near_misses("qqqqqq") == []
    assert NAMES.near_misses("") == []


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("$Code Review", "code-review"), ("/a_b", "a-b"), ("  x ", "x"), ("$", "")],
)
def test_typed_id_reads_a_query_as_an_id(typed: str, expected: str) -> None:
    assert typed_id(typed) == expected


def test_mention_is_the_shortest_id_that_picks_the_skill() -> None:
    by_name = {s.qualified_name: s for s in CATALOG.skills}
    assert mention_for(by_name["repo:deploy-app"], CATALOG) == "$deploy-app"
    assert mention_for(by_name["acme:lint"], CATALOG) == "$acme:lint"
    # the user's pdf is shadowed by the repo's: only its scope picks it
    assert mention_for(by_name["user:pdf"], CATALOG) == "$user:pdf"


def test_mention_falls_back_to_a_link_when_only_the_path_tells_skills_apart() -> None:
    a = make("twin")
    b = make("twin", folder="b/twin")
    twins = Catalog(skills=(a, b))
    assert mention_for(b, twins) == f"[$twin]({b.path})"
