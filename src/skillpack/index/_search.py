"""`skill_search`: name/path rules plus SQLite FTS5 (BM25) over the skills' text.

Ranking, best first: `exact_path` (the query is a skill's SKILL.md path, real path
or folder) > `exact_name` (name or qualified name, case-insensitive) >
`name_prefix` > text match. Text match is FTS5 BM25 over four weighted columns:
name, description, when_to_use (table `search_head`) and the opening of the body
(table `search_text`); the two tables' scores add up. Ties break on scope rank,
then path.

The FTS rows live in the same SQLite file as the parse cache; `_fts.py` keeps them
up to date with each catalog searched (lazily, on its first search), reading only
the bodies of skills whose version is not indexed yet, and only their first
`BODY_CHARS` characters when a `read_head` is given.

What keeps a query within a couple of milliseconds on 10,000 skills: FTS5 reads a
term's whole posting list and scores every matching row, so the words that occur
in most documents (long lists, almost no BM25 weight) are left out of a table's
query, within a budget of documents read per table (`HEAD_BUDGET`, `TEXT_BUDGET`).
A term's document frequencies are counted from the FTS vocabularies when a query
first uses it, and kept for the catalog's later queries (`_terms.Vocabulary`): the
build does not count every term's. Results come from SQL with `ORDER BY ... LIMIT`;
Python only maps row ids back to skills through a dict built once per catalog.

Every result is marked `strong` or `weak` (`_query.match_of`): a rule match, or
a text match whose BM25 score divided by the query's total IDF mass (every
informative word, matched or not) reaches `STRONG_RELEVANCE` while words some
skill holds make at least `KNOWN_SHARE` of that mass, is strong. Weaker
text matches are still returned, ranked and explained, so the caller can judge;
"no skill fits" is a list without a strong result, never an empty list for a
request some words of which a skill holds.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import SkillpackError, UsageError
from .._limits import MAX_QUERY_CHARS, SEARCH_LIMIT, SEARCH_MAX_LIMIT
from .._model import SCOPE_RANK, SCOPES, Catalog, Scope, Skill, bare_named
from ..select._words import folded, norm_name, query_words
from ._fts import damaged, database_file, ensure_schema, sync
from ._query import (
    COLUMN_WEIGHTS,
    COLUMNS,
    HEAD_COLUMNS,
    NAME_CLAIM,
    TEXT_COLUMNS,
    TIER_EXACT_NAME,
    TIER_EXACT_PATH,
    TIER_NAME_PREFIX,
    TIER_TEXT,
    Match,
    Term,
    head_expression,
    idf,
    match_of,
    norm_path,
    starts_word,
    text_expression,
)
from ._terms import Vocabulary

DEFAULT_LIMIT = SEARCH_LIMIT
MAX_LIMIT = SEARCH_MAX_LIMIT

BODY_CHARS = 2500
"""Body text indexed per skill, as written (headings, prose and code alike). The
opening says what a skill is for; the rest is procedure whose words match
everything (the eval ranks worse with whole bodies). Tokenizing it is most of the
build's cost, so this is the knob between build time and quality. On the tuning
half of the 404-request eval, 1,000 to 2,500 characters rank within 0.02 of each
other (recall@1 0.688-0.710); see `eval/README.md`."""

FETCH = 200
"""Rows fetched per table and query, best first, before merging the two scores."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchResult:
    """One ranked candidate of `SkillSearch.search`."""

    skill: Skill
    score: float
    """Higher is better; comparable within one query only. The integer part is the
    rule tier (3 exact_path, 2 exact_name, 1 name_prefix, 0 text only), the fraction
    the text relevance."""
    reasons: tuple[str, ...]
    """Why it matched: `exact_path`, `exact_name`, `name_prefix`, then
    `text_match:<column>` for each column holding a query word."""
    match: Match
    """`strong`: a rule matched, or the text relevance clears `STRONG_RELEVANCE`
    and most of the query is in words some skill holds (`KNOWN_SHARE`).
    `weak`: some words match, too few to call it a fit; returned so the caller
    can judge. "No skill fits" is a list without a strong result."""
    relevance: float = 0.0
    """The text relevance alone: weighted BM25 over the query's IDF mass (0 for a
    rule match without a text match)."""
    coverage: float = 0.0
    """The share of the query's IDF mass in words the skill's name, description or
    when_to_use hold: how much of the request the skill says it is for (a body
    mentions many words its skill is not about)."""
    held: int = 0
    """How many of the query's distinct informative words (stems) those fields hold."""
    claim: float = 0.0
    """How much of the request the skill's frontmatter claims in distinctive words:
    the IDF mass of the query words its name, description or when_to_use hold, a
    word of its name counting `NAME_CLAIM` times, over the IDF of a word no skill
    holds. About 1 per rare word the skill says it is for; common words add little.
    Unlike `coverage`, a long request does not dilute it."""
    known: float = 1.0
    """The share of the query's IDF mass in words some skill holds (one value per
    query): low for a request made of words no skill uses."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape tools and surfaces return."""
        return {
            "name": self.skill.name,
            "qualified_name": self.skill.qualified_name,
            "path": self.skill.path,
            "scope": self.skill.scope,
            "description": self.skill.description,
            "score": round(self.score, 4),
            "reasons": list(self.reasons),
            "match": self.match,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class _Text:
    """One skill's text match."""

    relevance: float
    coverage: float
    """`SearchResult.coverage`."""
    held: int
    """`SearchResult.held`."""
    claim: float
    """`SearchResult.claim`."""
    skill: Skill
    columns: tuple[str, ...]


@dataclass(kw_only=True, slots=True)
class _State:
    """What one catalog needs at query time, built once per catalog."""

    catalog: Catalog
    by_rowid: dict[int, Skill]
    rowid_by_key: dict[str, int]
    by_name: dict[str, list[Skill]]
    """Skills by lowercased bare name, shadowed copies left out."""
    names: list[str]
    """Sorted keys of `by_name`, for prefix lookups by bisection."""
    by_qualified: dict[str, list[Skill]]
    """Every skill by lowercased qualified id, shadowed copies included."""
    qualified: list[str]
    """Sorted keys of `by_qualified`."""
    vocab: Vocabulary
    """The query words' terms and counts, kept for the catalog's later queries."""
    by_path: dict[str, list[Skill]] | None = None
    """Built on the first query that looks like a path (`paths`)."""

    def paths(self) -> dict[str, list[Skill]]:
        """Skills by normalized SKILL.md path, real path and folder."""
        if self.by_path is None:
            by_path: dict[str, list[Skill]] = {}
            for skill in self.catalog.skills:
                for path in {skill.path, skill.real_path, skill.dir}:
                    if path:
                        by_path.setdefault(norm_path(path), []).append(skill)
            self.by_path = by_path
        return self.by_path


class SkillSearch:
    """Search a catalog by name, path and text; the index lives in `conn`.

    `conn` is any SQLite connection: the persistent index file (`_cache.connect`),
    or `sqlite3.connect(":memory:")` for a throwaway index. The index never reads a
    skill itself: bodies come from the caller's reader, only for skills whose file
    version is not indexed yet, through `read_head(skill, BODY_CHARS)` when given
    (it must return at least the body's first that many characters;
    `discovery._skill_files.read_body_head` does for skills on disk), else
    `read_body`. A build of `READ_AHEAD_MIN` or more skills calls them on a worker
    thread.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        read_body: Callable[[Skill], str],
        read_head: Callable[[Skill, int], str] | None = None,
    ) -> None:
        self._conn = conn
        self._read_body = read_body
        self._read_head = read_head
        self._state: _State | None = None
        self._schema_ready = False
        # One search at a time: the connection and the per-catalog state are shared,
        # so a host's worker threads take turns (a query costs about a millisecond).
        self._lock = threading.Lock()

    # -- public -----------------------------------------------------------------

    def search(
        self,
        catalog: Catalog,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        scope: Scope | None = None,
        is_visible: Callable[[Skill], bool] = lambda skill: True,
        model_only: bool = True,
    ) -> tuple[SearchResult, ...]:
        """Rank the visible skills of `catalog` (model-invocable ones by default) for `query`.

        Args:
            catalog: The skills to search. The first search against a catalog
                brings the index up to date with it; later ones only query.
            query: A name, a path or free text ("fix my flaky CI tests").
            limit: Most results, from 1 to `MAX_LIMIT`.
            scope: Only skills of this scope.
            is_visible: Host filter (permissions, enabled state); False hides a skill.
            model_only: Only skills the model may invoke (the default: what the
                `skill_search` tool offers); False ranks every skill, as a person
                browsing the workspace sees them.

        Returns:
            Results best first, each `strong` or `weak`; empty only when no skill
            holds a word of the query (nor matches it by name or path).

        Raises:
            UsageError: empty query, bad limit or unknown scope.
            SkillIOError: the index cannot be written, or SQLite lacks FTS5.
        """
        return self.search_page(
            catalog, query, limit=limit, scope=scope, is_visible=is_visible, model_only=model_only
        )[0]

    def search_page(
        self,
        catalog: Catalog,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        scope: Scope | None = None,
        is_visible: Callable[[Skill], bool] = lambda skill: True,
        model_only: bool = True,
    ) -> tuple[tuple[SearchResult, ...], bool]:
        """`search`'s results, and whether more than `limit` skills matched (the
        `truncated` of `skill_search`): one more result is ranked to tell."""
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise UsageError(f"Search limit must be an integer from 1 to {MAX_LIMIT}.")
        if not 1 <= limit <= MAX_LIMIT:
            raise UsageError(f"Search limit must be from 1 to {MAX_LIMIT}, got {limit}.")
        if scope is not None and scope not in SCOPES:
            raise UsageError(f"Unknown scope {scope!r}; use one of {', '.join(SCOPES)}.")
        if not isinstance(query, str) or not query.strip():
            raise UsageError(
                "Search query is empty: describe the task or give a skill name, "
                'e.g. "review a pull request".'
            )
        if len(query) > MAX_QUERY_CHARS:
            raise UsageError(
                f"Search query is {len(query)} characters, over the limit of "
                f"{MAX_QUERY_CHARS}; describe the task in a few words."
            )
        with self._lock:
            search = functools.partial(
                self._search,
                catalog,
                query,
                limit=limit + 1,
                scope=scope,
                is_visible=is_visible,
                model_only=model_only,
            )
            try:
                found = search()
            except Exception as exc:
                if not damaged(exc):
                    raise
                # The index file is damaged (a page or a name that does not decode, a
                # table gone): it is a cache, so a fresh one is built and asked again.
                self._replace_connection()
                found = search()
        return found[:limit], len(found) > limit

    def prepare(self, catalog: Catalog) -> None:
        """Bring the index up to date with `catalog` now, so that its first search
        only queries (a host may call this on a worker thread after a change).

        Raises:
            SkillIOError: the index cannot be written, or SQLite lacks FTS5.
        """
        with self._lock:
            self._prepare(catalog)

    def close(self) -> None:
        """Close the index connection; a later search would fail."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.close()

    def _replace_connection(self) -> None:
        from ._cache import replace_damaged

        path = database_file(self._conn)
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        self._conn = (
            replace_damaged(path)
            if path
            else sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        )
        self._state = None
        self._schema_ready = False

    def _search(
        self,
        catalog: Catalog,
        query: str,
        *,
        limit: int,
        scope: Scope | None,
        is_visible: Callable[[Skill], bool],
        model_only: bool,
    ) -> tuple[SearchResult, ...]:
        state = self._prepare(catalog)

        def accept(skill: Skill) -> bool:
            return (
                (skill.model_invocable or not model_only)
                and (scope is None or skill.scope == scope)
                and bool(is_visible(skill))
            )

        def accept_text(skill: Skill) -> bool:
            # A shadowed copy is found by its qualified id or path only (the rules).
            return skill.shadowed_by is None and accept(skill)

        tiers: dict[str, tuple[int, Skill, list[str]]] = {}
        for tier, reason, skills in self._rule_matches(state, query):
            for skill in skills:
                if skill.key not in tiers and accept(skill):
                    tiers[skill.key] = (tier, skill, [reason])
        texts, known = self._text_matches(state, query, limit=limit, accept=accept_text, keep=tiers)

        ranked = []
        for key in tiers.keys() | texts.keys():
            tier, skill, reasons = tiers.get(key) or (TIER_TEXT, texts[key].skill, [])
            text = texts.get(key) or _Text(
                relevance=0.0, coverage=0.0, held=0, claim=0.0, skill=skill, columns=()
            )
            shadowed = skill.shadowed_by is not None
            order = (-tier, shadowed, -text.relevance, SCOPE_RANK[skill.scope], skill.path)
            ranked.append((order, tier, reasons, text))
        ranked.sort(key=lambda candidate: candidate[0])
        # Results are built for the returned rows only: a short name prefix can
        # match thousands of skills.
        return tuple(
            SearchResult(
                skill=text.skill,
                score=tier + text.relevance / (1.0 + text.relevance),
                reasons=tuple(reasons) + tuple(f"text_match:{c}" for c in text.columns),
                match=match_of(tier, text.relevance, known),
                relevance=text.relevance,
                coverage=text.coverage,
                held=text.held,
                claim=text.claim,
                known=known,
            )
            for _order, tier, reasons, text in ranked[:limit]
        )

    # -- rules ------------------------------------------------------------------

    def _rule_matches(
        self, state: _State, query: str
    ) -> Iterable[tuple[int, str, Iterable[Skill]]]:
        path = norm_path(query)
        if "/" in path or "\\" in path:
            # Every SKILL.md path and folder holds a separator: a query without one
            # cannot be a path, and needs no path table.
            yield TIER_EXACT_PATH, "exact_path", state.paths().get(path, ())
        name = norm_name(query)
        # A query with the namespace separator is matched against qualified ids, any
        # other against bare names only: `repo` or `sys` is no prefix of every skill
        # of that scope. A bare name means the skills outside plugins when any have
        # it (`bare_named`), as the resolver reads it.
        qualified = ":" in name
        by_name, names = (
            (state.by_qualified, state.qualified) if qualified else (state.by_name, state.names)
        )
        exact = by_name.get(name, ())
        yield TIER_EXACT_NAME, "exact_name", exact if qualified else bare_named(exact)
        if len(name) >= 2:
            start = bisect.bisect_left(names, name)
            stop = bisect.bisect_left(names, name + "\uffff")
            prefixed = (
                skill
                for candidate in names[start:stop]
                if candidate != name
                for skill in by_name[candidate]
                if skill.shadowed_by is None
            )
            yield TIER_NAME_PREFIX, "name_prefix", prefixed

    # -- text -------------------------------------------------------------------

    def _text_matches(
        self,
        state: _State,
        query: str,
        *,
        limit: int,
        accept: Callable[[Skill], bool],
        keep: Mapping[str, object],
    ) -> tuple[dict[str, _Text], float]:
        """Text matches by skill key, and the share of the query's IDF mass in
        words some skill holds."""
        terms = self._terms(state, query_words(query))
        if not terms or state.vocab.total == 0:
            return {}, 0.0
        head_match = head_expression(terms)
        text_match = text_expression(terms)
        idfs = [idf(state.vocab.total, max(t.head_df, t.text_df)) for t in terms]
        mass = sum(idfs)
        # The share of the query's IDF mass in words some skill holds: a request
        # made mostly of words no skill uses asks for something none covers.
        known = sum(w for w, t in zip(idfs, terms, strict=True) if t.head_df or t.text_df) / mass
        found: dict[str, tuple[float, Skill]] = {}
        fetch = max(FETCH, limit * 4)
        while True:
            scores: dict[int, float] = {}
            full = False
            for table, columns_of, match in (
                ("search_head", HEAD_COLUMNS, head_match),
                ("search_text", TEXT_COLUMNS, text_match),
            ):
                if not match:
                    continue
                weights = ", ".join(str(COLUMN_WEIGHTS[COLUMNS.index(c)]) for c in columns_of)
                rows = self._conn.execute(
                    f"SELECT rowid, bm25({table}, {weights}) FROM {table} "
                    f"WHERE {table} MATCH ? ORDER BY 2 LIMIT ?",
                    (match, fetch),
                ).fetchall()
                full = full or len(rows) == fetch
                for rowid, rank in rows:
                    scores[rowid] = scores.get(rowid, 0.0) - rank
            found = {}
            for rowid, score in sorted(scores.items(), key=lambda item: -item[1]):
                skill = state.by_rowid.get(rowid)
                if skill is None or not accept(skill):
                    continue
                found[skill.key] = (score / mass, skill)
                if len(found) >= limit + len(keep):
                    full = False
                    break
            if not full:
                break
            fetch *= 4
        skills = [skill for _, skill in found.values()]
        columns = self._matched_columns(state, terms, skills)
        held = _held(terms, idfs, skills)
        rare = idf(state.vocab.total, 0)
        matches = {
            key: _Text(
                relevance=rel,
                coverage=held[key].mass / mass,
                held=held[key].count,
                claim=held[key].claimed / rare,
                skill=skill,
                columns=columns.get(key, ()),
            )
            for key, (rel, skill) in found.items()
        }
        return matches, known

    def _terms(self, state: _State, words: list[str]) -> list[Term]:
        """The query's terms (`Vocabulary.terms`) for `state`'s catalog."""
        return state.vocab.terms(self._conn, words)

    def _matched_columns(
        self, state: _State, terms: list[Term], skills: list[Skill]
    ) -> dict[str, tuple[str, ...]]:
        """Which columns of each result hold a query word (for `reasons`).

        An explanation, not a ranking input: a query word counts as present when a
        word of the column starts with it or with its stem, which is how Porter
        stems relate to the words they came from in all but a few irregular cases.
        """
        if not skills:
            return {}
        ordered = sorted({prefix for term in terms for prefix in _prefixes(term)})
        wanted = [state.rowid_by_key.get(skill.key) for skill in skills]
        texts: dict[int, str] = {}
        ids = [i for i in wanted if i is not None]
        if ids:
            marks = ", ".join("?" * len(ids))
            for rowid, body in self._conn.execute(
                f"SELECT id, body FROM search_body WHERE id IN ({marks})", ids
            ):
                texts[rowid] = body or ""
        out: dict[str, tuple[str, ...]] = {}
        for skill, rowid in zip(skills, wanted, strict=True):
            body = texts.get(rowid, "") if rowid is not None else ""
            values = (skill.name, skill.description, skill.when_to_use or "", body)
            out[skill.key] = tuple(
                col
                for col, value in zip(COLUMNS, values, strict=True)
                if starts_word(folded(value), ordered)
            )
        return out

    # -- index ------------------------------------------------------------------

    def _prepare(self, catalog: Catalog) -> _State:
        if self._state is not None and self._state.catalog is catalog:
            return self._state
        if not self._schema_ready:
            ensure_schema(self._conn)
            self._schema_ready = True
        by_rowid, total = sync(self._conn, catalog, self._body)
        by_name: dict[str, list[Skill]] = {}
        by_qualified: dict[str, list[Skill]] = {}
        for skill in catalog.skills:
            if skill.shadowed_by is None:
                by_name.setdefault(norm_name(skill.name), []).append(skill)
            by_qualified.setdefault(norm_name(skill.qualified_name), []).append(skill)
        self._state = _State(
            catalog=catalog,
            by_rowid=by_rowid,
            rowid_by_key={skill.key: rowid for rowid, skill in by_rowid.items()},
            by_name=by_name,
            names=sorted(by_name),
            by_qualified=by_qualified,
            qualified=sorted(by_qualified),
            vocab=Vocabulary(total=total),
        )
        return self._state

    def _body(self, skill: Skill) -> str | None:
        try:
            if self._read_head is not None:
                return self._read_head(skill, BODY_CHARS)[:BODY_CHARS]
            return self._read_body(skill)[:BODY_CHARS]
        except (SkillpackError, OSError):
            # Gone or unreadable since discovery: index what the catalog knows and
            # mark the version unknown so the next catalog retries the body.
            return None


