"""Text a stranger wrote, made safe and short for the screen.

A skill's name, description, body, paths and problem messages may hold terminal
controls (`ESC[2J`), bidi overrides (U+202E) or invisible format characters:
everything drawn goes through `safe_text`. Paths are shown relative to the
folder the picker was opened in when they are inside it, else from `~`: shorter,
and stable in snapshots.
"""

from __future__ import annotations

import os

from .._text import safe_text

__all__ = ["PathDisplay", "clip", "counted", "one_line", "safe_text"]


def one_line(text: str) -> str:
    """`text` on one line: whitespace runs collapsed, then made safe."""
    return safe_text(" ".join(text.split()))


def clip(text: str, width: int) -> str:
    """`text` cut to `width` characters, ending in "…" when cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def counted(n: int, noun: str) -> str:
    """ "1 problem", "3 problems"."""
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
