"""The words of a request that say which skill it needs (pure).

Search (`index/_query.py`) and the trigger check (`_triggers.py`) read a request
the same way: lowercased, accents folded, stop words and one-letter words dropped.
"""

from __future__ import annotations

import re
import unicodedata

WORD = re.compile(r"[^\W_]+")
"""A word: letters and digits (Unicode), split at everything else and at `_`."""

# The combining diacritical marks blocks: what NFKD splits off accented letters.
_COMBINING_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")

# Words that say nothing about which skill fits a request. Kept small on purpose:
# BM25's IDF already discounts common words; these are the ones whose presence in
# almost every request would otherwise dilute the relevance threshold.
_STOP_TEXT = """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each
    few for from further get gets getting go going got had has have having he her here
    hers him his how i if in into is it its itself just let lets like me more most my
    myself need needs no nor not now of off on once only or other our ours out over own
    please same she should so some such than that the their theirs them then there these
    they this those through to too under until up us very want wants was we were what
    when where which while who whom why will with would you your yours don doesn isn
    won aren wasn ll ve re
    help make sure thing things something anything way really actually kind sort
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

_NAME_SEP = re.compile(r"[\s_]+")

_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ers", "er", "ed", "es", "s")


def folded(text: str) -> str:
    """`text` lowercased and, like the FTS5 tokenizers' `remove_diacritics`,
    without accents ("Café" -> "cafe")."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    return _COMBINING_MARKS.sub("", unicodedata.normalize("NFKD", lowered))


def query_words(query: str) -> list[str]:
    """The informative words of a query: lowercased, stop words and 1-letter words
    removed, first occurrence kept."""
    seen: dict[str, None] = {}
    for word in WORD.findall(query.lower()):
        if len(word) > 1 and word not in STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def light_stem(word: str) -> str:
    """`word` less one common English ending ("deploying" -> "deploy", "tests" ->
    "test"), keeping at least four letters. Coarser than Porter and only used to
    say which words two texts share; search itself stems with FTS5."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def norm_name(text: str) -> str:
    """A typed skill name as names are compared: trimmed, lowercased, spaces and
    `_` read as `-` ("Code Review" -> "code-review")."""
    lowered = text.strip().lower()
    if "_" in lowered or " " in lowered or not lowered.isprintable():
        return _NAME_SEP.sub("-", lowered)
    return lowered  # the common case, without a regex pass
