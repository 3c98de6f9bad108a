"""Narrowing a list of skills as a person types its name (pure).

The picker reads what is typed as the resolver reads a `$id`: a bare name, or a
qualified id when it holds a `:` (`repo:lint`, `my-plugin:lint`); a leading `$` or
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

    Built once per catalog (lower-casing 10,000 names costs more than a match), then
    `match` runs one pass over them: about a millisecond at 10,000 skills.
    """

    def __init__(self, skills: Sequence[Skill]) -> None:
        self.skills = tuple(skills)
        self._plain = _normalized(skill_keys(self.skills, qualified=False))
        self._qualified: list[tuple[str, Skill]] | None = None

    def _keys(self, qualified: bool) -> list[tuple[str, Skill]]:
        if not qualified:
            return self._plain
        if self._qualified is None:
            self._qualified = _normalized(skill_keys(self.skills, qualified=True))
        return self._qualified

    def match(self, query: str) -> list[tuple[Skill, NameTier]]:
        """Skills whose name matches `query`, best tier first (near misses are
        `near_misses`). An empty query matches nothing: the caller shows all."""
        wanted = typed_id(query)
        if not wanted:
            return []
        inside = len(wanted) >= 2
        best: dict[str, tuple[int, int, Skill]] = {}
        for order, (key, skill) in enumerate(self._keys(":" in wanted)):
            at = key.find(wanted)
            if at < 0 or (at > 0 and not inside):
                continue
            rank = 2 if at > 0 else (0 if len(key) == len(wanted) else 1)
            held = best.get(skill.key)
            # A plugin skill has two qualified ids: the better match counts.
            if held is None or rank < held[0]:
                best[skill.key] = (rank, held[1] if held else order, skill)
        ranked = sorted(best.values(), key=lambda item: (item[0], item[1]))
        return [(skill, _TIERS[rank]) for rank, _order, skill in ranked]

    def near_misses(self, query: str, *, limit: int = NEAR_MISSES) -> list[Skill]:
        """The resolver's close names for `query`, best first (a typo's fix)."""
        wanted = typed_id(query)
        return close_matches(wanted, self._keys(":" in wanted), limit=limit)


def _normalized(keyed: list[tuple[str, Skill]]) -> list[tuple[str, Skill]]:
    # The resolver's keys are lower-cased; typed ids also read spaces and `_` as `-`.
    return [(norm_name(key), skill) for key, skill in keyed]
