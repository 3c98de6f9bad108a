"""Showing a stranger's text on a terminal (base: no imports from the packages).

Skill names, descriptions, bodies, paths and messages may hold terminal controls
(`ESC[2J` clears the screen, an OSC sequence retitles the window), bidi overrides
(U+202E reverses what follows) or invisible format characters. Every surface that
draws text for people passes it through `safe_text`, which shows each such
character as a visible escape and keeps everything else (accents, CJK, emoji).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_HIDDEN: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls (C0, DEL, C1), format characters (bidi, zero-width, tags), lone
surrogates, and the line and paragraph separators: a terminal obeys or hides them."""

_NAMED: Final = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}

LINE_BREAKS: Final = "\t\n\r\f\v"
"""What `single_line` splits on: line breaks and tabs."""
_LINE_BREAK: Final = re.compile(r"[\t\n\r\f\v]")
_BLANKS: Final = " " + LINE_BREAKS


def single_line(text: str) -> str:
    """`text` on one line, as a description is shown everywhere: line breaks
    and tabs split it into pieces, which are trimmed, emptied ones dropped, and joined
    again with single spaces (spaces inside a line are kept)."""
    if not any(char in text for char in LINE_BREAKS):
        return text.strip(_BLANKS)
    pieces = (piece.strip(_BLANKS) for piece in _LINE_BREAK.split(text))
    return " ".join(piece for piece in pieces if piece)


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
