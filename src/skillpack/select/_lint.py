"""Description lint: will this description make an agent pick the skill? (pure)

An agent chooses a skill from its name and description alone (and `when_to_use`
where the agent reads it). These checks flag the descriptions that make that
choice hard: too short to say what the skill does, no word on when to use it,
words that fit any skill, or longer than the specification allows (agents cut
it, and the cut part never reaches the model). Each finding has a stable code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._limits import MAX_DESCRIPTION_CHARS
from .._model import Skill
from ._words import WORD

SHORT_WORDS = 10
"""Fewer words than this say what a skill is, rarely when to use it."""

_WHEN = re.compile(
    r"\b(when|whenever|if)\b"
    r"|\buse(d)? (it |this( skill)? )?(for|to|on|with|in|during|before|after|while)\b"
    r"|\b(trigger|triggers|invoke|activate)\b",
    re.IGNORECASE,
)
"""A sentence that tells when: "Use when ...", "Use this skill for ...", "if the user ..."."""

VAGUE = (
    "various",
    "misc",
    "miscellaneous",
    "stuff",
    "things",
    "etc",
    "everything",
    "anything",
    "general purpose",
    "general-purpose",
    "helper",
    "helpers",
    "utility",
    "utilities",
    "handy",
    "useful",
    "powerful",
    "comprehensive",
    "helps with",
    "help with",
    "and more",
    "all kinds",
    "any task",
    "awesome",
)
"""Words that fit any skill: they take room from the words that tell skills apart."""

_VAGUE = re.compile(
    r"\b(" + "|".join(re.escape(v) for v in sorted(VAGUE, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class LintFinding:
    """One thing in a description that makes a skill harder to pick."""

    code: str
    """Stable: `description-short`, `description-no-when`, `description-vague`,
    `description-too-long`."""
    message: str
    """What is wrong and how to fix it."""
    words: tuple[str, ...] = ()
    """The vague words found (`description-vague` only)."""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.words:
            data["words"] = list(self.words)
        return data


def lint_description(skill: Skill) -> tuple[LintFinding, ...]:
    """The findings for `skill`'s description (and `when_to_use`), in code order."""
    text = skill.description
    findings: list[LintFinding] = []
    words = len(WORD.findall(text))
    if words < SHORT_WORDS:
        findings.append(
            LintFinding(
                code="description-short",
                message=(
                    f"The description has {words} word{'s' if words != 1 else ''}: too few to "
                    "tell an agent what the skill does and for which requests. Say what it "
                    "does, on what, and when to use it."
                ),
            )
        )
    if not skill.when_to_use and not _WHEN.search(text):
        findings.append(
            LintFinding(
                code="description-no-when",
                message=(
                    "The description never says when to use the skill. Add a sentence such "
                    'as "Use when the user asks to ..." naming the requests it is for.'
                ),
            )
        )
    vague = tuple(dict.fromkeys(m.group(0).lower() for m in _VAGUE.finditer(text)))
    if vague:
        findings.append(
            LintFinding(
                code="description-vague",
                message=(
                    f"Vague words ({', '.join(vague)}) fit any skill and take room from the "
                    "words that tell this one apart: name the tasks, files and tools instead."
                ),
                words=vague,
            )
        )
    if len(text) > MAX_DESCRIPTION_CHARS:
        findings.append(
            LintFinding(
                code="description-too-long",
                message=(
                    f"The description is {len(text)} characters, over the limit of "
                    f"{MAX_DESCRIPTION_CHARS}: agents cut it, and the end never reaches the "
                    "model. Move detail into the body and keep what decides the choice."
                ),
            )
        )
    return tuple(findings)
