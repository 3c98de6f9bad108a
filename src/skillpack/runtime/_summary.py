"""A skill as every surface lists it: the stable entry of `list --json`, `skills.list`
and the `skills/changed` notification."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._model import Skill
from ..config._schema import Config


def skill_summary(
    skill: Skill,
    *,
    enabled: bool,
    missing: Sequence[Mapping[str, str]] = (),
    permission: str = "allow",
) -> dict[str, Any]:
    """The stable `list --json` entry for one skill.

    `missing` lists the declared dependencies (`{"type", "name"}`) that are missing;
    `permission` is what the permission rules decide (`allow`, `ask` or `deny`: a
    denied skill is listed for people, absent for the model).
    """
    return {
        "name": skill.name,
        "description": skill.description,
        "path": skill.path,
        "dir": skill.dir,
        "scope": skill.scope,
        "qualified_name": skill.qualified_name,
        "enabled": enabled,
        "model_invocable": skill.model_invocable,
        "user_invocable": skill.user_invocable,
        "shadowed_by": skill.shadowed_by,
        "plugin": skill.plugin,
        "missing_dependencies": [dict(entry) for entry in missing],
        "permission": permission,
    }


def summarizer(
    config: Config,
    is_enabled: Callable[[Skill], bool],
    environment: Mapping[str, str] | None = None,
) -> Callable[[Skill], dict[str, Any]]:
    """`skill_summary` of each skill under `config`: its enable state, the dependencies
    the environment (default `os.environ`) and the configured MCP servers lack, and what
    the permission rules decide."""
    from ._deps import missing_dependencies

    env = os.environ if environment is None else environment
    servers = [server["name"] for server in config.mcp_servers]
    rules = config.permissions
    decide = rules.decide if rules.has_rules else None

    def summary(skill: Skill) -> dict[str, Any]:
        return skill_summary(
            skill,
            enabled=is_enabled(skill),
            missing=missing_dependencies(skill, env, servers),
            permission=decide(skill) if decide is not None else "allow",
        )

    return summary
