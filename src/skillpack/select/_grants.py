"""Grants: which skills a caller may see, from the claims of its access token.

An `[[auth.grant]]` of the config names a claim of the token (a dotted path into
nested objects, e.g. `realm_access.roles`), a value, and the skills it opens (names,
qualified ids or path globs, `*` as a wildcard: `select._refs.ref_matches` with
`glob=True`, the matcher of the permission rules). A claim matches when it is that
string, or a list holding it; a scope-like claim given as one space-separated string
(`scp`, `scope`) matches any of its words.

`grant_for` turns a token's claims into a `SkillGrant`: None when no grant is
configured (every valid token sees every skill), else the union of the patterns of
every grant that matches (possibly none: that caller sees no skill). A `SkillGrant`
is a value: two callers with the same patterns share one session (`runtime`
restricts the session's catalog with it, `Session(grant=...)`).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._model import Catalog, Skill
from ._refs import ref_matches


@dataclass(frozen=True, kw_only=True, slots=True)
class Grant:
    """One `[[auth.grant]]`: a claim's value that opens some skills."""

    claim: str
    """A claim of the token, dotted for nested objects (`realm_access.roles`)."""
    value: str
    """The value the claim must be, or hold (a list, or space-separated words)."""
    skills: tuple[str, ...]
    """Names, qualified ids or path globs of the skills it opens (`*` a wildcard)."""

    def matches(self, claims: Mapping[str, Any]) -> bool:
        """Whether the token's claims hold this grant's value."""
        return self.value in claim_values(claims, self.claim)


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillGrant:
    """What one caller may see: the skills its matching grants open (a value)."""

    patterns: tuple[str, ...]
    """The matching grants' skill patterns, sorted, without repeats."""

    def allows(self, skill: Skill) -> bool:
        """Whether one of the patterns names `skill`."""
        return any(ref_matches(pattern, skill, glob=True) for pattern in self.patterns)

    def restrict(self, catalog: Catalog) -> Catalog:
        """`catalog` with only the skills this grant opens. Problems that name no
        skill's file stay (roots cut short); those of files (an invalid SKILL.md)
        are dropped, since they would name skills the caller may not see.

        Worked out once per catalog and grant (`RESTRICTED_KEPT` kept): every
        conversation a server opens for a grant starts from the same catalog."""
        key = (id(catalog), self)
        with _restricted_lock:
            kept = _restricted.get(key)
            if kept is not None and kept[0]() is catalog:
                _restricted.move_to_end(key)
                return kept[1]
        skills = tuple(s for s in catalog.skills if self.allows(s))
        restricted = catalog
        if len(skills) != len(catalog.skills):
            problems = tuple(p for p in catalog.problems if p.code in _ROOT_PROBLEMS)
            restricted = Catalog(skills=skills, problems=problems, roots=catalog.roots)
        with _restricted_lock:
            _restricted[key] = (weakref.ref(catalog), restricted)
            while len(_restricted) > RESTRICTED_KEPT:
                _restricted.popitem(last=False)
        return restricted


_ROOT_PROBLEMS = frozenset({"walk-truncated"})
"""Problems about a root as a whole, kept in a restricted catalog."""
RESTRICTED_KEPT = 256
"""Restricted catalogs kept (by the identity of the whole catalog and the grant)."""
_restricted: OrderedDict[tuple[int, SkillGrant], tuple[weakref.ref[Catalog], Catalog]] = (
    OrderedDict()
)
_restricted_lock = threading.Lock()


def grant_for(grants: Sequence[Grant], claims: Mapping[str, Any]) -> SkillGrant | None:
    """The `SkillGrant` of a token's claims: None without grants (it sees every
    skill), else the union of the patterns of the grants that match."""
    if not grants:
        return None
    patterns: set[str] = set()
    for grant in grants:
        if grant.matches(claims):
            patterns.update(grant.skills)
    return SkillGrant(patterns=tuple(sorted(patterns)))


def claim_values(claims: Mapping[str, Any], dotted: str) -> frozenset[str]:
    """The string values of a claim at a dotted path: a string (split on spaces, as
    OAuth `scope` strings are), or the strings of a list; empty when absent."""
    value: Any = claims
    if dotted in claims:  # a claim whose own name holds dots (Auth0's URLs)
        value = claims[dotted]
    else:
        for part in dotted.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return frozenset()
            value = value[part]
    return frozenset(_strings(value))


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
        if " " in value:
            yield from value.split()
    elif isinstance(value, list | tuple):
        for item in value:
            if isinstance(item, str):
                yield item
