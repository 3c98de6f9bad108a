"""Skill search: rules, ranking, filters, query safety, the lazy index, and quality."""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import sqlite3
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_SKILLS
from skillpack._errors import UsageError
from skillpack._model import Catalog, CodexMetadata, Root, Scope, Skill
from skillpack.index import _query
from skillpack.index._cache import connect
from skillpack.index._search import BODY_CHARS, MAX_LIMIT, SearchResult, SkillSearch

ROOT = "/skills"


def make_skill(
    name: str,
    description: str = "A test skill.",
    *,
    folder: str | None = None,
    scope: Scope = "extra",
    root: str = ROOT,
    mtime_ns: int = 1,
    **fields: Any,
) -> Skill:
    folder = folder or f"{root}/{name}"
    return Skill(
        name=name,
        description=description,
        path=f"{folder}/SKILL.md",
        dir=folder,
        real_path=f"{folder}/SKILL.md",
        scope=scope,
        root=root,
        mtime_ns=mtime_ns,
        size=100,
        **fields,
    )


class Bodies:
    """An in-memory `read_body` that counts reads per skill key."""

    def __init__(self, bodies: dict[str, str] | None = None) -> None:
        self.bodies = bodies or {}
        self.reads: list[str] = []

    def __call__(self, skill: Skill) -> str:
        self.reads.append(skill.name)
        return self.bodies.get(skill.name, "# Steps\n\nDo the work.\n")


def catalog_of(skills: Iterable[Skill], roots: Iterable[str] = (ROOT,)) -> Catalog:
    return Catalog(skills=tuple(skills), roots=tuple(Root(path=r, scope="extra") for r in roots))


def searcher(bodies: Bodies | None = None, conn: sqlite3.Connection | None = None) -> SkillSearch:
    return SkillSearch(conn or sqlite3.connect(":memory:"), read_body=bodies or Bodies())


def names(results: Iterable[SearchResult]) -> list[str]:
    return [r.skill.name for r in results]


DEPLOY_CATALOG = catalog_of(
    [
        make_skill("shipper", "Deploy the web app to production servers."),
        make_skill("deploy-tools", "Helpers for release pipelines."),
        make_skill("deploy", "Push a release out."),
        make_skill("gardening", "Water the tomato plants on the balcony."),
    ]
)


# -- rules and ranking ------------------------------------------------------------


def test_rules_rank_exact_name_then_name_prefix_then_text() -> None:
    results = searcher().search(DEPLOY_CATALOG, "deploy")

    assert names(results) == ["deploy", "deploy-tools", "shipper"]
    assert results[0].reasons[0] == "exact_name"
    assert results[1].reasons[0] == "name_prefix"
    assert results[2].reasons == ("text_match:description",)


def test_exact_path_outranks_an_exact_name() -> None:
    target = DEPLOY_CATALOG.skills[0]
    catalog = catalog_of([*DEPLOY_CATALOG.skills, make_skill("x", folder=f"{ROOT}/deploy-x")])

    for query in (target.path, target.dir, target.dir + "/"):
        results = searcher().search(catalog, query)
        assert results[0].skill == target
        assert results[0].reasons[0] == "exact_path"


def test_exact_name_matches_case_insensitively_and_by_qualified_name() -> None:
    plugin_skill = make_skill("lint", plugin="tools")
    catalog = catalog_of([plugin_skill, make_skill("other", "Unrelated.")])

    assert searcher().search(catalog, "LINT")[0].reasons[0] == "exact_name"
    assert searcher().search(catalog, "tools:lint")[0].skill == plugin_skill


def test_spaces_in_a_query_match_hyphens_in_names() -> None:
    catalog = catalog_of([make_skill("react-native-expert", "Mobile apps.")])

    results = searcher().search(catalog, "React Native")

    assert results[0].reasons[0] == "name_prefix"


def test_scores_descend_and_separate_the_rule_tiers() -> None:
    results = searcher().search(DEPLOY_CATALOG, "deploy")

    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert [int(s) for s in scores] == [2, 1, 0]


