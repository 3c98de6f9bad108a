"""`skill_search`: name/path rules plus SQLite FTS5 (BM25) over the skills' text.

Ranking, best first: `exact_path` (the query is a skill's SKILL.md path, real path
or folder) > `exact_name` (name or qualified name, case-insensitive) >
`name_prefix` > text match. Text match is FTS5 BM25 over four weighted columns:
name, description, when_to_use (table `search_head`) and the opening of the body
(table `search_text`); the two tables' scores add up. Ties break on scope rank,
then path.

The FTS rows live in the same SQLite file as the parse cache (tables `search_*`),
keyed by the skill's real path and versioned by `(mtime_ns, size)`. They are
brought up to date lazily, on the first search against a catalog: only skills
whose version is not indexed yet have their body read, and only its first
`BODY_CHARS` characters when a `read_head` is given. A later process over an
unchanged tree reads no body at all.

What keeps a query within a couple of milliseconds on 10,000 skills: FTS5 reads a
term's whole posting list and scores every matching row, so the words that occur
in most documents (long lists, almost no BM25 weight) are left out of a table's
query, within a budget of documents read per table (`HEAD_BUDGET`, `TEXT_BUDGET`).
A term's document frequencies are counted from the FTS vocabularies when a query
first uses it, and kept for the catalog's later queries: the build does not count
every term's. Results come from SQL with `ORDER BY ... LIMIT`; Python only maps row
ids back to skills through a dict built once per catalog.

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
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import SkillIOError, SkillpackError, UsageError
from .._limits import MAX_QUERY_CHARS, SEARCH_LIMIT, SEARCH_MAX_LIMIT
from .._model import SCOPE_RANK, SCOPES, Catalog, Scope, Skill
from ..select._words import STOP_WORDS, folded, norm_name, query_words
from ._query import (
    COLUMN_WEIGHTS,
    COLUMNS,
    HEAD_COLUMNS,
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

READ_AHEAD_MIN = 256
"""A build with at least this many bodies to read reads them on a worker thread
while it indexes the frontmatter."""

TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The frontmatter is stemmed, so "drafts" finds "draft"."""

TEXT_TOKENIZER = "unicode61 remove_diacritics 2"
"""The body is not: Porter stemming is a quarter of what tokenizing bodies costs.
A query word is matched there as typed when some body holds it, else as every
body word sharing its stem (`_body_forms`), so a body holding "drafted" still
matches "drafts"."""

FORMS_MAX = 400
"""Most body words read per stem when looking for its forms (each costs a walk of
its posting list): bounds the lookup for a short stem ("re" starts hundreds of
words, 6 ms at 10,000 skills); forms sorting past it are not searched."""

