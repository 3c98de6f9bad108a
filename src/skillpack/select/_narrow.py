"""Narrowing a list of skills as a person types its name (pure).

The picker reads what is typed as the resolver reads a `$id`: a bare name, or a
qualified id when it holds a `:` (`repo:lint`, `my-plugin:lint`: a plugin skill is
named by its plugin, `Skill.qualified_name`); a leading `$` or
`/` is dropped, and names compare as search compares them (`norm_name`: case
ignored, spaces and `_` read as `-`). Tiers, best first:

- `exact`: the whole name or qualified id;
- `prefix`: the name (or qualified id) starts with the query;
- `substring`: the query appears inside the name (two characters or more; one
  letter inside a name matches most of a catalog and says nothing);
- `close`: the resolver's near misses (`close_matches`), looked for only when no
  other tier matched, so a typo still finds the skill.

Within a tier skills keep the order they were given (the catalog's: scope rank,
name, path). Text ranking (descriptions, bodies) is search's, added by the caller.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Literal

from .._model import Skill
from ._resolve import close_matches, skill_keys
from ._words import norm_name

NameTier = Literal["exact", "prefix", "substring", "close"]
"""How a skill's name matched a typed query."""

_TIERS: tuple[NameTier, ...] = ("exact", "prefix", "substring")

NEAR_MISSES = 5
"""Near misses offered at most when nothing else matched."""


def typed_id(query: str) -> str:
    """A typed query as a skill id to compare: trimmed, without a leading `$` or `/`,
    lower-cased, spaces and `_` read as `-` ("" when nothing is left)."""
    text = query.strip()
    if text[:1] in ("$", "/"):
        text = text[1:]
    return norm_name(text)


class SkillNames:
    """The names of a list of skills, compared once per keystroke.

    Built once per catalog: every key (lower-cased, as `typed_id` reads the query)
    is joined into one text, so a match is a C-speed `str.find` over it and Python
    only looks at the hits: about a millisecond at 10,000 skills.
    """

    def __init__(self, skills: Sequence[Skill]) -> None:
        self.skills = tuple(skills)
        self._plain = _Keys(skill_keys(self.skills, qualified=False))
        self._qualified: _Keys | None = None

    def _keys(self, qualified: bool) -> _Keys:
        if not qualified:
            return self._plain
        if self._qualified is None:
            self._qualified = _Keys(skill_keys(self.skills, qualified=True))
        return self._qualified

    def match(self, query: str) -> list[tuple[Skill, NameTier]]:
        """Skills whose name matches `query`, best tier first (near misses are
        `near_misses`). An empty query matches nothing: the caller shows all."""
        wanted = typed_id(query)
        if not wanted:
            return []
        return self._keys(":" in wanted).match(wanted)

    def near_misses(self, query: str, *, limit: int = NEAR_MISSES) -> list[Skill]:
        """The resolver's close names for `query`, best first (a typo's fix)."""
        wanted = typed_id(query)
        return close_matches(wanted, self._keys(":" in wanted).keyed, limit=limit)


class _Keys:
    """`(key, skill)` pairs, their keys normalized and joined by newlines (which no
    normalized key holds: `norm_name` turns every blank into `-`)."""

    def __init__(self, keyed: list[tuple[str, Skill]]) -> None:
        self.keyed = [(norm_name(key), skill) for key, skill in keyed]
        self.starts: list[int] = []
        offset = 1
        for key, _skill in self.keyed:
            self.starts.append(offset)
            offset += len(key) + 1
        self.text = "\n" + "\n".join(key for key, _skill in self.keyed) + "\n"

    def match(self, wanted: str) -> list[tuple[Skill, NameTier]]:
        text, starts, keyed = self.text, self.starts, self.keyed
        # One letter inside a name says nothing: then only starts of keys count.
        needle = wanted if len(wanted) >= 2 else "\n" + wanted
        shift = 0 if len(wanted) >= 2 else 1
        best: dict[int, int] = {}  # key index -> tier rank
        at = text.find(needle)
        while at >= 0:
            index = bisect_right(starts, at + shift) - 1
            if index not in best:
                start = starts[index]
                if at + shift > start:
                    best[index] = 2
                else:
                    best[index] = 0 if len(keyed[index][0]) == len(wanted) else 1
            # A key's first hit is its leftmost: later hits in it change nothing.
            at = text.find(needle, at + 1)
        ranked = sorted(best.items(), key=lambda item: (item[1], item[0]))
        return [(keyed[index][1], _TIERS[rank]) for index, rank in ranked]