def test_reasons_name_every_column_holding_a_query_word() -> None:
    bodies = Bodies(
        {
            "in-body": "Intro text.\n\nRun the flamingo migration carefully.\n",
            "in-heading": "# Flamingo setup\n\nSteps follow.\n",
        }
    )
    catalog = catalog_of(
        [
            make_skill("in-body", "Database helper."),
            make_skill("in-heading", "Bird helper."),
            make_skill("in-when", "Helper.", when_to_use="When flamingos appear."),
            make_skill("flamingo-kit", "Flamingo care."),
        ]
    )

    results = {r.skill.name: r.reasons for r in searcher(bodies).search(catalog, "flamingo")}

    assert results["in-body"] == ("text_match:body",)
    assert results["in-heading"] == ("text_match:body",)
    assert results["in-when"] == ("text_match:when_to_use",)
    assert results["flamingo-kit"] == ("name_prefix", "text_match:name", "text_match:description")


def test_ties_break_on_scope_rank_then_path() -> None:
    text = "Rotate the signing keys of the vault."
    skills = [
        make_skill("keys", text, scope="user", folder="/u/a/keys"),
        make_skill("keys", text, scope="repo", folder="/r/b/keys"),
        make_skill("keys", text, scope="repo", folder="/r/a/keys"),
    ]

    results = searcher().search(catalog_of(skills, roots=()), "rotate signing keys")

    assert [r.skill.path for r in results] == [
        "/r/a/keys/SKILL.md",
        "/r/b/keys/SKILL.md",
        "/u/a/keys/SKILL.md",
    ]


def test_to_dict_has_the_tool_result_shape() -> None:
    result = searcher().search(DEPLOY_CATALOG, "deploy")[0]

    assert result.to_dict() == {
        "name": "deploy",
        "qualified_name": "extra:deploy",
        "path": f"{ROOT}/deploy/SKILL.md",
        "scope": "extra",
        "description": "Push a release out.",
        "score": round(result.score, 4),
        "reasons": list(result.reasons),
        "match": "strong",
    }


# -- limit, scope and visibility --------------------------------------------------


def test_limit_defaults_to_eight_and_accepts_the_maximum() -> None:
    catalog = catalog_of(make_skill(f"tool-{i:02d}", "Format code.") for i in range(60))

    assert len(searcher().search(catalog, "tool")) == 8
    assert len(searcher().search(catalog, "tool", limit=MAX_LIMIT)) == MAX_LIMIT
    assert len(searcher().search(catalog, "tool", limit=3)) == 3


@pytest.mark.parametrize("limit", [0, -1, MAX_LIMIT + 1, True, 2.5, "3"], ids=repr)
def test_a_limit_outside_one_to_fifty_is_a_usage_error(limit: Any) -> None:
    with pytest.raises(UsageError, match="limit"):
        searcher().search(DEPLOY_CATALOG, "deploy", limit=limit)


def test_scope_filter_keeps_only_that_scope() -> None:
    catalog = catalog_of(
        [
            make_skill("deploy", "Ship it.", scope="user", folder="/u/deploy"),
            make_skill("deploy", "Ship it.", scope="repo", folder="/r/deploy"),
        ]
    )

    assert [r.skill.scope for r in searcher().search(catalog, "deploy", scope="user")] == ["user"]
    with pytest.raises(UsageError, match="scope"):
        searcher().search(catalog, "deploy", scope="galaxy")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "hidden",
    [
        {"disable_model_invocation": True},
        {"codex": CodexMetadata(allow_implicit_invocation=False)},
    ],
    ids=["disable-model-invocation", "codex-no-implicit"],
)
def test_skills_the_model_may_not_invoke_are_never_returned(hidden: dict[str, Any]) -> None:
    catalog = catalog_of([make_skill("deploy", "Ship the app.", **hidden)])

    assert searcher().search(catalog, "deploy") == ()
    assert searcher().search(catalog, f"{ROOT}/deploy/SKILL.md") == ()


def test_is_visible_false_hides_a_skill_from_rules_and_text() -> None:
    results = searcher().search(
        DEPLOY_CATALOG, "deploy", is_visible=lambda s: s.name not in {"deploy", "shipper"}
    )

    assert names(results) == ["deploy-tools"]


