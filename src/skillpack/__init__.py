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
    SkillpackError,
    SkillParseError,
    SkillPermissionError,
    UsageError,
)
from ._lazy import load_lazy

if TYPE_CHECKING:
    from ._model import Catalog, CodexMetadata, Problem, Root, Skill, SkillLocation
    from .config._files import load_config
    from .config._schema import Config
    from .discovery._discover import discover, read_body
    from .discovery._memory import MemorySkills
    from .discovery._options import DiscoveryOptions
    from .parse._frontmatter import parse_skill
    from .render._catalog import render_catalog
    from .runtime._complete import Completion, complete_mention
    from .runtime._deps import DependencyReport
    from .runtime._live import CatalogChange
    from .runtime._session import Session
    from .runtime._shell import ShellPolicy
    from .runtime._tools import SkillTools
    from .runtime._turns import Turn
    from .select._resolve import resolve_message

from ._version import __version__

# name -> module holding it; loaded on first attribute access (PEP 562). The value
# types too: building their dataclasses is most of what importing `_model` costs.
_LAZY = {
    "Catalog": "._model",
    "CatalogChange": ".runtime._live",
    "CodexMetadata": "._model",
    "Completion": ".runtime._complete",
    "Config": ".config._schema",
    "DependencyReport": ".runtime._deps",
    "DiscoveryOptions": ".discovery._options",
    "MemorySkills": ".discovery._memory",
    "Problem": "._model",
    "Root": "._model",
    "Session": ".runtime._session",
    "ShellPolicy": ".runtime._shell",
    "Skill": "._model",
    "SkillLocation": "._model",
    "SkillTools": ".runtime._tools",
    "Turn": ".runtime._turns",
    "complete_mention": ".runtime._complete",
    "discover": ".discovery._discover",
    "load_config": ".config._files",
    "parse_skill": ".parse._frontmatter",
    "read_body": ".discovery._discover",
    "render_catalog": ".render._catalog",
    "resolve_message": ".select._resolve",
}


def __getattr__(name: str) -> Any:
    return load_lazy(name, _LAZY, package=__name__, anchor=__name__, namespace=globals())


__all__ = [
    "AmbiguousSkillError",
    "Catalog",
    "CatalogChange",
    "CodexMetadata",
    "Completion",
    "Config",
    "DependencyReport",
    "DiscoveryOptions",
    "MemorySkills",
    "Problem",
    "Root",
    "Session",
    "ShellPolicy",
    "Skill",
    "SkillDisabledError",
    "SkillError",
    "SkillIOError",
    "SkillLocation",
    "SkillNotFoundError",
    "SkillParseError",
    "SkillPermissionError",
    "SkillTools",
    "SkillpackError",
    "Turn",
    "UsageError",
    "__version__",
    "complete_mention",
    "discover",
    "load_config",
    "parse_skill",
    "read_body",
    "render_catalog",
    "resolve_message",
]


def __dir__() -> list[str]:
    return sorted(__all__)
