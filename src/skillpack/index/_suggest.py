"""Turn-time suggestions: which of a request's search results to put before the model.

One rule over `SkillSearch`'s ranking (`pick_suggestions`), pure: the first `limit`
results, each kept when a name or path rule matched it, or when the skill's own
statement of purpose (name, description, when_to_use) holds enough of the request,
in one of two ways: it covers much of it (at least `MANY_WORDS` of its words with a
fit (`fit_of`: coverage × √relevance) of `MIN_FIT_MANY`, or `FEW_WORDS` with
`MIN_FIT`), or it claims distinctive words of it (`FEW_WORDS` of them, with a
`SearchResult.claim` of `MIN_CLAIM`: rare words, or words of its name). A request
that needs no skill ("rename this variable", "which port does PostgreSQL use")
shares words with skill bodies, but few with what any skill says it is for, and
those few are common ones, so the turn suggests nothing.
Suggestions are hints the host shows the model, never instructions:
`suggestion_note` says so.

The threshold was chosen on the tuning half of `eval/suggest_requests.toml` only
(`eval/suggest_eval.py`); `docs/design.md` has the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._model import Catalog, Skill
from ..select._resolve import shown_ids
from ._query import TIER_NAME_PREFIX
from ._search import SearchResult

FEW_WORDS = 2
"""Least number of the request's words a suggested skill's frontmatter holds."""
MIN_FIT = 0.60
"""Least `fit_of` of a text match whose frontmatter holds `FEW_WORDS` of the words."""
MANY_WORDS = 3
"""With this many of the request's words in its frontmatter, `MIN_FIT_MANY` will do."""
MIN_FIT_MANY = 0.30
"""Least `fit_of` of a text match whose frontmatter holds `MANY_WORDS` words.

All four were chosen on the tuning half of the eval at the real corpus (360
skills): a right skill among the suggestions for 0.804 of the requests some skill
fits, none for 0.980 of those none does (see `docs/design.md` for the others tried)."""

MIN_CLAIM = 1.10
"""Least `SearchResult.claim` of a text match whose frontmatter holds `FEW_WORDS` of
the request's words: a little more than one word no other skill says it is for (a
word of its name counts twice). Chosen with the other rules in place, on the tuning
half only, at 40, 360 and 4,000 skills (`docs/design.md` has the numbers)."""

NOTE_DESCRIPTION_CHARS = 160
"""Each suggestion's description in the note is cut to this many characters."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Suggestion:
    """A skill that may fit a turn's request: a hint for the model, never injected."""

    id: str
    """The shortest id that picks exactly this skill (`plugin:name` for a plugin's
    skill): what the model passes to `skill_load`."""
    name: str
    path: str
    """Its SKILL.md."""
    description: str
    score: float
    """The search score (comparable within one request only)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape every surface prints."""
        return {
            "id": self.id,
            "name": self.name,
            "path": self.path,
            "description": self.description,
            "score": round(self.score, 4),
        }


def fit_of(result: SearchResult) -> float:
    """How well a text match fits its request: the share of the request the skill
    says it is for (`coverage`), times the square root of its text relevance."""
    return result.coverage * math.sqrt(max(result.relevance, 0.0))


def fits(result: SearchResult) -> bool:
    """Whether `result` may be suggested: a name or path rule matched it, or its
    frontmatter holds enough of the request's words with enough fit, or claims
    enough distinctive ones."""
    if result.score >= TIER_NAME_PREFIX:
        return True
    if result.held < FEW_WORDS:
        return False
    fit = fit_of(result)
    return (
        (result.held >= MANY_WORDS and fit >= MIN_FIT_MANY)
        or fit >= MIN_FIT
        or result.claim >= MIN_CLAIM
    )


def pick_suggestions(
    results: Sequence[SearchResult],
    *,
    limit: int,
    accept: Callable[[SearchResult], bool] = fits,
) -> tuple[SearchResult, ...]:
    """The rule: of the first `limit` results (best first), those `accept` (`fits`)
    takes, in their order.

    Pure and cheap: `results` is a search's ranking for the request; nothing else
    is read. `limit` 0 suggests nothing. An evaluation may pass another `accept`.
    """
    return tuple(result for result in results[: max(limit, 0)] if accept(result))


def suggestions_of(
    picked: Iterable[SearchResult],
    catalog: Catalog,
    *,
    is_visible: Callable[[Skill], bool] = lambda skill: True,
) -> tuple[Suggestion, ...]:
    """`picked` as `Suggestion` values, each with the id that picks it in `catalog`."""
    results = tuple(picked)
    ids = shown_ids(catalog, [r.skill for r in results], is_visible=is_visible)
    return tuple(
        Suggestion(
            id=skill_id,
            name=r.skill.name,
            path=r.skill.path,
            description=r.skill.description,
            score=r.score,
        )
        for r, skill_id in zip(results, ids, strict=True)
    )


def suggestion_note(suggestions: Sequence[Suggestion]) -> str:
    """The short note a host puts before the model: which skills may fit, as hints.

    Empty when there is nothing to suggest.
    """
    if not suggestions:
        return ""
    from ..render._catalog import shorten

    lines = ["Skills that may fit this request (hints, not instructions; load one if it helps):"]
    for suggestion in suggestions:
        description = shorten(" ".join(suggestion.description.split()), NOTE_DESCRIPTION_CHARS)
        lines.append(f"- {suggestion.id}: {description}" if description else f"- {suggestion.id}")
    return "\n".join(lines)
