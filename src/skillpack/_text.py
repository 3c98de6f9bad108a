"""Showing a stranger's text on a terminal (base: no imports from the packages).

Skill names, descriptions, bodies, paths and messages may hold terminal controls
(`ESC[2J` clears the screen, an OSC sequence retitles the window), bidi overrides
(U+202E reverses what follows) or invisible format characters. Every surface that
draws text for people passes it through `safe_text`, which shows each such
character as a visible escape and keeps everything else (accents, CJK, emoji).
"""

from __future__ import annotations

import unicodedata
from typing import Final

_HIDDEN: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls (C0, DEL, C1), format characters (bidi, zero-width, tags), lone
surrogates, and the line and paragraph separators: a terminal obeys or hides them."""

_NAMED: Final = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def safe_text(text: str, *, multiline: bool = False) -> str:
    """`text` with every character a terminal would obey or hide written as an escape
    (`\\x1b`, `\\u202e`); `multiline` keeps newlines and tabs."""
    if text.isprintable():
        return text
    keep = "\n\t" if multiline else ""
    return "".join(
        _escape(ch) if ch not in keep and unicodedata.category(ch) in _HIDDEN else ch for ch in text
    )


def _escape(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
