"""A skill's `hooks` frontmatter (Claude Code's format), typed and checked, pure.

    hooks:
      PreToolUse:                   # an event name
        - matcher: "Bash|Edit"      # which tools (a regex over the whole tool name);
          hooks:                    #   absent, "" or "*": every tool
            - type: command
              command: ./scripts/check.sh
              timeout: 30           # seconds
              once: true            # at most once per session
      Stop:
        - hooks:
            - {type: command, command: echo done}

Events are the host's vocabulary (`PreToolUse`, `PostToolUse`, `Stop`,
`UserPromptSubmit`, ...): any name is kept and the host asks by name. Hook types
other than `command` (`prompt`, `agent`, `http`) are kept for the host; skillpack
only ever runs `command` hooks. A part of the mapping with the wrong shape is left
out and described in `problems`; nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_ALL = frozenset({"", "*"})


@dataclass(frozen=True, kw_only=True, slots=True)
class HookSpec:
    """One hook a skill declares."""

    event: str
    matcher: str | None = None
    """Tool-name pattern; None matches every tool (and events without tools)."""
    type: str = "command"
    command: str | None = None
    """The command of a `command` hook."""
    timeout: float | None = None
    """Seconds, as declared; the host's shell policy caps it."""
    once: bool = False
    """Run at most once per session."""
    position: tuple[int, int] = (0, 0)
    """(matcher group, hook) index under the event: the hook's identity in its skill."""
    raw: Mapping[str, Any] = field(default_factory=dict)
    """The hook entry as written (a `prompt` hook's text, ...)."""

    def matches(self, tool_name: str | None) -> bool:
        """Whether this hook applies to `tool_name` (None: an event without a tool)."""
        if self.matcher is None or self.matcher in _ALL:
            return True
        if tool_name is None:
            return False
        try:
            return re.fullmatch(self.matcher, tool_name) is not None
        except re.error:
            return self.matcher == tool_name

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "matcher": self.matcher,
            "type": self.type,
            "command": self.command,
            "timeout": self.timeout,
            "once": self.once,
        }


def parse_hooks(hooks: Mapping[str, Any] | None) -> tuple[tuple[HookSpec, ...], tuple[str, ...]]:
    """The hooks of a `hooks` mapping, in declared order, and what was left out."""
    if not hooks:
        return (), ()
    specs: list[HookSpec] = []
    problems: list[str] = []
    for event, groups in hooks.items():
        if not isinstance(event, str) or not event:
            problems.append(f"hooks: the event {event!r} is not a name; it is ignored.")
            continue
        if not isinstance(groups, list):
            problems.append(f"hooks.{event} must be a list of matcher groups; it is ignored.")
            continue
        for g, group in enumerate(groups):
            specs.extend(_group(event, g, group, problems))
    return tuple(specs), tuple(problems)


def _group(event: str, g: int, group: Any, problems: list[str]) -> list[HookSpec]:
    where = f"hooks.{event}[{g}]"
    if not isinstance(group, dict):
        problems.append(f"{where} must be a mapping with `hooks:`; it is ignored.")
        return []
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        problems.append(f"{where}.matcher must be text; the group is ignored.")
        return []
    if matcher:
        try:
            re.compile(matcher)
        except re.error as error:
            problems.append(f"{where}.matcher is not a valid regex ({error}); matched as text.")
    entries = group.get("hooks")
    if not isinstance(entries, list):
        problems.append(f"{where}.hooks must be a list of hooks; the group is ignored.")
        return []
    specs = []
    for h, entry in enumerate(entries):
        spec = _hook(event, matcher, (g, h), entry, f"{where}.hooks[{h}]", problems)
        if spec is not None:
            specs.append(spec)
    return specs


def _hook(
    event: str,
    matcher: str | None,
    position: tuple[int, int],
    entry: Any,
    where: str,
    problems: list[str],
) -> HookSpec | None:
    if not isinstance(entry, dict):
        problems.append(f"{where} must be a mapping such as {{type: command, command: ...}}.")
        return None
    kind = entry.get("type", "command")
    if not isinstance(kind, str) or not kind:
        problems.append(f"{where}.type must be text such as `command`; the hook is ignored.")
        return None
    command = entry.get("command")
    if kind == "command" and (not isinstance(command, str) or not command.strip()):
        problems.append(f"{where} is a command hook without a `command`; it is ignored.")
        return None
    timeout = entry.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        problems.append(f"{where}.timeout must be a positive number of seconds; ignored.")
        timeout = None
    once = entry.get("once", False)
    if not isinstance(once, bool):
        problems.append(f"{where}.once must be true or false; read as false.")
        once = False
    return HookSpec(
        event=event,
        matcher=matcher or None,
        type=kind,
        command=command if isinstance(command, str) else None,
        timeout=None if timeout is None else float(timeout),
        once=once,
        position=position,
        raw=dict(entry),
    )
