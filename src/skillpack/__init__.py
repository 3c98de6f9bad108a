"""skillpack: a runtime for Agent Skills (folders holding a SKILL.md).

Importing this package is cheap: implementation modules load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import (
    AmbiguousSkillError,
    SkillDisabledError,
    SkillError,
    SkillIOError,
    SkillNotFoundError,
    SkillParseError,
    SkillPermissionError,
    SkillpackError,
    UsageError,
)
from ._model import Catalog, CodexMetadata, Problem, Root, Skill

if TYPE_CHECKING:
    from ._discover import discover, read_body
    from ._frontmatter import parse_skill

__version__ = "0.1.0"

# name -> module holding it; loaded on first attribute access (PEP 562).
_LAZY = {
    "discover": "._discover",
    "read_body": "._discover",
    "parse_skill": "._frontmatter",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'skillpack' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "AmbiguousSkillError",
    "Catalog",
    "CodexMetadata",
    "Problem",
    "Root",
    "Skill",
    "SkillDisabledError",
    "SkillError",
    "SkillIOError",
    "SkillNotFoundError",
    "SkillParseError",
    "SkillPermissionError",
    "SkillpackError",
    "UsageError",
    "__version__",
    "discover",
    "parse_skill",
    "read_body",
]
