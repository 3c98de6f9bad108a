"""`allowed-tools` / `disallowed-tools` → the tool set a host offers while skills lead.

Pure: tools in, tools out. Enforcement stays the host's choice (design rules: safety).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fnmatch import fnmatchcase
from typing import Any, TypeVar

from .._model import Skill

ToolT = TypeVar("ToolT")

SKILL_TOOLS = frozenset({"skill_search", "skill_load", "use_skill", "skill_read_file"})
"""skillpack's own tools stay available whatever a skill declares: a skill that
narrows tools must still be able to read its own bundled files."""


def tool_pattern(entry: str) -> str:
    """The tool-name pattern of an entry: `Bash(git add:*)` → `Bash`, `mcp__x__*` stays."""
    head, _, _ = entry.partition("(")
    return head.strip()


def _matches(name: str, entries: Iterable[str]) -> bool:
    return any(fnmatchcase(name, tool_pattern(e)) for e in entries if tool_pattern(e))


def default_tool_name(tool: Any) -> str:
    """Name of a tool given as a string, a mapping with `name` (or OpenAI's
    `{"function": {"name"}}`), or an object with a `name` attribute."""
    if isinstance(tool, str):
        return tool
    if isinstance(tool, dict):
        if "name" in tool:
            return str(tool["name"])
        function = tool.get("function")
        if isinstance(function, dict) and "name" in function:
            return str(function["name"])
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError(f"Cannot tell the name of tool {tool!r}; pass tool_name=... to active_tools().")


def filter_tools(
    all_tools: Sequence[ToolT],
    leading: Sequence[Skill],
    *,
    tool_name: Callable[[ToolT], str] | None = None,
) -> list[ToolT]:
    """Keep the tools every leading skill allows and none disallows."""
    name_of: Callable[[ToolT], str] = tool_name or default_tool_name
    kept = list(all_tools)
    for skill in leading:
        if skill.allowed_tools is not None:
            allowed = skill.allowed_tools
            kept = [t for t in kept if name_of(t) in SKILL_TOOLS or _matches(name_of(t), allowed)]
        if skill.disallowed_tools:
            denied = skill.disallowed_tools
            kept = [
                t for t in kept if name_of(t) in SKILL_TOOLS or not _matches(name_of(t), denied)
            ]
    return kept
