"""What a host's `$` or `/` completion popup shows for what the user has typed so far.

`complete_mention(session, "$dep")` ranks the skills a person may invoke in the
session as the resolver reads a typed id (`select._narrow`): exact name or qualified
id, then prefix, then substring, each in catalog order (scope rank, name, path); a
typo with no such match gets the resolver's near misses. Each `Completion` carries
what a popup row needs (the mention to insert, id, scope, one-line description,
argument hint) and nothing a host must rebuild: the mention is the shortest one that
picks exactly that skill (`select.shown_ids`), so inserting it never turns ambiguous.

Offered: skills that are enabled, allowed by the permission rules, not shadowed and
user-invocable; for `/`, not a host built-in command (those are reached as `$name`).
Nothing when the config turns skills off. The name table is built once per catalog
(about a millisecond per keystroke at 10,000 skills); the filters run only on the
matches, until `limit` rows are found.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Literal

from .._errors import UsageError
from .._model import Catalog, Scope, Skill
from ..select._narrow import NameTier, SkillNames, typed_id
from ..select._resolve import shown_ids
from ._session import Session, builtin_commands

CompletionMatch = Literal["all", "exact", "prefix", "substring", "close"]
"""Why a skill is offered: nothing typed yet (`all`), or how its name matched."""

MAX_COMPLETIONS = 200
"""The most rows one call returns."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Completion:
    """One row of a `$`/`/` completion popup."""

    mention: str
    """What to insert: the sigil and `id` (`$deploy`, `/github:gh-fix-ci`), or the
    link `[$name](path)` when only the path picks the skill."""
    id: str
    """The shortest id that picks exactly this skill: its name, else its qualified id
    (`plugin:name`, `scope:name`), else its SKILL.md path."""
    name: str
    qualified_name: str
    scope: Scope
    description: str
    """The description on one line (blank runs collapsed)."""
    argument_hint: str | None
    match: CompletionMatch
    path: str


_lock = threading.Lock()
_names: tuple[Catalog, SkillNames] | None = None


def _names_of(catalog: Catalog) -> SkillNames:
    """The name table of `catalog`, built once for the latest catalog asked about."""
    global _names
    with _lock:
        if _names is None or _names[0] is not catalog:
            _names = (catalog, SkillNames(catalog.skills))
        return _names[1]


def complete_mention(session: Session, typed: str, *, limit: int = 20) -> tuple[Completion, ...]:
    """The completion rows for `typed`, best first.

    Args:
        session: Whose catalog, enable state, permissions and built-in commands count.
        typed: What the user typed so far: `$dep`, `/dep`, `$github:`, or a bare `dep`
            (read as `$`). Only `$` or `/` then the id is read: `$` alone lists every
            offered skill, in catalog order.
        limit: At most this many rows (1 to `MAX_COMPLETIONS`).

    Raises:
        UsageError: `limit` out of range.
    """
    if not 1 <= limit <= MAX_COMPLETIONS:
        raise UsageError(f"limit must be between 1 and {MAX_COMPLETIONS}, not {limit}.")
    if not session.skills.skills_enabled:
        return ()
    text = typed.strip()
    sigil = "/" if text.startswith("/") else "$"
    catalog = session.catalog
    builtin = builtin_commands(session) if sigil == "/" else frozenset()

    def offered(skill: Skill) -> bool:
        return (
            skill.shadowed_by is None
            and skill.user_invocable
            and skill.name.lower() not in builtin
            and session.skills.is_enabled(skill)
            and session.skills.is_visible(skill)
        )

    ranked: Iterable[tuple[Skill, CompletionMatch]]
    if not typed_id(text):
        ranked = ((skill, "all") for skill in catalog.skills)
    else:
        names = _names_of(catalog)
        matched: list[tuple[Skill, NameTier]] = names.match(text)
        ranked = matched
        if not any(offered(skill) for skill, _tier in matched):
            ranked = ((skill, "close") for skill in names.near_misses(text))
    rows = list(islice(((s, m) for s, m in ranked if offered(s)), limit))
    ids = shown_ids(
        catalog, [skill for skill, _match in rows], is_visible=session.skills.is_visible
    )
    return tuple(
        Completion(
            mention=(
                f"[${skill.name}]({skill.path})" if shown == skill.path else f"{sigil}{shown}"
            ),
            id=shown,
            name=skill.name,
            qualified_name=skill.qualified_name,
            scope=skill.scope,
            description=" ".join(skill.description.split()),
            argument_hint=skill.argument_hint,
            match=match,
            path=skill.path,
        )
        for (skill, match), shown in zip(rows, ids, strict=True)
    )
