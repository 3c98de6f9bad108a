"""A turn's suggestions (`Turn.suggestions`): the request searched, the one rule
(`index._suggest.pick_suggestions`) applied, with the session's visibility.

The session keeps one `_index_search.TurnSearch`, whose index connection opens on the
first turn that searches; the rule itself is pure and lives beside the search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import SkillpackError
from .._model import Skill
from ..select._resolve import Resolution

QUERY_CHARS = 500
"""The opening of a message that is searched for suggestions, cut at a word: what a
request asks is said first, and every further word of a pasted log or file costs the
search a lookup (a 4,000-character message took 22 ms at 10,000 skills, the first
500 characters a third of that)."""

if TYPE_CHECKING:
    from ..index._suggest import Suggestion
    from ._parts import SessionParts


def turn_suggestions(parts: SessionParts, resolution: Resolution) -> tuple[Suggestion, ...]:
    """What `prepare_turn` suggests for a resolved user message: nothing when the
    message activated a skill (the user chose), when skills are off or `[search]
    suggestions = 0`, else `pick_suggestions` over the search of its task text (the
    first `QUERY_CHARS`) among the skills the model may use."""
    config = parts.live.config
    limit = config.search_suggestions
    if not limit or not config.skills_enabled or resolution.activations:
        return ()
    text = " ".join(resolution.text.split())
    if len(text) > QUERY_CHARS:
        cut = text.rfind(" ", 0, QUERY_CHARS + 1)
        text = text[: cut if cut > 0 else QUERY_CHARS]
    if not text:
        return ()
    from ..index._suggest import pick_suggestions, suggestions_of

    catalog = parts.live.catalog

    def usable(skill: Skill) -> bool:
        # A `paths:` skill is suggested once a noted path opened it, as it joins the
        # model's catalog (`SessionParts.model_skills`).
        return parts.is_visible(skill) and parts.is_enabled(skill) and parts.live.paths_open(skill)

    try:
        results = parts.search.get().search(catalog, text, limit=limit, is_visible=usable)
    except SkillpackError:
        # Hints only: a search that cannot run (SQLite without FTS5) never fails a turn.
        return ()
    return suggestions_of(pick_suggestions(results, limit=limit), catalog, is_visible=usable)
