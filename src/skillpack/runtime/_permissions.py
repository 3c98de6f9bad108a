"""Permission rules per skill (pure) and the session's ask gate (thread-safe).

Rules are globs matched with `fnmatch.fnmatchcase` against a skill's name, its
qualified name (`<plugin>:<name>` or `<scope>:<name>`) and `<scope>:<name>`; a glob
holding a `/` is a path glob, matched against the skill's folder and SKILL.md paths.
Precedence is `deny` > `allow` > `ask`, and a skill no rule matches is allowed
(DESIGN §7). A denied skill is invisible: absent from the catalog, search and every
tool. `ask` goes to a host callback through `PermissionGate`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal

from .._errors import SkillPermissionError
from .._model import Skill

Decision = Literal["allow", "deny", "ask"]
"""What the rules say about a skill."""

AskAnswer = Literal["allow", "deny", "always", "never"]
"""A host's answer: `allow`/`deny` apply once, `always`/`never` for the session."""

AskCallback = Callable[[Skill, str], AskAnswer]
"""Asks the host about `(skill, action)`; the action is e.g. `"load"`."""

Remember = Callable[[str, Decision], None]
"""Persists an `always`/`never` answer as a rule (glob, decision), e.g. in config."""

DECISIONS: tuple[Decision, ...] = ("deny", "allow", "ask")
"""Every decision, in precedence order."""

_ANSWERS: frozenset[str] = frozenset({"allow", "deny", "always", "never"})


def _subjects(skill: Skill) -> tuple[str, ...]:
    # A plugin skill's qualified name is `<plugin>:<name>`; `<scope>:<name>` still
    # names it too, so a rule such as `repo:*` covers plugin skills in the repo.
    return (skill.name, skill.qualified_name, f"{skill.scope}:{skill.name}")


def _paths(skill: Skill) -> tuple[str, ...]:
    paths = [skill.dir, skill.path]
    if skill.real_path:
        paths += [skill.real_path, os.path.dirname(skill.real_path)]
    return tuple(os.path.normpath(p) for p in paths if p)


def glob_matches(glob: str, skill: Skill) -> bool:
    """Whether one rule glob names `skill` (by name, qualified name or path)."""
    if "/" in glob or os.sep in glob:
        pattern = os.path.normpath(glob)
        return any(fnmatchcase(path, pattern) for path in _paths(skill))
    return any(fnmatchcase(subject, glob) for subject in _subjects(skill))


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
                if glob_matches(glob, skill):
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


class PermissionGate:
    """The session's permission state: rules plus answers remembered this session.

    Thread-safe. Questions go to the host one at a time (a human answers them), and
    a thread that waits while another asks about the same skill reuses that answer
    when it was `always`/`never`, so the host is asked once per skill.
    """

    def __init__(
        self,
        rules: PermissionRules | None = None,
        *,
        ask: AskCallback | None = None,
        remember: Remember | None = None,
    ) -> None:
        """Args:
        rules: the merged permission rules (from config and the host).
        ask: called for skills whose decision is `ask`; None refuses them.
        remember: called with `(qualified_name, "allow"|"deny")` after an
            `always`/`never` answer, to persist it (e.g. config `add_permission`).
        """
        self._rules = rules if rules is not None else PermissionRules()
        self._ask = ask
        self._remember = remember
        self._state = threading.Lock()
        # Re-entrant: a callback that itself checks another skill must not deadlock.
        self._asking = threading.RLock()
        self._memory: dict[str, Literal["always", "never"]] = {}
        self._refusals: dict[str, str] = {}

    @property
    def rules(self) -> PermissionRules:
        """The rules this gate applies."""
        return self._rules

    def remembered(self, skill: Skill) -> Literal["always", "never"] | None:
        """The session-long answer given for `skill`, if any."""
        with self._state:
            return self._memory.get(skill.key)

    def decide(self, skill: Skill) -> Decision:
        """The rules' decision, with `always`/`never` answers of this session applied."""
        decision = self._rules.decide(skill)
        if decision != "ask":
            return decision
        answer = self.remembered(skill)
        if answer is None:
            return "ask"
        return "allow" if answer == "always" else "deny"

    def visible(self, skill: Skill) -> bool:
        """Whether the skill may appear in the catalog, search and tools."""
        return self.decide(skill) != "deny"

    def check(self, skill: Skill, action: str = "load") -> bool:
        """Whether `action` on `skill` may go ahead, asking the host when rules say so.

        `explain(skill)` says why after a refusal.
        """
        decision = self.decide(skill)
        if decision != "ask":
            return decision == "allow"
        if self._ask is None:
            self._refuse(skill, self._no_callback_reason(skill))
            return False
        with self._asking:
            # Another thread may have had its answer while this one waited.
            decision = self.decide(skill)
            if decision != "ask":
                return decision == "allow"
            answer: str = self._ask(skill, action)
            if answer not in _ANSWERS:
                self._refuse(
                    skill,
                    f"Skill '{skill.name}' was refused: the host's ask callback returned "
                    f"{answer!r}; expected one of allow, deny, always, never.",
                )
                return False
            allowed = answer in ("allow", "always")
            if answer in ("always", "never"):
                with self._state:
                    self._memory[skill.key] = "always" if allowed else "never"
            if allowed:
                with self._state:
                    self._refusals.pop(skill.key, None)
            else:
                self._refuse(
                    skill,
                    f"Skill '{skill.name}' was refused by the host "
                    f"(answered '{answer}' to '{action}').",
                )
            if answer in ("always", "never") and self._remember is not None:
                # Recorded in memory first: a failing persist does not undo the answer,
                # and its exception reaches the caller instead of passing silently.
                self._remember(skill.qualified_name, "allow" if allowed else "deny")
            return allowed

    def require(self, skill: Skill, action: str = "load") -> None:
        """`check`, raising `SkillPermissionError` with the reason on refusal."""
        if not self.check(skill, action):
            raise SkillPermissionError(self.explain(skill))

    def explain(self, skill: Skill) -> str:
        """Why `skill` is allowed, refused or waiting for approval, in one sentence."""
        if self._rules.decide(skill) == "ask":
            answer = self.remembered(skill)
            if answer == "never":
                return (
                    f"Skill '{skill.name}' is refused for this session (the host answered 'never')."
                )
            if answer == "always":
                return f"Skill '{skill.name}' is allowed for this session (answered 'always')."
            with self._state:
                refusal = self._refusals.get(skill.key)
            if refusal is not None:
                return refusal
            if self._ask is None:
                return self._no_callback_reason(skill)
        return self._rules.explain(skill)

    def _no_callback_reason(self, skill: Skill) -> str:
        _, glob = self._rules.match(skill)
        where = self._rules.where("ask", glob or "")
        return (
            f"Skill '{skill.name}' needs approval (permission rule '{glob}' in {where} "
            f"says ask) but this host cannot ask. Add '{skill.name}' to `allow` under "
            f"`[permissions]` in the config, or give the session an ask callback."
        )

    def _refuse(self, skill: Skill, reason: str) -> None:
        with self._state:
            self._refusals[skill.key] = reason
