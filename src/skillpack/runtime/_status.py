"""A session's catalog status (`Session.inspect`): counts, what is loaded, what leads.

The base of `context.inspect` and `skillpack context`, and what a host shows for
"which skills does this conversation have": every count is of the catalog the call
started with, and the loaded versions and leading skills are read at one moment.
"""

from __future__ import annotations

from typing import Any

from ._parts import SessionParts


def session_status(
    parts: SessionParts, *, session_id: str, include_skills: bool = False
) -> dict[str, Any]:
    """`Session.inspect`: see there."""
    catalog = parts.live.catalog
    visible = parts.model_skills(catalog)
    injected, leading = parts.injections.snapshot()
    loaded = []
    for key, version in sorted(injected.items()):
        skill = catalog.at_path(key)
        loaded.append(
            {
                "name": skill.name if skill else None,
                "path": skill.path if skill else key,
                "mtime_ns": version[0],
                "size": version[1],
            }
        )
    data: dict[str, Any] = {
        "session_id": session_id,
        "counts": {
            "skills": len(catalog.skills),
            "in_model_catalog": len(visible),
            "disabled": sum(1 for s in catalog.skills if not parts.is_enabled(s)),
            "denied": sum(1 for s in catalog.skills if not parts.is_visible(s)),
            "problems": len(catalog.problems),
        },
        "loaded": loaded,
        "leading": [s.qualified_name for s in leading],
        "roots": [r.to_dict() for r in catalog.roots],
    }
    if include_skills:
        visible_keys = {s.key for s in visible}
        data["skills"] = [
            {
                "name": s.name,
                "qualified_name": s.qualified_name,
                "path": s.path,
                "scope": s.scope,
                "enabled": parts.is_enabled(s),
                "visible": parts.is_visible(s),
                "in_model_catalog": s.key in visible_keys,
            }
            for s in catalog.skills
        ]
    return data
