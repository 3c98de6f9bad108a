"""The trigger check: do the requests a skill's author lists pick that skill? (pure)

An author lists example requests for a skill in its frontmatter
(`metadata.triggers`, or a top-level `triggers`) or in `evals/triggers.toml` beside
the SKILL.md. `check_triggers` runs each through a search over the whole catalog
(the caller's `search`: `skill_search`, as the model would call it) and reports:

* each listed request's outcome: `picked` (the skill is the first result and
  strong), `other` (another skill is the first strong result: the author's
  request goes elsewhere), `nothing` (no strong result);
* competitors: skills that rank above the checked skill, or close to it, on one
  of its listed requests or on its own description taken as a request (the one
  probe every skill has: a request worded like the description should pick it);
  with the words they share, rarest first;
* the description lint (`_lint.py`).

Only listed requests decide pass or fail (`TriggerReport.failed`): the
description probe finds competing pairs, it is no stand-in for the author's
requests.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._model import Problem, Skill
from ._lint import LintFinding, lint_description
from ._words import STOP_WORDS, WORD, folded, light_stem, query_words

TRIGGERS_FILE = "evals/triggers.toml"
"""The trigger list beside a SKILL.md: `triggers = ["a request", ...]`."""

COMPETE_RATIO = 0.66
"""On the description probe, a skill ranked below the checked one competes when
its text relevance reaches this share of the checked skill's (in the same rule
tier): two thirds, so a skill holding most of the description's rarer words
counts. On a listed request only the skills ranked above it compete."""

PROBE_LIMIT = 5
"""Results asked of search per probe."""

MAX_TERMS = 6
"""Shared words reported per competitor, rarest first."""

Outcome = Literal["picked", "other", "nothing"]


@dataclass(frozen=True, kw_only=True, slots=True)
class TriggerRequest:
    """One example request an author lists for a skill."""

    text: str
    source: str
    """Where it is listed: `metadata.triggers`, `triggers` or `evals/triggers.toml`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Hit:
    """One search result, as the check reads it."""

    skill: Skill
    score: float
    """The search score: rule tier in the integer part, text relevance after it."""
    strong: bool


