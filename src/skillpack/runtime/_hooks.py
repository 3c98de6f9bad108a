"""Skill-scoped hooks: while a skill leads, which of its hooks apply, and running them.

The host names an event (`PreToolUse`, `PostToolUse`, `Stop`, ...) and, for tool
events, the tool; `Session.hooks_for` answers with the hooks of every leading skill
whose matcher fits, in leading order, and honours `once: true` per session (a
returned `once` hook is spent). `Session.run_hooks` also runs the `command` hooks
under the same `ShellPolicy` as shell preprocessing (permission action `hook`), with
Claude Code's JSON on stdin; other hook types are returned for the host, never run.
A hook that fails, times out or is refused is a result, never an exception: it does
not break the turn. Exit code 2 marks a result `blocking` (Claude Code's "block
this tool call"); what to do about it is the host's decision.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._model import Skill
from ..parse._hooks import HookSpec, parse_hooks
from ._permissions import PermissionGate
from ._shell import ShellPolicy, ShellRun, run_declared


@dataclass(frozen=True, kw_only=True, slots=True)
class Hook:
    """One hook of a leading skill that applies to an event."""

    skill: Skill
    spec: HookSpec

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.skill.qualified_name, "path": self.skill.path, **self.spec.to_dict()}


@dataclass(frozen=True, kw_only=True, slots=True)
class HookResult:
    """What running one hook did."""

    hook: Hook
    run: ShellRun

    @property
    def blocking(self) -> bool:
        """Exit code 2: the hook asks the host to block (e.g. the tool call)."""
        return self.run.exit_code == 2

    def to_dict(self) -> dict[str, Any]:
        return {**self.hook.to_dict(), "blocking": self.blocking, "run": self.run.to_dict()}


class HookState:
    """Which `once` hooks this session has spent. Thread-safe."""

    def __init__(self) -> None:
        self._spent: set[tuple[str, str, tuple[int, int]]] = set()
        self._lock = threading.Lock()

    def applicable(
        self, skills: Sequence[Skill], event: str, tool_name: str | None, *, consume: bool
    ) -> tuple[Hook, ...]:
        """Hooks of `skills` for `event`/`tool_name`, `once` hooks not yet spent."""
        found = []
        with self._lock:
            for skill in skills:
                specs, _ = parse_hooks(skill.hooks)
                for spec in specs:
                    if spec.event != event or not spec.matches(tool_name):
                        continue
                    key = (skill.key, spec.event, spec.position)
                    if spec.once:
                        if key in self._spent:
                            continue
                        if consume:
                            self._spent.add(key)
                    found.append(Hook(skill=skill, spec=spec))
        return tuple(found)


def run_hooks(
    hooks: Sequence[Hook],
    *,
    policy: ShellPolicy | None,
    gate: PermissionGate,
    payload: Mapping[str, Any],
) -> tuple[HookResult, ...]:
    """Run the `command` hooks among `hooks`; never raises for a hook's failure."""
    results = []
    for hook in hooks:
        spec = hook.spec
        if spec.type != "command" or spec.command is None:
            continue
        if policy is None:
            run = ShellRun(
                command=spec.command,
                kind="hook",
                status="refused",
                output="",
                reason="shell commands are off: the host set no shell policy",
            )
        else:
            data = {**payload, "hook_event_name": spec.event}
            try:
                run = run_declared(
                    hook.skill,
                    spec.command,
                    kind="hook",
                    policy=policy,
                    gate=gate,
                    stdin=json.dumps(data, default=str).encode("utf-8"),
                    timeout=spec.timeout,
                )
            except Exception as error:  # noqa: BLE001 - a hook never breaks the turn
                reason = f"{type(error).__name__}: {error}"
                run = ShellRun(
                    command=spec.command, kind="hook", status="error", output="", reason=reason
                )
        results.append(HookResult(hook=hook, run=run))
    return tuple(results)
