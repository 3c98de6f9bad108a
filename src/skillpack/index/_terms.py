"""Query words as FTS5 terms, with their document frequencies (what `_search` ranks by).

FTS5 itself splits and stems the words (scratch tables in the connection's temp
schema), so query tokens and stems always agree with the index's. A term's
document frequencies are counted from the FTS vocabularies when a query first uses
it, and kept in the catalog's `Vocabulary` for its later queries: the build does
not count every term's. A word no body holds is matched there through the body
words sharing its stem (`FORMS_MAX` of them at most).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from ..select._words import STOP_WORDS
from ._fts import TEXT_TOKENIZER, TOKENIZER, savepoint
from ._query import Term

FORMS_MAX = 400
"""Most body words read per stem when looking for its forms (each costs a walk of
its posting list): bounds the lookup for a short stem ("re" starts hundreds of
words, 6 ms at 10,000 skills); forms sorting past it are not searched."""


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


@dataclass(kw_only=True, slots=True)
class Vocabulary:
    """What FTS5 made of the words queried against one catalog so far, and their counts."""

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

    def terms(self, conn: sqlite3.Connection, words: list[str]) -> list[Term]:
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
        unknown = [w for w in words if w not in self.tokens]
        if unknown:
            self.tokens.update(_tokenize(conn, unknown))
        pairs: dict[str, str] = {}  # stem -> word
        for word in words:
            for token, stem in self.tokens[word]:
                if len(token) > 1 and token not in STOP_WORDS:
                    pairs.setdefault(stem, token)
        for table, counts, keys in (
            ("search_head_vocab", self.head_df, list(pairs)),
            ("search_text_vocab", self.word_df, list(pairs.values())),
        ):
            uncounted = [key for key in keys if key not in counts]
            if uncounted:
                counts.update(_count(conn, table, uncounted))
        unformed = [s for s, w in pairs.items() if not self.word_df[w] and s not in self.forms]
        if unformed:
            self.forms.update(_body_forms(conn, unformed))
        terms = []
        for stem, word in pairs.items():
            forms = ((word, self.word_df[word]),) if self.word_df[word] else self.forms[stem]
            terms.append(
                Term(
                    word=word,
                    stem=stem,
                    forms=tuple(form for form, _df in forms),
                    # Counted from the whole file, which other catalogs share: never
                    # past this catalog's document count (BM25's IDF needs df <= N).
                    head_df=min(self.total, self.head_df[stem]),
                    text_df=min(self.total, sum(df for _form, df in forms)),
                )
            )
        return terms


def _count(conn: sqlite3.Connection, vocab: str, terms: list[str]) -> dict[str, int]:
    """Documents holding each term, from the fts5vocab table `vocab`.

    fts5vocab looks each term up in the index and walks its posting list: a
    fraction of a millisecond for a word in every document of 10,000, against
    the tens of milliseconds a build would spend counting every term up front.
    The counts are exact for the index as it is now; they only steer which
    words a table is searched for and the relevance threshold's IDF mass.
    """
    counts = dict.fromkeys(terms, 0)
    marks = ", ".join("?" * len(terms))
    counts.update(conn.execute(f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})", terms))
    return counts


def _body_forms(
    conn: sqlite3.Connection, stems: list[str]
) -> dict[str, tuple[tuple[str, int], ...]]:
    """The body words whose Porter stem is each of `stems`, with their counts.

    Porter only cuts and rewrites word endings, so a stem's forms start with
    the stem less a last "e" or "i" ("make" / "making", "deploi" / "deploy"):
    the body vocabulary is read over that prefix and each word found stemmed.
    """
    candidates: dict[str, list[tuple[str, int]]] = {}
    for stem in stems:
        prefix = stem[:-1] if stem[-1:] in ("e", "i") and len(stem) > 2 else stem
        rows = conn.execute(
            "SELECT term, doc FROM search_text_vocab WHERE term >= ? AND term < ? LIMIT ?",
            (prefix, prefix + "\U0010ffff", FORMS_MAX),
        ).fetchall()
        candidates[stem] = rows
    # Vocabulary words are single body tokens already: only their stems are needed.
    words = sorted({term for rows in candidates.values() for term, _doc in rows})
    (stems_of,) = _scratch_tokens(conn, words, "search_qtok")
    return {
        stem: tuple((term, doc) for term, doc in rows if stems_of[term] == [stem])
        for stem, rows in candidates.items()
    }


def _tokenize(conn: sqlite3.Connection, words: list[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each word's FTS5 tokens as (token, stem): what the body and the frontmatter
    tokenizers make of it. Usually one; a character Python counts as part of a
    word can be a separator to FTS5."""
    raw, stemmed = _scratch_tokens(conn, words, "search_qraw", "search_qtok")
    # The Porter tokenizer stems what unicode61 splits: the same tokens, in order.
    return {word: tuple(zip(raw[word], stemmed[word], strict=True)) for word in words}


def _scratch_tokens(
    conn: sqlite3.Connection, words: list[str], *tables: str
) -> list[dict[str, list[str]]]:
    """Each word's tokens by the tokenizer of each scratch FTS table in `tables`."""
    found = []
    with savepoint(conn, "search_tokenize"):
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
