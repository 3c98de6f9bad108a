"""The session's permission gate: the rules' decision, the host's answers, thread-safe.

`PermissionRules` (pure, `select._rules`) say `allow`, `deny` or `ask`; the gate asks
the host's callback for `ask`, remembers `always`/`never` answers for the session and
can persist them as rules.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

from .._errors import SkillPermissionError
from .._model import Skill
from ..select._grants import SkillGrant
from ..select._rules import Decision, PermissionRules

AskAnswer = Literal["allow", "deny", "always", "never"]
"""A host's answer: `allow`/`deny` apply once, `always`/`never` for the session."""

AskCallback = Callable[[Skill, str], AskAnswer]
"""Asks the host about `(skill, action)`; the action is e.g. `"load"`."""

Remember = Callable[[str, Decision], None]
"""Persists an `always`/`never` answer as a rule (glob, decision), e.g. in config."""

_ANSWERS: frozenset[str] = frozenset({"allow", "deny", "always", "never"})


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
        grant: SkillGrant | None = None,
    ) -> None:
        """Args:
        rules: the merged permission rules (from config and the host).
        ask: called for skills whose decision is `ask`; None refuses them.
        remember: called with `(qualified_name, "allow"|"deny")` after an
            `always`/`never` answer, to persist it (e.g. config `add_permission`).
        grant: the skills the caller's access token opens (`select._grants`); a
            skill outside it is denied like one a rule denies (the session's
            catalog leaves it out too, so it is never even listed).
        """
        self._grant = grant
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

    def use_rules(self, rules: PermissionRules) -> None:
        """Apply new rules (the config changed); answers remembered this session stay."""
        with self._state:
            self._rules = rules
            self._refusals.clear()

    @property
    def can_ask(self) -> bool:
        """Whether the host gave a callback to ask with."""
        return self._ask is not None

    def remembered(self, skill: Skill) -> Literal["always", "never"] | None:
        """The session-long answer given for `skill`, if any."""
        with self._state:
            return self._memory.get(skill.key)

    def decide(self, skill: Skill, *, unmatched: Decision = "allow") -> Decision:
        """The rules' decision, with `always`/`never` answers of this session applied.

        `unmatched` is the decision when no rule names the skill: `allow` for using
        skills (design rules: safety), `ask` for actions that need consent by default (creating
        a skill).
        """
        if self._grant is not None and not self._grant.allows(skill):
            return "deny"
        decision, glob = self._rules.match(skill)
        if glob is None:
            decision = unmatched
        if decision != "ask":
            return decision
        answer = self.remembered(skill)
        if answer is None:
            return "ask"
        return "allow" if answer == "always" else "deny"

    def visible(self, skill: Skill) -> bool:
        """Whether the skill may appear in the catalog, search and tools."""
        return self.decide(skill) != "deny"

    def check(self, skill: Skill, action: str = "load", *, unmatched: Decision = "allow") -> bool:
        """Whether `action` on `skill` may go ahead, asking the host when rules say so.

        `unmatched` is the decision when no rule names the skill (see `decide`).
        `explain(skill)` says why after a refusal.
        """
        decision = self.decide(skill, unmatched=unmatched)
        if decision != "ask":
            return decision == "allow"
        if self._ask is None:
            self._refuse(skill, self._no_callback_reason(skill))
            return False
        with self._asking:
            # Another thread may have had its answer while this one waited.
            decision = self.decide(skill, unmatched=unmatched)
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


def persist_permission(glob: str, decision: str) -> None:
    """The `Remember` of `Session(remember_permissions=True)`: a rule in the user config."""
    from ..config._files import add_permission

    if decision in ("allow", "deny", "ask"):
        add_permission(glob, decision)  # type: ignore[arg-type]
