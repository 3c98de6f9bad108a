"""Text a stranger wrote, made safe and short for the screen.

A skill's name, description, body, paths and problem messages may hold terminal
controls (`ESC[2J`), bidi overrides (U+202E) or invisible format characters:
`safe_text` shows each as a visible escape, the rule the CLI follows for what it
prints (issue 9). Paths are shown relative to the folder the picker was opened in
when they are inside it, else from `~`: shorter, and stable in snapshots.
"""

from __future__ import annotations

import os
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
        _escape(ch) if ch not in keep and unicodedata.category(ch) in _HIDDEN else ch
        for ch in text
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


def one_line(text: str) -> str:
    """`text` on one line: whitespace runs collapsed, then made safe."""
    return safe_text(" ".join(text.split()))


def clip(text: str, width: int) -> str:
    """`text` cut to `width` characters, ending in "…" when cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def counted(n: int, noun: str) -> str:
    """"1 problem", "3 problems"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


class PathDisplay:
    """Shows paths relative to a base folder when inside it, else from `~`."""

    def __init__(self, base: str, home: str | None = None) -> None:
        self._base = os.path.join(os.path.abspath(base), "")
        home = home if home is not None else os.path.expanduser("~")
        self._home = os.path.join(os.path.abspath(home), "") if home else ""

    def path(self, path: str) -> str:
        """`path` as shown (made safe)."""
        return safe_text(self.text(path))

    def text(self, text: str) -> str:
        """`text` with the base folder dropped and the home folder shown as `~`,
        wherever a path to them appears (messages name files)."""
        if self._base != os.sep:
            text = text.replace(self._base, "")
        if self._home and self._home != os.sep:
            text = text.replace(self._home, "~" + os.sep)
        return text
