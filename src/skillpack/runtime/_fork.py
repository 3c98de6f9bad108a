"""Forked skills (`context: fork`): the host's subagent runner and what a run returns.

A forked skill never runs inline: every way of starting one (`/name args`, a `$name`
mention, `use_skill`) hands its substituted body to the host's `SubagentRunner`, and
without a runner the caller reports that instead (a turn diagnostic, a tool error).
`Session.fork` is the one place that does it; `skill_load` still returns the
instructions of any skill, since loading is reading, not running.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .._model import Skill


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