# -- queries ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "finds_deploy"),
    [
        ('"deploy', True),
        ('deploy"', True),
        ("deploy*", True),
        ("-deploy", True),
        ("^deploy", True),
        ("(deploy)", True),
        ("deploy AND OR NOT", True),
        ("NEAR(deploy production)", False),
        ("name:deploy", False),
        ("{name}: deploy", False),
        ("deploy; DROP TABLE search_doc; --", False),
        ("deploy + production", False),
        ("it's the app's deploy", False),
        ("*", False),
        ("(((", False),
        ("\x00", False),
    ],
    ids=repr,
)
def test_queries_with_fts_syntax_never_raise(query: str, finds_deploy: bool) -> None:
    results = searcher().search(DEPLOY_CATALOG, query)

    if finds_deploy:
        assert names(results)[0] == "deploy"


@pytest.mark.parametrize("query", ["", "   ", "\n\t"], ids=repr)
def test_an_empty_query_is_a_usage_error(query: str) -> None:
    with pytest.raises(UsageError, match="query is empty"):
        searcher().search(DEPLOY_CATALOG, query)


@pytest.mark.parametrize(
    "query", ["book me a flight to Lisbon next Tuesday", "the of and to", "???"]
)
def test_a_request_no_skill_fits_gets_no_strong_result(query: str) -> None:
    assert [r for r in searcher().search(DEPLOY_CATALOG, query) if r.match == "strong"] == []


def test_a_request_mostly_in_words_no_skill_holds_gets_no_strong_result() -> None:
    # "zorblax" is in no skill: it weighs as much as the rest of the request, so
    # the words the shipper holds, a strong match alone, are too small a share.
    fits = searcher().search(DEPLOY_CATALOG, "deploy the web app to production")
    unknown = searcher().search(DEPLOY_CATALOG, "deploy the web app to production from my zorblax")

    assert (fits[0].skill.name, fits[0].match) == ("shipper", "strong")
    assert [(r.skill.name, r.match) for r in unknown[:1]] == [("shipper", "weak")]


@pytest.mark.parametrize(
    ("relevance", "known", "match"),
    [
        (_query.STRONG_RELEVANCE, _query.KNOWN_SHARE, "strong"),
        (_query.STRONG_RELEVANCE - 0.01, 1.0, "weak"),
        (5.0, _query.KNOWN_SHARE - 0.01, "weak"),
    ],
)
def test_a_text_match_is_strong_when_relevance_and_known_share_both_clear_their_bar(
    relevance: float, known: float, match: str
) -> None:
    assert _query.match_of(_query.TIER_TEXT, relevance, known) == match
    assert _query.match_of(_query.TIER_NAME_PREFIX, 0.0, 0.0) == "strong"


def test_rule_matches_are_strong() -> None:
    results = searcher().search(DEPLOY_CATALOG, "deploy")

    assert [(r.reasons[0], r.match) for r in results[:2]] == [
        ("exact_name", "strong"),
        ("name_prefix", "strong"),
    ]


def test_a_request_sharing_few_words_with_a_skill_gets_it_as_a_weak_result() -> None:
    # One word of six matches, in a description: ranked and explained, not a fit.
    query = "water the office ficus while everyone is on holiday in august"

    results = searcher().search(DEPLOY_CATALOG, query)

    assert [(r.skill.name, r.match) for r in results] == [("gardening", "weak")]
    assert results[0].reasons == ("text_match:description",)


def test_stemming_matches_other_forms_of_a_word() -> None:
    assert names(searcher().search(DEPLOY_CATALOG, "deploying apps to servers"))[0] == "shipper"


# -- the lazy, persistent index ---------------------------------------------------


def test_no_body_is_read_before_the_first_search() -> None:
    bodies = Bodies()
    search = searcher(bodies)

    assert bodies.reads == []
    search.search(DEPLOY_CATALOG, "deploy")
    assert sorted(bodies.reads) == sorted(s.name for s in DEPLOY_CATALOG.skills)