Search = Callable[[str, int], Sequence[Hit]]
"""`search(request, limit)`: results best first, as `skill_search` returns them."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestCheck:
    """What one listed request picks."""

    request: TriggerRequest
    outcome: Outcome
    picked: Hit | None
    """The first strong result (None when there is none)."""
    rank: int | None
    """Where the checked skill ranks among the results, from 1 (None: absent)."""
    terms: tuple[str, ...] = ()
    """When another skill is picked: the request's words that skill's name,
    description or `when_to_use` holds, rarest first."""
    missing: tuple[str, ...] = ()
    """When another skill is picked or nothing is: the request's words the checked
    skill's name, description and `when_to_use` lack (candidates to add)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Competitor:
    """A skill that a request meant for the checked one could pick instead."""

    skill: Skill
    via: str
    """The probe: `description`, or the listed request's text."""
    ahead: bool
    """It ranks above the checked skill on that probe."""
    terms: tuple[str, ...]
    """Words of the probe both skills' name, description or `when_to_use` hold,
    rarest first."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillCheck:
    """The trigger check of one skill."""

    skill: Skill
    requests: tuple[RequestCheck, ...]
    competitors: tuple[Competitor, ...]
    lint: tuple[LintFinding, ...]
    problems: tuple[Problem, ...] = ()
    """Trigger lists that could not be read (`triggers-invalid`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Pair:
    """Two skills that compete for the same requests."""

    skills: tuple[Skill, Skill]
    terms: tuple[str, ...]
    via: tuple[str, ...]
    """The probes on which they met."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TriggerReport:
    """Every checked skill, and the competing pairs among them and the catalog."""

    skills: tuple[SkillCheck, ...]
    pairs: tuple[Pair, ...]

    @property
    def failed(self) -> bool:
        """A listed request picks another skill."""
        return any(r.outcome == "other" for check in self.skills for r in check.requests)

    def to_dict(self) -> dict[str, Any]:
        """The stable `skillpack triggers --json` shape."""
        requests = [r for check in self.skills for r in check.requests]
        counts = {
            o: sum(1 for r in requests if r.outcome == o) for o in ("picked", "other", "nothing")
        }
        return {
            "ok": not self.failed,
            "summary": {
                "skills": len(self.skills),
                "requests": len(requests),
                **counts,
                "pairs": len(self.pairs),
                "lint": sum(len(check.lint) for check in self.skills),
            },
            "skills": [_check_dict(check) for check in self.skills],
            "pairs": [
                {
                    "skills": [_skill_dict(s) for s in pair.skills],
                    "terms": list(pair.terms),
                    "via": list(pair.via),
                }
                for pair in self.pairs
            ],
        }


# -- the lists ----------------------------------------------------------------------


def listed_triggers(
    skill: Skill, file_text: str | None
) -> tuple[tuple[TriggerRequest, ...], tuple[Problem, ...]]:
    """The requests `skill` lists, from its frontmatter and `evals/triggers.toml`
    (`file_text`, None when there is no such file), duplicates removed.

    In the frontmatter a list is one request per item; a text is one request per
    line, or, on one line, one per comma (`triggers: deploy, release, rollback`).
    """
    found: list[TriggerRequest] = []
    problems: list[Problem] = []
    for source, value in (
        ("metadata.triggers", skill.metadata.get("triggers")),
        ("triggers", skill.extra.get("triggers")),
    ):
        if value is not None:
            texts = _texts(value)
            if texts is None:
                problems.append(_invalid(skill.path, f"`{source}` must be a list of requests"))
                continue
            found.extend(TriggerRequest(text=t, source=source) for t in texts)
    if file_text is not None:
        where = f"{skill.dir}/{TRIGGERS_FILE}"
        try:
            data = tomllib.loads(file_text)
        except tomllib.TOMLDecodeError as exc:
            problems.append(_invalid(where, f"it is not valid TOML ({exc})"))
            data = {}
        value = data.get("triggers", [])
        texts = _texts(value) if isinstance(value, list) else None
        if texts is None:
            problems.append(_invalid(where, "`triggers` must be a list of strings"))
        else:
            found.extend(TriggerRequest(text=t, source=TRIGGERS_FILE) for t in texts)
    unique = {request.text.casefold(): request for request in reversed(found)}
    return tuple(reversed(unique.values())), tuple(problems)


def _texts(value: object) -> list[str] | None:
    if isinstance(value, str):
        parts = value.splitlines() if "\n" in value.strip() else value.split(",")
        return [p.strip() for p in parts if p.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    return None


def _invalid(path: str, why: str) -> Problem:
    return Problem(
        path=path,
        severity="warning",
        code="triggers-invalid",
        message=(
            f"The trigger list in {path} is ignored: {why}. Write "
            '`triggers = ["a request that should pick this skill", ...]`.'
        ),
    )


# -- the check ----------------------------------------------------------------------


def check_triggers(
    targets: Sequence[Skill],
    catalog: Sequence[Skill],
    listed: Mapping[str, Sequence[TriggerRequest]],
    search: Search,
    *,
    problems: Mapping[str, Sequence[Problem]] | None = None,
) -> TriggerReport:
    """Check each of `targets` (skills of `catalog`) against `search`.

    Args:
        targets: The skills to check.
        catalog: Every skill search can return (the words' rarity is counted here).
        listed: Skill key -> its listed requests (`listed_triggers`).
        search: The search the model would use, over the whole catalog.
        problems: Skill key -> problems reading its trigger lists, reported as is.
    """
    vocabulary = _Vocabulary(catalog)
    checks = []
    for skill in targets:
        requests = []
        competitors: dict[str, Competitor] = {}
        for request in listed.get(skill.key, ()):
            hits = search(request.text, PROBE_LIMIT)
            requests.append(_request_check(skill, request, hits, vocabulary))
            for competitor in _competitors(skill, request.text, request.text, hits, vocabulary):
                if competitor.ahead:
                    competitors.setdefault(competitor.skill.key, competitor)
        probe = skill.description
        hits = search(probe, PROBE_LIMIT)
        for competitor in _competitors(skill, probe, "description", hits, vocabulary):
            competitors.setdefault(competitor.skill.key, competitor)
        checks.append(
            SkillCheck(
                skill=skill,
                requests=tuple(requests),
                competitors=tuple(competitors.values()),
                lint=lint_description(skill),
                problems=tuple((problems or {}).get(skill.key, ())),
            )
        )
    return TriggerReport(skills=tuple(checks), pairs=_pairs(checks))


def _request_check(
    skill: Skill, request: TriggerRequest, hits: Sequence[Hit], vocabulary: _Vocabulary
) -> RequestCheck:
    rank = next((i + 1 for i, hit in enumerate(hits) if hit.skill.key == skill.key), None)
    picked = next((hit for hit in hits if hit.strong), None)
    if picked is not None and picked.skill.key == skill.key:
        return RequestCheck(request=request, outcome="picked", picked=picked, rank=rank)
    missing = vocabulary.absent(request.text, skill)
    if picked is None:
        return RequestCheck(
            request=request, outcome="nothing", picked=None, rank=rank, missing=missing
        )
    return RequestCheck(
        request=request,
        outcome="other",
        picked=picked,
        rank=rank,
        terms=vocabulary.shared(request.text, picked.skill),
        missing=missing,
    )


def _competitors(
    skill: Skill, probe: str, via: str, hits: Sequence[Hit], vocabulary: _Vocabulary
) -> Iterable[Competitor]:
    own = next((hit for hit in hits if hit.skill.key == skill.key), None)
    for hit in hits:
        if hit.skill.key == skill.key:
            break  # the rest rank below: close enough only by score
        if hit.strong:
            terms = vocabulary.shared(probe, hit.skill, skill)
            yield Competitor(skill=hit.skill, via=via, ahead=True, terms=terms)
    if own is None:
        return
    tier, relevance = _relevance(own.score)
    for hit in hits[hits.index(own) + 1 :]:
        hit_tier, hit_relevance = _relevance(hit.score)
        if hit.strong and hit_tier == tier and hit_relevance >= COMPETE_RATIO * relevance:
            terms = vocabulary.shared(probe, hit.skill, skill)
            yield Competitor(skill=hit.skill, via=via, ahead=False, terms=terms)


def _relevance(score: float) -> tuple[int, float]:
    """A search score's rule tier and text relevance: the score is `tier + r/(1+r)`."""
    tier = int(score)
    fraction = min(score - tier, 0.999999)
    return tier, fraction / (1.0 - fraction)


def _pairs(checks: Sequence[SkillCheck]) -> tuple[Pair, ...]:
    """Competitors as unordered pairs, the strongest first: met on more probes,
    then with one ranked above the other, then sharing more words."""
    found: dict[tuple[str, str], tuple[tuple[Skill, Skill], dict[str, None], dict[str, None]]] = {}
    ahead: set[tuple[str, str]] = set()
    for check in checks:
        for competitor in check.competitors:
            a, b = sorted((check.skill, competitor.skill), key=lambda s: (s.name, s.path))
            _skills, terms, via = found.setdefault((a.key, b.key), ((a, b), {}, {}))
            terms.update(dict.fromkeys(competitor.terms))
            via.update({competitor.via: None})
            if competitor.ahead:
                ahead.add((a.key, b.key))
    ordered = sorted(
        found.items(),
        key=lambda item: (
            -len(item[1][2]),
            item[0] not in ahead,
            -len(item[1][1]),
            item[1][0][0].name,
            item[1][0][1].name,
        ),
    )
    return tuple(
        Pair(skills=skills, terms=tuple(terms)[:MAX_TERMS], via=tuple(via))
        for _key, (skills, terms, via) in ordered
    )


class _Vocabulary:
    """Which words of a text a skill's name, description and `when_to_use` hold,
    compared by `light_stem`, and how rare each is in the catalog."""

    def __init__(self, catalog: Sequence[Skill]) -> None:
        self._stems: dict[str, frozenset[str]] = {}
        self._df: dict[str, int] = {}
        for skill in catalog:
            for stem in self.stems(skill):
                self._df[stem] = self._df.get(stem, 0) + 1

    def stems(self, skill: Skill) -> frozenset[str]:
        stems = self._stems.get(skill.key)
        if stems is None:
            text = folded(f"{skill.name} {skill.description} {skill.when_to_use or ''}")
            stems = frozenset(light_stem(w) for w in WORD.findall(text) if w not in STOP_WORDS)
            self._stems[skill.key] = stems
        return stems

    def _words(self, text: str) -> list[tuple[str, str]]:
        return [(word, light_stem(word)) for word in query_words(folded(text))]

    def shared(self, text: str, *skills: Skill) -> tuple[str, ...]:
        """Words of `text` that every one of `skills` holds, rarest first."""
        sets = [self.stems(skill) for skill in skills]
        words = [(w, s) for w, s in self._words(text) if all(s in stems for stems in sets)]
        words.sort(key=lambda item: self._df.get(item[1], 0))
        return tuple(dict.fromkeys(w for w, _s in words))[:MAX_TERMS]

    def absent(self, text: str, skill: Skill) -> tuple[str, ...]:
        """Words of `text` that `skill` lacks, in the order of the text."""
        stems = self.stems(skill)
        return tuple(dict.fromkeys(w for w, s in self._words(text) if s not in stems))


# -- JSON -----------------------------------------------------------------------------


def _skill_dict(skill: Skill) -> dict[str, Any]:
    return {"name": skill.name, "qualified_name": skill.qualified_name, "path": skill.path}


def _check_dict(check: SkillCheck) -> dict[str, Any]:
    return {
        **_skill_dict(check.skill),
        "requests": [
            {
                "request": r.request.text,
                "source": r.request.source,
                "outcome": r.outcome,
                "rank": r.rank,
                "picked": None
                if r.picked is None
                else {**_skill_dict(r.picked.skill), "score": round(r.picked.score, 4)},
                "terms": list(r.terms),
                "missing": list(r.missing),
            }
            for r in check.requests
        ],
        "competitors": [
            {**_skill_dict(c.skill), "via": c.via, "ahead": c.ahead, "terms": list(c.terms)}
            for c in check.competitors
        ],
        "lint": [finding.to_dict() for finding in check.lint],
        "problems": [problem.to_dict() for problem in check.problems],
    }
