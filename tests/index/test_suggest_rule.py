"""The suggestion rule (`pick_suggestions`) over a search's ranking, pure."""

from __future__ import annotations

import sqlite3

import pytest
from test_search import make_skill

from skillpack._model import Catalog, Root
from skillpack.index._search import SearchResult, SkillSearch
from skillpack.index._suggest import (
    MIN_CLAIM,
    MIN_FIT,
    MIN_FIT_MANY,
    Suggestion,
    fit_of,
    fits,
    pick_suggestions,
    suggestion_note,
    suggestions_of,
)


def result(
    name: str,
    *,
    relevance: float,
    coverage: float,
    held: int = 2,
    tier: int = 0,
    claim: float = 0.0,
) -> SearchResult:
    return SearchResult(
        skill=make_skill(name, f"Does {name}."),
        score=tier + relevance / (1 + relevance),
        reasons=(),
        match="strong",
        relevance=relevance,
        coverage=coverage,
        held=held,
        claim=claim,
    )


def test_fit_is_coverage_times_the_root_of_relevance() -> None:
    assert fit_of(result("a", relevance=4.0, coverage=0.5)) == pytest.approx(1.0)
    assert fit_of(result("a", relevance=0.0, coverage=1.0)) == 0.0
    assert fit_of(result("a", relevance=2.25, coverage=0.4)) == pytest.approx(0.6)


def test_only_results_whose_fit_clears_the_threshold_are_picked_in_rank_order() -> None:
    strong = result("strong", relevance=4.0, coverage=0.8)
    weak = result("weak", relevance=4.0, coverage=0.1)
    second = result("second", relevance=1.0, coverage=0.7)
    assert pick_suggestions([strong, weak, second], limit=3) == (strong, second)
    assert pick_suggestions([weak, strong], limit=1) == ()  # only the first `limit` count
    assert pick_suggestions([strong, second], limit=0) == ()
    assert pick_suggestions([strong], limit=3, accept=lambda r: False) == ()


def test_more_words_in_the_frontmatter_let_a_lower_fit_through() -> None:
    # fit 0.4: between the two thresholds
    assert MIN_FIT_MANY < fit_of(result("a", relevance=1.0, coverage=0.4)) < MIN_FIT
    assert not fits(result("a", held=2, relevance=1.0, coverage=0.4))
    assert fits(result("a", held=3, relevance=1.0, coverage=0.4))
    # one word, however well it matches, is not enough
    assert not fits(result("a", held=1, relevance=9.0, coverage=1.0))


def test_distinctive_words_the_frontmatter_claims_let_a_low_fit_through() -> None:
    # a long request dilutes coverage; two rare words the skill says it is for do not
    def low(held: int, claim: float) -> SearchResult:
        return result("a", relevance=1.0, coverage=0.2, held=held, claim=claim)

    assert not fits(low(2, 0.0))
    assert fits(low(2, MIN_CLAIM))
    assert not fits(low(2, MIN_CLAIM - 0.01))
    # one word, however rare, is not enough
    assert not fits(low(1, 5.0))


def test_claim_counts_rare_words_and_a_name_word_twice() -> None:
    filler = [make_skill(f"filler-{i}", f"Handles case {i} of the build.") for i in range(30)]
    named = make_skill("rebase-helper", "Finishes a stopped rebase with conflicts.")
    plain = make_skill("conflict-fixer", "Finishes a stopped rebase with conflicts.")
    catalog = Catalog(skills=(*filler, named, plain), roots=(Root(path="/", scope="extra"),))
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=lambda skill: "")
    by_name = {r.skill.name: r for r in search.search(catalog, "rebase stopped", limit=5)}
    # the same words in the frontmatter; "rebase" also names the first skill
    assert by_name["rebase-helper"].held == by_name["conflict-fixer"].held == 2
    assert by_name["rebase-helper"].claim > by_name["conflict-fixer"].claim > 1.0
    common = {r.skill.name: r for r in search.search(catalog, "build case", limit=40)}
    assert 0 < common["filler-1"].claim < 0.5  # words most skills hold claim little


def test_a_name_or_path_rule_match_is_always_picked() -> None:
    named = result("pdf", relevance=0.0, coverage=0.0, tier=2)
    assert fit_of(named) < MIN_FIT
    assert pick_suggestions([named], limit=3) == (named,)


def test_suggestions_carry_the_id_that_picks_the_skill_and_the_note_names_them() -> None:
    one = make_skill("twin", "Twin one. " * 40, folder="/a/twin")
    other = make_skill("twin", "Twin two.", folder="/b/twin")
    plain = make_skill("solo", "Solo.")
    catalog = Catalog(skills=(one, other, plain), roots=(Root(path="/", scope="extra"),))
    picked = [SearchResult(skill=s, score=0.5, reasons=(), match="strong") for s in (one, plain)]
    suggestions = suggestions_of(picked, catalog)
    assert [s.id for s in suggestions] == [one.path, "solo"]  # a tie: only the path picks it
    note = suggestion_note(suggestions)
    assert note.splitlines()[0].startswith("Skills that may fit this request")
    assert len(note.splitlines()[1]) < 200 and note.splitlines()[1].endswith("…")
    assert suggestion_note(()) == ""
    assert Suggestion(id="a", name="a", path="/a", description="", score=1.23456).to_dict() == {
        "id": "a",
        "name": "a",
        "path": "/a",
        "description": "",
        "score": 1.2346,
    }