def _prefixes(term: Term) -> set[str]:
    """What a word of a text starts with when it holds `term`: the word, its body
    forms, or its stem (Porter turns a final "y" into "i": "deploy" -> "deploi")."""
    stem = term.stem
    return {term.word, *term.forms, stem[:-1] if stem.endswith("i") and len(stem) > 2 else stem}


@dataclass(frozen=True, slots=True)
class _Held:
    mass: float
    """IDF mass of the query terms the frontmatter holds."""
    count: int
    """How many of them it holds."""
    claimed: float
    """`mass` with a term of the name counted `NAME_CLAIM` times."""


def _held(terms: list[Term], idfs: list[float], skills: list[Skill]) -> dict[str, _Held]:
    """Per skill key, which of the query terms its name, description or when_to_use
    hold (`coverage` and `claim` before dividing, and `held`)."""
    wanted = [(sorted(_prefixes(term)), weight) for term, weight in zip(terms, idfs, strict=True)]
    out: dict[str, _Held] = {}
    for skill in skills:
        name = folded(skill.name.replace("-", " "))
        text = folded(f"{name} {skill.description} {skill.when_to_use or ''}")
        mass = claimed = 0.0
        count = 0
        for prefixes, weight in wanted:
            if starts_word(text, prefixes):
                mass += weight
                count += 1
                claimed += weight * (NAME_CLAIM if starts_word(name, prefixes) else 1.0)
        out[skill.key] = _Held(mass=mass, count=count, claimed=claimed)
    return out