_INDEX_VERSION = "7"
"""Bumped whenever tables, tokenizer or text extraction change: old rows are dropped."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # One row per indexed skill. `key` has no UNIQUE index: rows are only looked up
    # by id, `_sync` plans from a full snapshot under the write lock, and the index
    # would cost every insert.
    """CREATE TABLE IF NOT EXISTS search_doc (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        root TEXT NOT NULL,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL
    )""",
    # The text the FTS tables index (their external content), stored once: the FTS
    # tables keep only their index. Apart from search_doc so that the snapshot of
    # versions every sync takes does not read the text; the bodies apart from the
    # frontmatter so that a build indexes the frontmatter while it reads bodies.
    f"""CREATE TABLE IF NOT EXISTS search_content (
        id INTEGER PRIMARY KEY,
        {", ".join(f"{c} TEXT NOT NULL" for c in HEAD_COLUMNS)}
    )""",
    f"""CREATE TABLE IF NOT EXISTS search_body (
        id INTEGER PRIMARY KEY,
        {", ".join(f"{c} TEXT NOT NULL" for c in TEXT_COLUMNS)}
    )""",
    # Two FTS tables, not one: FTS5 reads a term's whole posting list whatever the
    # column filter, and a word common in bodies has long lists. Split, a query can
    # search every word in the short frontmatter and only the rarer ones in bodies.
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS search_head USING fts5(
        {", ".join(HEAD_COLUMNS)}, tokenize = '{TOKENIZER}',
        content = 'search_content', content_rowid = 'id'
    )""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
        {", ".join(TEXT_COLUMNS)}, tokenize = '{TEXT_TOKENIZER}',
        content = 'search_body', content_rowid = 'id'
    )""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_head_vocab USING fts5vocab(search_head, row)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_text_vocab USING fts5vocab(search_text, row)",
)
_TABLES = frozenset(
    re.findall(r"CREATE (?:VIRTUAL )?TABLE IF NOT EXISTS (\w+)", " ".join(_SCHEMA))
)
"""Every table `_SCHEMA` creates: one missing means the index is rebuilt."""
# Set once, when the tables are created (FTS5 keeps it in its config table). The
# pending-data hash FTS5 flushes to a new segment when full: 1 MiB by default,
# which splits a 10,000-skill build into several segments that later writes merge.
# At 16 MiB such a build fits in one, with no merge work (about 5-10% of it).
_CONFIG = tuple(
    f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', {16 * 1024 * 1024})"
    for table in ("search_head", "search_text")
)
_DROP = (
    "DROP TABLE IF EXISTS search_head_vocab",
    "DROP TABLE IF EXISTS search_text_vocab",
    "DROP TABLE IF EXISTS search_vocab",
    "DROP TABLE IF EXISTS search_head",
    "DROP TABLE IF EXISTS search_text",
    "DROP TABLE IF EXISTS search_fts",
    "DROP TABLE IF EXISTS search_df",
    "DROP TABLE IF EXISTS search_doc",
    "DROP TABLE IF EXISTS search_content",
    "DROP TABLE IF EXISTS search_body",
    "DROP TABLE IF EXISTS search_meta",
)
# Scratch FTS tables in the connection's temp schema: FTS5 itself splits and stems
# the query words, so query tokens and stems always agree with the index's.
_TEMP_SCHEMA = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_qtok USING fts5(t, tokenize = '{TOKENIZER}')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_qtok_vocab "
    "USING fts5vocab('temp', 'search_qtok', 'instance')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_qraw "
    f"USING fts5(t, tokenize = '{TEXT_TOKENIZER}')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_qraw_vocab "
    "USING fts5vocab('temp', 'search_qraw', 'instance')",
)


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


@dataclass(kw_only=True, slots=True)
class _State:
    """What one catalog needs at query time, built once per catalog."""

    catalog: Catalog
    by_rowid: dict[int, Skill]
    rowid_by_key: dict[str, int]
    by_name: dict[str, list[Skill]]
    names: list[str]
    """Sorted lowercased names, for prefix lookups by bisection."""
    total: int
    """Documents in the FTS table (BM25's N)."""
    tokens: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Query word -> its FTS5 tokens as (word, stem), for the words queried so far."""
    head_df: dict[str, int] = field(default_factory=dict)
    """Document frequencies in `search_head` of the stems queried so far."""
    word_df: dict[str, int] = field(default_factory=dict)
    """Document frequencies in `search_text` of the query words so far."""
    forms: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    """Stem -> its body forms with their document frequencies in `search_text`
    (looked up for words no body holds)."""
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
                if not _damaged(exc):
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

    def _replace_connection(self) -> None:
        from ._cache import replace_damaged

        path = _database_file(self._conn)
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

        tiers: dict[str, tuple[int, Skill, list[str]]] = {}
        for tier, reason, skills in self._rule_matches(state, query):
            for skill in skills:
                if skill.key not in tiers and accept(skill):
                    tiers[skill.key] = (tier, skill, [reason])
        texts, known = self._text_matches(state, query, limit=limit, accept=accept, keep=tiers)

        ranked = []
        for key in tiers.keys() | texts.keys():
            tier, skill, reasons = tiers.get(key) or (TIER_TEXT, texts[key][1], [])
            relevance, _skill, columns = texts.get(key) or (0.0, skill, ())
            order = (-tier, -relevance, SCOPE_RANK[skill.scope], skill.path)
            ranked.append((order, skill, tier, relevance, reasons, columns))
        ranked.sort(key=lambda candidate: candidate[0])
        # Results are built for the returned rows only: a short name prefix can
        # match thousands of skills.
        return tuple(
            SearchResult(
                skill=skill,
                score=tier + relevance / (1.0 + relevance),
                reasons=tuple(reasons) + tuple(f"text_match:{c}" for c in columns),
                match=match_of(tier, relevance, known),
            )
            for _order, skill, tier, relevance, reasons, columns in ranked[:limit]
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
        yield TIER_EXACT_NAME, "exact_name", state.by_name.get(name, ())
        if len(name) >= 2:
            start = bisect.bisect_left(state.names, name)
            stop = bisect.bisect_left(state.names, name + "\uffff")
            prefixed = (
                skill
                for candidate in state.names[start:stop]
                if candidate != name
                for skill in state.by_name[candidate]
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
    ) -> tuple[dict[str, tuple[float, Skill, tuple[str, ...]]], float]:
        """Text matches by skill key (relevance, skill, matching columns), and the
        share of the query's IDF mass in words some skill holds."""
        terms = self._terms(state, query_words(query))
        if not terms or state.total == 0:
            return {}, 0.0
        head_match = head_expression(terms)
        text_match = text_expression(terms)
        idfs = [idf(state.total, max(t.head_df, t.text_df)) for t in terms]
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
        columns = self._matched_columns(state, terms, [skill for _, skill in found.values()])
        matches = {key: (rel, skill, columns.get(key, ())) for key, (rel, skill) in found.items()}
        return matches, known

    def _terms(self, state: _State, words: list[str]) -> list[Term]:
        """The query's terms, one per distinct stem, first occurrence first.

        In the frontmatter a term is its stem. In the bodies it is the word as
        typed when some body holds it, else every body word with its stem
        ("interrupting" finds "interrupts" only when no body says "interrupting"):
        a rarer exact word ranks the skills that use it, and a word no body holds
        still counts as matched wherever a form of it is. Counts and forms are
        looked up when first needed and kept for the catalog's later queries.
        """
        if not words:
            return []
        unknown = [w for w in words if w not in state.tokens]
        if unknown:
            state.tokens.update(self._tokenize(unknown))
        pairs: dict[str, str] = {}  # stem -> word
        for word in words:
            for token, stem in state.tokens[word]:
                if len(token) > 1 and token not in STOP_WORDS:
                    pairs.setdefault(stem, token)
        for table, counts, keys in (
            ("search_head_vocab", state.head_df, list(pairs)),
            ("search_text_vocab", state.word_df, list(pairs.values())),
        ):
            uncounted = [key for key in keys if key not in counts]
            if uncounted:
                counts.update(self._count(table, uncounted))
        unformed = [s for s, w in pairs.items() if not state.word_df[w] and s not in state.forms]
        if unformed:
            state.forms.update(self._body_forms(unformed))
        terms = []
        for stem, word in pairs.items():
            forms = ((word, state.word_df[word]),) if state.word_df[word] else state.forms[stem]
            terms.append(
                Term(
                    word=word,
                    stem=stem,
                    forms=tuple(form for form, _df in forms),
                    # Counted from the whole file, which other catalogs share: never
                    # past this catalog's document count (BM25's IDF needs df <= N).
                    head_df=min(state.total, state.head_df[stem]),
                    text_df=min(state.total, sum(df for _form, df in forms)),
                )
            )
        return terms

    def _count(self, vocab: str, terms: list[str]) -> dict[str, int]:
        """Documents holding each term, from the fts5vocab table `vocab`.

        fts5vocab looks each term up in the index and walks its posting list: a
        fraction of a millisecond for a word in every document of 10,000, against
        the tens of milliseconds a build would spend counting every term up front.
        The counts are exact for the index as it is now; they only steer which
        words a table is searched for and the relevance threshold's IDF mass.
        """
        counts = dict.fromkeys(terms, 0)
        marks = ", ".join("?" * len(terms))
        counts.update(
            self._conn.execute(f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})", terms)
        )
        return counts

    def _body_forms(self, stems: list[str]) -> dict[str, tuple[tuple[str, int], ...]]:
        """The body words whose Porter stem is each of `stems`, with their counts.

        Porter only cuts and rewrites word endings, so a stem's forms start with
        the stem less a last "e" or "i" ("make" / "making", "deploi" / "deploy"):
        the body vocabulary is read over that prefix and each word found stemmed.
        """
        candidates: dict[str, list[tuple[str, int]]] = {}
        for stem in stems:
            prefix = stem[:-1] if stem[-1:] in ("e", "i") and len(stem) > 2 else stem
            rows = self._conn.execute(
                "SELECT term, doc FROM search_text_vocab WHERE term >= ? AND term < ? LIMIT ?",
                (prefix, prefix + "\U0010ffff", FORMS_MAX),
            ).fetchall()
            candidates[stem] = rows
        # Vocabulary words are single body tokens already: only their stems are needed.
        words = sorted({term for rows in candidates.values() for term, _doc in rows})
        (stems_of,) = self._scratch_tokens(words, "search_qtok")
        return {
            stem: tuple((term, doc) for term, doc in rows if stems_of[term] == [stem])
            for stem, rows in candidates.items()
        }

    def _tokenize(self, words: list[str]) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each word's FTS5 tokens as (token, stem): what the body and the frontmatter
        tokenizers make of it. Usually one; a character Python counts as part of a
        word can be a separator to FTS5."""
        raw, stemmed = self._scratch_tokens(words, "search_qraw", "search_qtok")
        # The Porter tokenizer stems what unicode61 splits: the same tokens, in order.
        return {word: tuple(zip(raw[word], stemmed[word], strict=True)) for word in words}

    def _scratch_tokens(self, words: list[str], *tables: str) -> list[dict[str, list[str]]]:
        """Each word's tokens by the tokenizer of each scratch FTS table in `tables`."""
        conn = self._conn
        found = []
        with _savepoint(conn, "search_tokenize"):
            for statement in _TEMP_SCHEMA:
                conn.execute(statement)
            for table in tables:
                conn.execute(f"DELETE FROM temp.{table}")
                conn.executemany(
                    f"INSERT INTO temp.{table}(rowid, t) VALUES (?, ?)",
                    [(i + 1, w) for i, w in enumerate(words)],
                )
                tokens: dict[str, list[str]] = {w: [] for w in words}
                for doc, term in conn.execute(
                    f"SELECT doc, term FROM temp.{table}_vocab ORDER BY doc, offset"
                ):
                    tokens[words[doc - 1]].append(term)
                conn.execute(f"DELETE FROM temp.{table}")
                found.append(tokens)
        return found

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
        prefixes = {t.word for t in terms} | {form for t in terms for form in t.forms}
        for term in terms:
            # Porter turns a final "y" into "i" ("deploy" -> "deploi").
            stem = term.stem
            prefixes.add(stem[:-1] if stem.endswith("i") and len(stem) > 2 else stem)
        ordered = sorted(prefixes)
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
        self._ensure_schema()
        by_rowid, total = self._sync(catalog)
        by_name: dict[str, list[Skill]] = {}
        for skill in catalog.skills:
            name = norm_name(skill.name)
            by_name.setdefault(name, []).append(skill)
            qualified = norm_name(skill.qualified_name)
            if qualified != name:
                by_name.setdefault(qualified, []).append(skill)
        self._state = _State(
            catalog=catalog,
            by_rowid=by_rowid,
            rowid_by_key={skill.key: rowid for rowid, skill in by_rowid.items()},
            by_name=by_name,
            names=sorted(by_name),
            total=total,
        )
        return self._state

    def _ensure_schema(self) -> None:
        if self._schema_ready:
            return
        conn = self._conn
        try:
            with _savepoint(conn, "search_schema"):
                version = None
                present = {
                    name
                    for (name,) in conn.execute(
                        "SELECT name FROM sqlite_master WHERE type = 'table'"
                    )
                }
                if "search_meta" in present:
                    row = conn.execute(
                        "SELECT value FROM search_meta WHERE key = 'version'"
                    ).fetchone()
                    version = row[0] if row else None
                if not _TABLES.issubset(present):
                    version = None  # a table is gone: its rows elsewhere are no index
                if version != _INDEX_VERSION:
                    for statement in _DROP:
                        conn.execute(statement)
                for statement in _SCHEMA:
                    conn.execute(statement)
                if version != _INDEX_VERSION:
                    for statement in _CONFIG:
                        # Only speed: an FTS5 without the option builds as before.
                        with contextlib.suppress(sqlite3.OperationalError):
                            conn.execute(statement)
                    # Written only here: a process that finds the index current
                    # does not take the write lock to open it.
                    conn.execute(
                        "INSERT OR REPLACE INTO search_meta(key, value) VALUES ('version', ?)",
                        (_INDEX_VERSION,),
                    )
        except sqlite3.OperationalError as exc:
            if "fts5" in str(exc).lower():
                raise SkillIOError(
                    f"Skill search needs SQLite's FTS5 extension, which this Python's "
                    f"sqlite3 (SQLite {sqlite3.sqlite_version}) lacks. Use a Python build "
                    "whose sqlite3 includes FTS5 (python.org and most Linux distributions "
                    "ship it)."
                ) from exc
            raise _io_error(conn, "prepare", exc) from exc
        except sqlite3.Error as exc:
            raise _io_error(conn, "prepare", exc) from exc
        self._schema_ready = True

    def _sync(self, catalog: Catalog) -> tuple[dict[int, Skill], int]:
        """Bring the FTS rows up to date with `catalog`; map row ids to its skills,
        and count the rows.

        Stale rows are those under one of the catalog's roots whose skill the
        catalog no longer has; rows of other roots (another project sharing the
        cache file) are kept for that project's next search.
        """
        conn = self._conn
        skills: dict[str, Skill] = {}
        for skill in catalog.skills:
            skills.setdefault(skill.key, skill)
        roots = {root.path for root in catalog.roots} | {s.root for s in skills.values()}

        def snapshot() -> dict[str, tuple[int, int, int, str]]:
            return {
                key: (rowid, mtime_ns, size, root)
                for rowid, key, mtime_ns, size, root in conn.execute(
                    "SELECT id, key, mtime_ns, size, root FROM search_doc"
                )
            }

        def plan(
            rows: Mapping[str, tuple[int, int, int, str]],
        ) -> tuple[list[Skill], list[int]]:
            fresh = [
                skill
                for key, skill in skills.items()
                if key not in rows or rows[key][1:3] != (skill.mtime_ns, skill.size)
            ]
            stale = [row[0] for key, row in rows.items() if key not in skills and row[3] in roots]
            return fresh, stale

        try:
            rows = snapshot()
            fresh, stale = plan(rows)
            if fresh or stale:
                with _savepoint(conn, "search_sync"):
                    # Take the write lock first, then re-plan: another process
                    # may have indexed some of these skills meanwhile.
                    conn.execute("UPDATE search_meta SET value = value WHERE key = 'version'")
                    rows = snapshot()
                    fresh, stale = plan(rows)
                    rows = self._write(rows, fresh, stale)
        except sqlite3.Error as exc:
            raise _io_error(conn, "update", exc) from exc
        by_rowid = {rows[key][0]: skill for key, skill in skills.items() if key in rows}
        return by_rowid, len(rows)

    def _body(self, skill: Skill) -> str | None:
        try:
            if self._read_head is not None:
                return self._read_head(skill, BODY_CHARS)[:BODY_CHARS]
            return self._read_body(skill)[:BODY_CHARS]
        except (SkillpackError, OSError):
            # Gone or unreadable since discovery: index what the catalog knows and
            # mark the version unknown so the next catalog retries the body.
            return None

    def _write(
        self,
        rows: Mapping[str, tuple[int, int, int, str]],
        fresh: list[Skill],
        stale: list[int],
    ) -> dict[str, tuple[int, int, int, str]]:
        """Replace the rows of `fresh` and `stale`; return `rows` as they are now.

        The bodies of a large build are read on a worker thread while SQLite
        indexes the frontmatter (`_ReadAhead`).
        """
        conn = self._conn
        replaced = [rows[skill.key][0] for skill in fresh if skill.key in rows]
        gone = [(rowid,) for rowid in stale + replaced]
        # External content: the FTS tables read the old text from search_content
        # and search_body to take it out of their index, so those rows go last.
        conn.executemany("DELETE FROM search_head WHERE rowid = ?", gone)
        conn.executemany("DELETE FROM search_text WHERE rowid = ?", gone)
        conn.executemany("DELETE FROM search_content WHERE id = ?", gone)
        conn.executemany("DELETE FROM search_body WHERE id = ?", gone)
        conn.executemany("DELETE FROM search_doc WHERE id = ?", gone)
        gone_ids = {rowid for (rowid,) in gone}
        now = {key: row for key, row in rows.items() if row[0] not in gone_ids}
        next_id = conn.execute("SELECT coalesce(max(id), 0) FROM search_doc").fetchone()[0] + 1
        ids = range(next_id, next_id + len(fresh))
        conn.executemany(
            f"INSERT INTO search_content(id, {', '.join(HEAD_COLUMNS)}) "
            f"VALUES (?, {', '.join('?' * len(HEAD_COLUMNS))})",
            [
                (rowid, skill.name, skill.description, skill.when_to_use or "")
                for rowid, skill in zip(ids, fresh, strict=True)
            ],
        )
        # Started only now: a statement per row (executemany) waits for the GIL
        # after each row, so the reads overlap one long statement instead.
        with _ReadAhead(fresh, self._body) as read_ahead:
            _index_rows(conn, "search_head", "search_content", HEAD_COLUMNS, next_id)
            bodies = read_ahead.result()
        docs = []
        texts = []
        for rowid, skill, body in zip(ids, fresh, bodies, strict=True):
            # An unread body is recorded with mtime -1: never equal to a real
            # version, so the next sync reads it again.
            mtime_ns = skill.mtime_ns if body is not None else -1
            docs.append((rowid, skill.key, skill.root, mtime_ns, skill.size))
            texts.append((rowid, body or ""))
            now[skill.key] = (rowid, mtime_ns, skill.size, skill.root)
        conn.executemany(
            "INSERT INTO search_doc(id, key, root, mtime_ns, size) VALUES (?, ?, ?, ?, ?)", docs
        )
        conn.executemany("INSERT INTO search_body(id, body) VALUES (?, ?)", texts)
        _index_rows(conn, "search_text", "search_body", TEXT_COLUMNS, next_id)
        return now


