"""A Skill as a JSON-safe dict and back: `skill_to_dict` / `skill_from_dict`.

Pure. Used by the CLI's JSON output and by the index for values marshal cannot
hold; `skill_from_dict(skill_to_dict(s)) == s` for every parsed skill.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._model import CodexMetadata, CodexPermissions, Skill
from ._json_safe import Budget, json_safe


def _to_json(value: Any) -> Any:
    if value is None:
        return None
    return json_safe(value, Budget(1 << 62), 0)


def _codex_to_dict(codex: CodexMetadata) -> dict[str, Any]:
    return {
        "interface": _to_json(codex.interface),
        "tool_dependencies": [_to_json(entry) for entry in codex.tool_dependencies],
        "allow_implicit_invocation": codex.allow_implicit_invocation,
        "permissions": None if codex.permissions is None else codex.permissions.to_dict(),
    }


def skill_to_dict(skill: Skill) -> dict[str, Any]:
    """A JSON-safe dict of every field of `skill`; `skill_from_dict` inverts it.

    Mappings are copied with dates, bytes and odd keys turned into text, so a Skill
    built by hand with such values still serializes (parsed skills already are safe).
    """
    allowed, disallowed = skill.allowed_tools, skill.disallowed_tools
    return {
        "name": skill.name,
        "description": skill.description,
        "path": skill.path,
        "dir": skill.dir,
        "real_path": skill.real_path,
        "scope": skill.scope,
        "rank": skill.rank,
        "root": skill.root,
        "plugin": skill.plugin,
        "license": skill.license,
        "compatibility": skill.compatibility,
        "metadata": _to_json(skill.metadata),
        "allowed_tools": None if allowed is None else list(allowed),
        "disallowed_tools": None if disallowed is None else list(disallowed),
        "disable_model_invocation": skill.disable_model_invocation,
        "user_invocable": skill.user_invocable,
        "argument_hint": skill.argument_hint,
        "arguments": list(skill.arguments),
        "context": skill.context,
        "agent": skill.agent,
        "model": skill.model,
        "when_to_use": skill.when_to_use,
        "hooks": _to_json(skill.hooks),
        "paths": list(skill.paths),
        "version": skill.version,
        "dependencies": list(skill.dependencies),
        "extra": _to_json(skill.extra),
        "frontmatter": _to_json(skill.frontmatter),
        "codex": None if skill.codex is None else _codex_to_dict(skill.codex),
        "body_lines": skill.body_lines,
        "body_chars": skill.body_chars,
        "mtime_ns": skill.mtime_ns,
        "size": skill.size,
        "shadowed_by": skill.shadowed_by,
    }


def skill_from_dict(data: Mapping[str, Any]) -> Skill:
    """The Skill that `skill_to_dict` (possibly through JSON) described.

    Raises:
        TypeError: `data` has a key that is not a Skill field.
    """
    kwargs = dict(data)
    for attribute in ("allowed_tools", "disallowed_tools", "arguments", "paths", "dependencies"):
        value = kwargs.get(attribute)
        if value is not None:
            kwargs[attribute] = tuple(value)
    codex = kwargs.get("codex")
    if codex is not None:
        permissions = codex.get("permissions")
        kwargs["codex"] = CodexMetadata(
            interface=codex.get("interface") or {},
            tool_dependencies=tuple(codex.get("tool_dependencies") or ()),
            allow_implicit_invocation=codex.get("allow_implicit_invocation"),
            permissions=None if permissions is None else CodexPermissions.from_dict(permissions),
        )
    return Skill(**kwargs)