def test_a_second_search_reads_no_body() -> None:
    bodies = Bodies()
    search = searcher(bodies)
    search.search(DEPLOY_CATALOG, "deploy")
    bodies.reads.clear()

    search.search(DEPLOY_CATALOG, "production servers")
    search.search(catalog_of(DEPLOY_CATALOG.skills), "release")  # same versions, new catalog

    assert bodies.reads == []


def test_a_new_searcher_on_the_same_file_reads_no_body(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    first = Bodies()
    SkillSearch(connect(path), read_body=first).search(DEPLOY_CATALOG, "deploy")
    second = Bodies()

    results = SkillSearch(connect(path), read_body=second).search(DEPLOY_CATALOG, "production")

    assert first.reads and second.reads == []
    assert names(results) == ["shipper"]


def test_a_changed_file_version_is_reindexed_alone() -> None:
    bodies = Bodies({"gardening": "Prune the roses.\n"})
    search = searcher(bodies)
    search.search(DEPLOY_CATALOG, "deploy")
    bodies.reads.clear()
    bodies.bodies["gardening"] = "Harvest the pumpkins in autumn.\n"
    changed = [
        dataclasses.replace(s, mtime_ns=2) if s.name == "gardening" else s
        for s in DEPLOY_CATALOG.skills
    ]

    results = search.search(catalog_of(changed), "harvest pumpkins")

    assert bodies.reads == ["gardening"]
    assert names(results) == ["gardening"]
    assert search.search(catalog_of(changed), "prune roses") == ()


def test_a_deleted_skill_is_removed_from_the_index() -> None:
    conn = sqlite3.connect(":memory:")
    search = searcher(conn=conn)
    search.search(DEPLOY_CATALOG, "deploy")
    remaining = [s for s in DEPLOY_CATALOG.skills if s.name != "shipper"]

    results = search.search(catalog_of(remaining), "production servers")

    assert results == ()
    keys = {k for (k,) in conn.execute("SELECT key FROM search_doc")}
    assert f"{ROOT}/shipper/SKILL.md" not in keys
    assert conn.execute("SELECT count(*) FROM search_head").fetchone()[0] == len(remaining)


def test_rows_of_other_roots_survive_for_the_next_project(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    other = catalog_of([make_skill("kiln", "Fire pottery.", root="/other")], roots=["/other"])
    SkillSearch(connect(path), read_body=Bodies()).search(DEPLOY_CATALOG, "deploy")
    SkillSearch(connect(path), read_body=Bodies()).search(other, "pottery")
    bodies = Bodies()

    SkillSearch(connect(path), read_body=bodies).search(DEPLOY_CATALOG, "deploy")

    assert bodies.reads == []


def test_an_unreadable_body_is_indexed_by_frontmatter_and_retried() -> None:
    def failing(skill: Skill) -> str:
        raise OSError("gone")

    conn = sqlite3.connect(":memory:")
    results = SkillSearch(conn, read_body=failing).search(DEPLOY_CATALOG, "production servers")
    assert names(results) == ["shipper"]
    bodies = Bodies()

    SkillSearch(conn, read_body=bodies).search(DEPLOY_CATALOG, "deploy")

    assert sorted(bodies.reads) == sorted(s.name for s in DEPLOY_CATALOG.skills)


def test_an_index_of_another_version_is_dropped_and_rebuilt() -> None:
    conn = sqlite3.connect(":memory:")
    searcher(conn=conn).search(DEPLOY_CATALOG, "deploy")
    conn.execute("UPDATE search_meta SET value = 'old' WHERE key = 'version'")
    bodies = Bodies()

    results = searcher(bodies, conn=conn).search(DEPLOY_CATALOG, "production")

    assert len(bodies.reads) == len(DEPLOY_CATALOG.skills)
    assert names(results) == ["shipper"]


def test_search_works_inside_a_transaction_the_caller_left_open() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE mine (x)")
    conn.execute("INSERT INTO mine VALUES (1)")
    assert conn.in_transaction

    assert names(searcher(conn=conn).search(DEPLOY_CATALOG, "production")) == ["shipper"]
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM mine").fetchone()[0] == 0


# -- body text: what is indexed, and the bounded read ------------------------------


def test_only_the_first_body_chars_are_indexed() -> None:
    filler = "Routine steps follow here. " * (BODY_CHARS // 20)
    bodies = Bodies(
        {
            "early": "Calibrate the telescope mirrors.\n" + filler,
            "late": filler + "\nCalibrate the microscope lenses.\n",
        }
    )
    catalog = catalog_of([make_skill("early"), make_skill("late")])
    search = searcher(bodies)

    assert names(search.search(catalog, "calibrate telescope mirrors")) == ["early"]
    assert names(search.search(catalog, "microscope lenses")) == []


def test_a_given_read_head_is_used_instead_of_read_body() -> None:
    asked: list[tuple[str, int]] = []

    def read_head(skill: Skill, max_chars: int) -> str:
        asked.append((skill.name, max_chars))
        return "Feed the flamingos at noon. " * 500

    def no_whole_body(skill: Skill) -> str:
        raise AssertionError("read_body called although read_head was given")

    search = SkillSearch(sqlite3.connect(":memory:"), read_body=no_whole_body, read_head=read_head)

    assert names(search.search(DEPLOY_CATALOG, "flamingos at noon"))
    assert sorted(asked) == sorted((s.name, BODY_CHARS) for s in DEPLOY_CATALOG.skills)


def test_the_index_stays_consistent_through_changes_and_deletions() -> None:
    conn = sqlite3.connect(":memory:")
    bodies = Bodies({s.name: f"Body of {s.name}, version one." for s in DEPLOY_CATALOG.skills})
    search = searcher(bodies, conn=conn)
    search.search(DEPLOY_CATALOG, "deploy")
    bodies.bodies["gardening"] = "Harvest the pumpkins."
    changed = [
        dataclasses.replace(s, mtime_ns=2) if s.name == "gardening" else s
        for s in DEPLOY_CATALOG.skills
        if s.name != "shipper"
    ]

    assert names(search.search(catalog_of(changed), "harvest pumpkins")) == ["gardening"]
    # A row taken out of the stored text before the FTS index would leave postings
    # behind: words of the old versions must match exactly the rows holding them.
    for table, content, column, word in (
        ("search_head", "search_content", "description", "production"),
        ("search_text", "search_body", "body", "version"),
    ):
        matched = {
            r for (r,) in conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (word,))
        }
        holding = {
            r
            for (r,) in conn.execute(
                f"SELECT id FROM {content} WHERE {column} LIKE ?", (f"%{word}%",)
            )
        }
        assert matched == holding
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
    assert len(holding) == 2
    for content in ("search_doc", "search_content", "search_body"):
        assert conn.execute(f"SELECT count(*) FROM {content}").fetchone()[0] == len(changed)


def terms_of(search: SkillSearch, words: list[str]) -> list[Any]:
    """The query terms `search` makes of `words` for the catalog it last searched."""
    state = search._state
    assert state is not None
    return search._terms(state, words)


def frequencies(search: SkillSearch, words: list[str]) -> dict[str, tuple[int, int]]:
    return {t.word: (t.head_df, t.text_df) for t in terms_of(search, words)}


def test_document_frequencies_are_counted_from_the_index_as_it_is_now() -> None:
    bodies = Bodies({"shipper": "Deploying is easy.", "gardening": "Water daily."})
    search = searcher(bodies)
    search.search(DEPLOY_CATALOG, "deploy water")
    # "deploy" in three frontmatters (names and a description), "deploying" in one
    # body; "water" in one description and one body.
    assert frequencies(search, ["deploy", "water"]) == {"deploy": (3, 1), "water": (1, 1)}

    bodies.bodies["gardening"] = "Deploy the sprinklers."
    changed = catalog_of(
        dataclasses.replace(s, mtime_ns=2) if s.name == "gardening" else s
        for s in DEPLOY_CATALOG.skills
    )
    search.search(changed, "deploy water")
    # Now a body holds "deploy" itself: the bodies are searched for that word alone.
    assert frequencies(search, ["deploy", "water"]) == {"deploy": (3, 1), "water": (1, 0)}


@pytest.mark.parametrize(
    ("body", "query"),
    [
        ("Drafted by hand.", "drafts"),
        ("We are baking bread.", "bake"),
        ("Deploying twice a day.", "deployed"),
        ("Deploy it.", "deploying"),
        ("All libraries are pinned.", "library"),
        ("The café opens early.", "cafe"),
        ("THE CAFE OPENS", "café"),
    ],
)
def test_a_query_word_no_body_holds_matches_the_body_forms_of_its_stem(
    body: str, query: str
) -> None:
    catalog = catalog_of([make_skill("alpha", "Unrelated words."), make_skill("beta", "Other.")])
    search = searcher(Bodies({"alpha": body}))
    results = search.search(catalog, query)
    assert names(results) == ["alpha"]
    assert results[0].reasons == ("text_match:body",)
    ((_, text_df),) = frequencies(search, [query]).values()
    assert text_df == 1


def test_body_forms_are_the_words_with_the_same_stem_not_every_word_with_the_prefix() -> None:
    catalog = catalog_of(
        [make_skill("alpha", "One."), make_skill("beta", "Two."), make_skill("gamma", "Three.")]
    )
    search = searcher(Bodies({"alpha": "Testing matters.", "beta": "A testament.", "gamma": "Go."}))
    assert names(search.search(catalog, "tests")) == ["alpha"]
    (term,) = terms_of(search, ["tests"])
    assert (term.stem, term.forms, term.text_df) == ("test", ("testing",), 1)


def test_a_query_word_some_body_holds_is_searched_as_typed() -> None:
    # The exact word ranks the skill that uses it; other forms of it do not dilute it.
    catalog = catalog_of([make_skill("alpha", "One."), make_skill("beta", "Two.")])
    search = searcher(Bodies({"alpha": "Interrupting people.", "beta": "Interrupts happen."}))
    assert names(search.search(catalog, "interrupting")) == ["alpha"]
    (term,) = terms_of(search, ["interrupting"])
    assert (term.forms, term.text_df) == (("interrupting",), 1)


class ThreadRecordingBodies(Bodies):
    def __init__(self, bodies: dict[str, str] | None = None) -> None:
        super().__init__(bodies)
        self.threads: set[str] = set()

    def __call__(self, skill: Skill) -> str:
        self.threads.add(threading.current_thread().name)
        return super().__call__(skill)


def test_a_large_build_reads_bodies_on_a_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("skillpack.index._fts.READ_AHEAD_MIN", 3)
    bodies = ThreadRecordingBodies({"gardening": "Prune the roses in spring."})
    results = searcher(bodies).search(DEPLOY_CATALOG, "prune roses")

    assert names(results) == ["gardening"]
    assert bodies.threads == {"skillpack-search-read-ahead"}
    assert sorted(bodies.reads) == sorted(s.name for s in DEPLOY_CATALOG.skills)


def test_a_small_build_reads_bodies_on_the_calling_thread() -> None:
    bodies = ThreadRecordingBodies()
    searcher(bodies).search(DEPLOY_CATALOG, "deploy")

    assert bodies.threads == {threading.current_thread().name}


@pytest.mark.parametrize("read_ahead_min", [1, 1000], ids=["worker-thread", "calling-thread"])
def test_a_failing_body_read_fails_the_build_and_leaves_the_index_as_it_was(
    monkeypatch: pytest.MonkeyPatch, read_ahead_min: int
) -> None:
    monkeypatch.setattr("skillpack.index._fts.READ_AHEAD_MIN", read_ahead_min)
    conn = sqlite3.connect(":memory:")

    def broken(skill: Skill) -> str:
        raise RuntimeError(f"reader bug on {skill.name}")

    with pytest.raises(RuntimeError, match="reader bug"):
        SkillSearch(conn, read_body=broken).search(DEPLOY_CATALOG, "deploy")
    assert conn.execute("SELECT count(*) FROM search_doc").fetchone()[0] == 0
    # The next searcher on the same connection builds the index from scratch.
    assert names(searcher(conn=conn).search(DEPLOY_CATALOG, "tomato"))[0] == "gardening"


def test_a_word_in_too_many_descriptions_is_searched_in_names_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Scoring every description holding a very common word is what made such
    # queries slow on 10,000 skills; in names the word still says something.
    monkeypatch.setattr("skillpack.index._query.HEAD_BUDGET", 3)
    catalog = catalog_of(
        [make_skill(f"tool-{i}", "Writes the weekly reports for the team.") for i in range(5)]
        + [make_skill("reports-mailer", "Sends documents by mail.")]
    )
    conn = sqlite3.connect(":memory:")
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    results = searcher(conn=conn).search(catalog, "reporting")

    assert names(results) == ["reports-mailer"]
    assert results[0].reasons == ("text_match:name",)
    head_queries = [s for s in statements if "FROM search_head WHERE" in s]
    assert head_queries and all('name : "reporting"' in q for q in head_queries)


def test_a_new_index_sets_a_pending_data_size_that_fits_a_large_build() -> None:
    conn = sqlite3.connect(":memory:")
    searcher(conn=conn).search(DEPLOY_CATALOG, "deploy")
    for table in ("search_head", "search_text"):
        (size,) = conn.execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'").fetchone()
        assert size == 16 * 1024 * 1024


@pytest.mark.parametrize(
    ("text", "prefixes", "expected"),
    [
        ("deploy the app", ["dep"], True),
        ("we redeploy", ["deploy"], False),
        ("snake_deploy", ["deploy"], False),
        ("x-deploy", ["deploy"], True),
        ("redeploy, then deploy", ["deploy"], True),
        ("", ["deploy"], False),
        ("anything", [], False),
    ],
    ids=[
        "start",
        "inside-a-word",
        "after-underscore",
        "after-hyphen",
        "second-hit",
        "empty",
        "no-prefixes",
    ],
)
def test_a_word_start_is_found_only_at_a_word_boundary(
    text: str, prefixes: list[str], expected: bool
) -> None:
    assert _query.starts_word(text, prefixes) is expected


@pytest.mark.parametrize("enabled", [True, False], ids=["enabled", "disabled"])
def test_a_build_leaves_garbage_collection_as_it_found_it(enabled: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        searcher().search(DEPLOY_CATALOG, "deploy")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


# -- quality on the real corpus ---------------------------------------------------


def _load_eval() -> Any:
    path = Path(__file__).resolve().parents[2] / "eval" / "search_eval.py"
    spec = importlib.util.spec_from_file_location("search_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.corpus
def test_search_beats_the_name_description_baseline_on_real_requests() -> None:
    report = _load_eval().run(REAL_SKILLS)
    ours = report["skillpack"]["held_out"]
    base = report["baseline"]["held_out"]

    assert ours["recall_at_1"] >= base["recall_at_1"]
    assert ours["recall_at_5"] >= base["recall_at_5"]
    assert ours["mrr"] >= base["mrr"]
    # Measured on the held-out half (201 requests): recall@1 0.686, recall@5 0.829,
    # MRR 0.749, a strong first result for 0.869 of the answerable requests, no
    # strong result for 0.577 of the no-fit ones. Pinned a little lower so an honest
    # change has room and a regression does not.
    assert ours["recall_at_1"] >= 0.66
    assert ours["recall_at_5"] >= 0.80
    assert ours["mrr"] >= 0.72
    assert ours["fit_strong_first"] >= 0.84
    assert ours["nofit_no_strong"] >= 0.53
    assert ours["fit_with_no_results"] == 0


def test_every_eval_request_is_in_one_half_of_the_split() -> None:
    module = _load_eval()
    requests = module.load_requests(module.DEFAULT_REQUESTS)  # raises on an unsplit one
    halves = {r.half for r in requests}

    assert halves == {"tune", "held_out"}
    tune = sum(1 for r in requests if r.half == "tune")
    assert abs(tune - (len(requests) - tune)) <= 2
