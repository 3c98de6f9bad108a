"""Which catalog entries matter most when the budget cannot show them all (design
rules: rendering), pure: skills and their recent use in, an order out.

Rank, best first: a skill used in the session (the most recent use first), then
scope (`admin`, `repo`, `extra`, `user`, `system`, `mcp`: the project's skills before
personal ones before bundled ones), then precedence inside the scope (a repo root
nearer the working directory first). Skills still equal after that keep a fixed order
that does not follow the alphabet: a CRC-32 of the name, then the path, so no part of
the alphabet is favoured and the same skills rank alike on every machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from zlib import crc32

from .._model import SCOPE_RANK, Skill


def catalog_rank(skills: Sequence[Skill], recent: Mapping[str, int] | None = None) -> list[int]:
    """Indices into `skills`, best-ranked first.

    Args:
        skills: The catalog's skills (any order).
        recent: When each skill was last used, by `Skill.key`: a larger number is a
            more recent use; skills absent from it were not used.
    """
    used = recent or {}

    def key(index: int) -> tuple[int, int, int, int, int, str]:
        skill = skills[index]
        when = used.get(skill.key)
        return (
            0 if when is not None else 1,
            -(when or 0),
            SCOPE_RANK.get(skill.scope, len(SCOPE_RANK)),
            skill.rank,
            crc32(skill.name.encode("utf-8", "surrogatepass")),
            skill.path,
        )

    return sorted(range(len(skills)), key=key)
