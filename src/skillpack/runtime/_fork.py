"""Forked skills (`context: fork`): the host's subagent runner, the invocation chain
and what a run returns.

A forked skill never runs inline: every way of starting one (`/name args`, a `$name`
mention, `use_skill`) hands its substituted body to the host's `SubagentRunner`, and
without a runner the caller reports that instead (a turn diagnostic, a tool error).
`run_fork` (behind `Session.fork` and a turn's forked activations) is the one place
that does it; `skill_load` still returns the instructions of any skill, since loading
is reading, not running. While a run is under way its skill is on the session's
`InvocationChain`: starting it again from inside that run is a cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .._errors import SkillpackError, UsageError
from .._model import Skill
from ._permissions import PermissionGate

if TYPE_CHECKING:
    from ..select._resolve import DiagnosticKind


class SubagentRunner(Protocol):
    """The host's way to run a skill in a forked context (`context: fork`)."""

    def run(self, *, skill: Skill, prompt: str, agent: str | None, model: str | None) -> Any:
        """Start (or run) a subagent on `prompt`; return a task id or the final result.

        Whatever is returned goes back as the fork's `result` (to the model as
        `data.result` of `use_skill`, to the host in `Turn.forks`): a string or a
        JSON-able value.
        """
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class ForkRun:
    """A forked skill a turn handed to the host's subagent runner."""

    skill: Skill
    args: str
    """The arguments it ran with."""
    result: Any
    """What the runner returned: a task id, or the subagent's result."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.skill.name,
            "qualified_name": self.skill.qualified_name,
            "path": self.skill.path,
            "args": self.args,
            "context": "fork",
            "result": self.result,
        }


def no_runner_message(skill: Skill) -> str:
    """Why a forked skill did not run: the host passed no subagent runner."""
    return (
        f"Skill '{skill.name}' runs in a subagent (context: fork), but no subagent runner "
        "is available here, so it was not run. Its instructions were not loaded inline."
    )


class CycleError(UsageError):
    """A skill started again inside its own forked run (`UsageError` to callers)."""


class InvocationChain:
    """The forked skills whose runs are under way, outermost first.

    Guarded by the session's lock (re-entrant), which `Session.end_turn` holds to
    clear this chain and the leading skills at once.
    """

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._skills: list[Skill] = []

    def check(self, skill: Skill) -> None:
        """Raise `CycleError` when `skill` is on the chain."""
        with self._lock:
            chain = self._skills
            if any(s.key == skill.key for s in chain):
                names = " -> ".join([*(s.name for s in chain), skill.name])
                raise CycleError(
                    f"Skill '{skill.name}' is already running in this turn ({names}); "
                    "a skill cannot invoke itself, directly or through other skills. "
                    "Continue with the instructions already loaded."
                )

    def push(self, skill: Skill) -> None:
        """Put `skill` on the chain; `CycleError` when it is on it already."""
        with self._lock:
            self.check(skill)
            self._skills.append(skill)

    def pop(self, skill: Skill) -> None:
        """Take the innermost run of `skill` off the chain."""
        with self._lock:
            chain = self._skills
            for i in range(len(chain) - 1, -1, -1):
                if chain[i].key == skill.key:
                    del chain[i]
                    break

    def clear(self) -> None:
        with self._lock:
            self._skills.clear()


def run_fork(
    skill: Skill,
    args: str,
    runner: SubagentRunner,
    *,
    gate: PermissionGate,
    chain: InvocationChain,
    render_body: Callable[[Skill, str], str],
    failure: Callable[[DiagnosticKind, str], Exception] | None = None,
) -> Any:
    """The runner's result for `skill`; a runner error is re-raised as is, or as
    `failure("fork-failed", message)` when given (and a cycle as `"cycle"`).

    `gate` is asked with action `fork`; the skill is on `chain` while its body is
    rendered (`render_body(skill, args)`: `Session.render_body`) and the runner works.
    """
    gate.require(skill, "fork")
    try:
        chain.push(skill)
    except CycleError as exc:
        if failure is None:
            raise
        raise failure("cycle", str(exc)) from exc
    try:
        prompt = render_body(skill, args).strip()
        try:
            return runner.run(skill=skill, prompt=prompt, agent=skill.agent, model=skill.model)
        except SkillpackError:
            raise
        except Exception as exc:
            if failure is None:
                raise
            raise failure(
                "fork-failed",
                f"The subagent running skill '{skill.name}' failed: {type(exc).__name__}: {exc}",
            ) from exc
    finally:
        chain.pop(skill)
