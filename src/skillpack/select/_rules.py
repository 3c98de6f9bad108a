"""Permission rules per skill: `deny` > `allow` > `ask`, globs over names and paths.

Rules are globs matched (`select._refs.ref_matches`) against a skill's name, its
qualified id (`<plugin>:<name>` or `<scope>:<name>`) and `<scope>:<name>` (so
`repo:*` covers the repo's plugin skills too); a glob holding a `/` is a path glob,
matched against the skill's folder and SKILL.md paths.
A skill no rule matches is allowed (design rules: safety). A denied skill is invisible: absent
from the catalog, search and every tool. The session's gate that asks the host for
`ask` rules is `runtime._permissions.PermissionGate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .._model import Skill
from ._refs import ref_matches

Decision = Literal["allow", "deny", "ask"]
"""What the rules say about a skill."""


DECISIONS: tuple[Decision, ...] = ("deny", "allow", "ask")
"""Every decision, in precedence order."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PermissionRules:
    """Glob lists per decision; `deny` beats `allow` beats `ask`; no match allows."""

    allow: tuple[str, ...] = ()
    """Globs whose skills are allowed without asking (unless denied)."""
    deny: tuple[str, ...] = ()
    """Globs whose skills are hidden and refused everywhere."""
    ask: tuple[str, ...] = ()
    """Globs whose skills need the host's approval before use."""
    origins: Mapping[tuple[Decision, str], str] = field(
        default_factory=dict, compare=False, hash=False
    )
    """Where each `(decision, glob)` came from (a config file path), for messages."""

    @property
    def has_rules(self) -> bool:
        """Whether any glob is listed (with none, every skill is allowed)."""
        return bool(self.allow or self.deny or self.ask)

    def globs(self, decision: Decision) -> tuple[str, ...]:
        """The globs listed under one decision."""
        if decision == "allow":
            return self.allow
        if decision == "deny":
            return self.deny
        return self.ask

    def match(self, skill: Skill) -> tuple[Decision, str | None]:
        """The decision for `skill` and the glob that made it (None: no rule matched)."""
        for decision in DECISIONS:
            for glob in self.globs(decision):
                if ref_matches(glob, skill, glob=True):
                    return decision, glob
        return "allow", None

    def decide(self, skill: Skill) -> Decision:
        """`deny` if any deny glob matches, else `allow` if any allow glob does,
        else `ask` if any ask glob does, else `allow`."""
        return self.match(skill)[0]

    def visible(self, skill: Skill) -> bool:
        """Whether the skill may appear at all (catalog, search, tools)."""
        return self.decide(skill) != "deny"

    def where(self, decision: Decision, glob: str) -> str:
        """Human origin of a rule: its config file, or "the session's rules"."""
        return self.origins.get((decision, glob), "the session's rules")

    def explain(self, skill: Skill) -> str:
        """One sentence saying what the rules decide for `skill` and why."""
        decision, glob = self.match(skill)
        if glob is None:
            return f"Skill '{skill.name}' is allowed: no permission rule matches it."
        where = self.where(decision, glob)
        if decision == "deny":
            return (
                f"Skill '{skill.name}' is denied by permission rule '{glob}' in {where}. "
                f"Remove the rule from `deny` to use it."
            )
        if decision == "ask":
            return (
                f"Skill '{skill.name}' needs approval: permission rule '{glob}' in "
                f"{where} says ask."
            )
        return f"Skill '{skill.name}' is allowed by permission rule '{glob}' in {where}."

    def merged(self, other: PermissionRules) -> PermissionRules:
        """These rules followed by `other`'s (lists concatenated, duplicates dropped)."""
        origins = {**other.origins, **self.origins}
        return PermissionRules(
            allow=_concat(self.allow, other.allow),
            deny=_concat(self.deny, other.deny),
            ask=_concat(self.ask, other.ask),
            origins=origins,
        )

    def with_rule(
        self, glob: str, decision: Decision, *, origin: str | None = None
    ) -> PermissionRules:
        """A copy where `glob` is listed under `decision` only (moved from the others)."""
        lists = {d: tuple(g for g in self.globs(d) if g != glob) for d in DECISIONS}
        lists[decision] = (*lists[decision], glob)
        origins = {k: v for k, v in self.origins.items() if k[1] != glob}
        if origin is not None:
            origins[(decision, glob)] = origin
        return PermissionRules(
            allow=lists["allow"], deny=lists["deny"], ask=lists["ask"], origins=origins
        )


def _concat(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*first, *second)))
