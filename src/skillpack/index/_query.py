"""The pure side of `skill_search`: query words, rule tiers, FTS5 expressions,
strong and weak matches. No SQLite here: `_search` runs what this module builds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

HEAD_COLUMNS = ("name", "description", "when_to_use")
"""Columns of `search_head`: the frontmatter that says what a skill is for."""

TEXT_COLUMNS = ("body",)
"""Columns of `search_text`: the start of the body."""

COLUMNS = HEAD_COLUMNS + TEXT_COLUMNS
"""Every indexed column, in the order of `COLUMN_WEIGHTS` and of `reasons`."""

COLUMN_WEIGHTS = (10.0, 5.0, 4.0, 1.0)
"""BM25 weight per column: a word in the name says more than one in the body."""

HEAD_BUDGET = 600
"""Per query, most documents whose `search_head` postings are read (sum of the
searched terms' document frequencies there); the rarest term is always searched."""

TEXT_BUDGET = 500
"""The same for `search_text`, whose postings are longer; terms past the budget are
matched in the frontmatter only. (600 when the table also held headings from past
`BODY_CHARS`: body-only document frequencies are lower, and 500 searches the same
words at the same cost.)"""

Match = Literal["strong", "weak"]
"""How well a result fits: see `match_of`."""

STRONG_RELEVANCE = 0.60
"""A text match is `strong` when BM25 / (query IDF mass) reaches this and the
query's known share reaches `KNOWN_SHARE`; otherwise it is `weak` (still
returned). Both were chosen together on the tuning half of the eval, as the pair
closest to both aims at once: 0.898 of the answerable requests get a strong first
result and 0.815 of the no-fit requests no strong result (relevance 0.72 alone,
before: 0.869 / 0.778; see `eval/README.md`)."""

KNOWN_SHARE = 0.65
"""A text match is `strong` only when at least this share of the query's IDF mass
is in words some skill holds. A word no skill holds weighs the most (highest IDF),
so a request made largely of them (a recipe, a tool no skill covers) is one no
skill fits, however well its remaining words match."""

NAME_CLAIM = 2.0
"""In `SearchResult.claim`, a query word the skill's name holds counts this many
times: a skill named for a word says most plainly that it is for it."""

TIER_EXACT_PATH = 3
TIER_EXACT_NAME = 2
TIER_NAME_PREFIX = 1
TIER_TEXT = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class Term:
    word: str
    """A query word as FTS5 reads it (lowercased, without diacritics)."""
    stem: str
    """Its Porter stem: the term `search_head` holds."""
    forms: tuple[str, ...]
    """What `search_text` (not stemmed) is searched for: the word, or when no body
    holds it, the body words with its stem."""
    head_df: int
    """Documents whose frontmatter holds the stem (0 when unknown to the index)."""
    text_df: int
    """Documents whose body holds one of `forms` (the sum of theirs, at most N)."""


def norm_path(text: str) -> str:
    stripped = text.strip()
    return stripped.rstrip("/\\") or stripped


def match_of(tier: int, relevance: float, known: float = 1.0) -> Match:
    """`strong` when a name or path rule matched, or the text relevance clears
    `STRONG_RELEVANCE` and `known` (the share of the query's IDF mass in words
    some skill holds) clears `KNOWN_SHARE`; else `weak`."""
    if tier > TIER_TEXT or (relevance >= STRONG_RELEVANCE and known >= KNOWN_SHARE):
        return "strong"
    return "weak"


def idf(total: int, df: int) -> float:
    # BM25's IDF as FTS5 computes it, floored like FTS5 does for very common terms.
    return max(math.log((total - df + 0.5) / (df + 0.5)), 1e-6)


def starts_word(text: str, prefixes: list[str]) -> bool:
    """Whether a word of `text` (lowercased) starts with one of `prefixes`.

    `str.find` from each hit instead of a regex alternation: compiling a pattern
    per query cost more than the search it served.
    """
    for prefix in prefixes:
        at = text.find(prefix)
        while at >= 0:
            if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_"):
                return True
            at = text.find(prefix, at + 1)
    return False


def head_expression(terms: list[Term]) -> str:
    """The `search_head` query: the rarest words while their document frequencies
    add up to at most `HEAD_BUDGET`, and always the rarest one (in names only when
    it alone is over the budget).

    A word in a large share of descriptions carries almost no BM25 weight, yet
    would make SQLite score most rows: leaving it out is what keeps a query on
    10,000 skills within a couple of milliseconds.
    """
    return _budgeted([(t.head_df, (t.word,)) for t in terms], HEAD_BUDGET, force=True)


def text_expression(terms: list[Term]) -> str:
    """The `search_text` query: the same rule with `TEXT_BUDGET`, and no forced
    word: bodies are long, and a common word there matches nearly every skill.
    A word is searched as any of its body forms."""
    return _budgeted([(t.text_df, t.forms) for t in terms if t.forms], TEXT_BUDGET, force=False)


def _budgeted(words: list[tuple[int, tuple[str, ...]]], budget: int, *, force: bool) -> str:
    """An FTS5 OR of `words`, each (document frequency, its tokens), rarest first
    while their frequencies add up to at most `budget`."""
    parts: list[str] = []
    spent = 0
    for df, tokens in sorted(words, key=lambda word: word[0]):
        if spent + df > budget:
            if force and not parts:
                # Even the rarest word is in too many documents to score them all
                # (BM25 scores every match; a word in most descriptions weighs next
                # to nothing there). Searched in names only: matching still reads
                # its postings, but only the few rows naming it are scored.
                return f"{HEAD_COLUMNS[0]} : {quoted(tokens[0])}"
            break
        parts.extend(quoted(token) for token in tokens)
        spent += df
    return " OR ".join(parts)


def quoted(token: str) -> str:
    """A token as an FTS5 string: operators (AND, OR, NOT, NEAR) and syntax
    characters inside it stay inert. Tokens come from FTS5's own tokenizers, so
    each is one term."""
    return '"' + token.replace('"', '""') + '"'