def _index_rows(
    conn: sqlite3.Connection, table: str, content: str, columns: tuple[str, ...], first_id: int
) -> None:
    """Index the rows of `content` from `first_id` on in the FTS table `table`: in
    SQL, so the text crosses from Python once, and in one statement, so FTS5
    writes one segment."""
    names = ", ".join(columns)
    conn.execute(
        f"INSERT INTO {table}(rowid, {names}) SELECT id, {names} FROM {content} WHERE id >= ?",
        (first_id,),
    )


class _ReadAhead:
    """The bodies of the skills a build writes, read on a worker thread.

    Reading is Python and holds the GIL; indexing the frontmatter meanwhile is one
    SQLite statement that releases it, so on two cores the reads cost a large
    build little. A small build reads on the calling thread, in `result`: a thread
    costs more than it saves there. `read` may run on the worker thread.
    """

    def __init__(self, skills: list[Skill], read: Callable[[Skill], str | None]) -> None:
        self._skills = skills
        self._read = read
        self._bodies: list[str | None] = []
        self._error: BaseException | None = None
        self._stop = False
        self._thread: threading.Thread | None = None
        if len(skills) >= READ_AHEAD_MIN:
            self._thread = threading.Thread(
                target=self._run, name="skillpack-search-read-ahead", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        try:
            for skill in self._skills:
                if self._stop:
                    return
                self._bodies.append(self._read(skill))
        except BaseException as exc:  # raised again on the calling thread by `result`
            self._error = exc

    def result(self) -> list[str | None]:
        """Each skill's body, in order; None where it could not be read."""
        if self._thread is None:
            return [self._read(skill) for skill in self._skills]
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._bodies

    def __enter__(self) -> _ReadAhead:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop = True  # the write failed before `result`: stop reading
        if self._thread is not None:
            self._thread.join()


class _savepoint:  # noqa: N801 - used as a context manager, reads like `with`
    """A SAVEPOINT that works in autocommit and inside an open transaction alike."""

    def __init__(self, conn: sqlite3.Connection, name: str) -> None:
        self._conn = conn
        self._name = name

    def __enter__(self) -> None:
        self._conn.execute(f"SAVEPOINT {self._name}")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            try:
                self._conn.execute(f"ROLLBACK TO {self._name}")
            finally:
                self._conn.execute(f"RELEASE {self._name}")
            return
        self._conn.execute(f"RELEASE {self._name}")


def _database_file(conn: sqlite3.Connection) -> str:
    """The file of the connection's main database; "" for memory (or when unknown)."""
    try:
        for _seq, name, filename in conn.execute("PRAGMA database_list"):
            if name == "main" and filename:
                return str(filename)
    except (sqlite3.Error, ValueError):
        pass
    return ""


_DAMAGE_WORDS = ("malformed", "corrupt", "no such table", "no such column", "not a database")


def _damaged(exc: BaseException) -> bool:
    """Whether a failed search means a damaged index file (rebuild it) rather than a
    busy, read-only or full one (report it)."""
    cause = exc.__cause__ if isinstance(exc, SkillIOError) and exc.__cause__ else exc
    if isinstance(cause, UnicodeDecodeError) or type(cause) is sqlite3.DatabaseError:
        return True
    if isinstance(cause, sqlite3.Error):
        message = str(cause).lower()
        return any(word in message for word in _DAMAGE_WORDS)
    return False


def _io_error(conn: sqlite3.Connection, action: str, exc: sqlite3.Error) -> SkillIOError:
    where = _database_file(conn) or "memory"
    return SkillIOError(
        f"Cannot {action} the skill search index in {where}: {exc}. If another skillpack "
        "process is writing it, retry; if the folder is read-only, set "
        "SKILLPACK_CACHE_DIR to a writable folder or search without the cache."
    )
