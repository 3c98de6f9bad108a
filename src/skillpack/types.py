"""Every type a public signature of skillpack names, importable from one public module.

`from skillpack.types import Injection, Resolution, SkillReader` types a host's code
without reaching into a private module. The classes and functions themselves live in
`skillpack`; this module only names the values and protocols their signatures use.
Names load on first use (PEP 562), as in `skillpack`. A test fails when a public
signature names a type that is neither here nor in `skillpack`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lazy import load_lazy

if TYPE_CHECKING:
    from ._errors import ErrorCode
    from ._model import CodexPermissions, Context, RootKind, Scope, Severity, SkillFile
    from .config._schema import ConfigScope, McpServerConfig, MultiMention
    from .discovery._options import DiscoveryOptions
    from .index._search import SkillSearch
    from .index._suggest import Suggestion
    from .parse._frontmatter import ParsedSkill
    from .render._catalog import CatalogMode, CatalogReport, RenderedCatalog, Shown
    from .render._formats import CatalogFormat
    from .runtime._complete import CompletionMatch
    from .runtime._create import CreatedSkill
    from .runtime._deps import EnvPrompt, EnvVarDependency, McpDependency, McpInstall
    from .runtime._fork import ForkRun, SubagentRunner
    from .runtime._hooks import Hook, HookResult
    from .runtime._inject import Injection
    from .runtime._live import CatalogSource, RefreshMode
    from .runtime._permissions import AskCallback, PermissionGate
    from .runtime._readers import SkillContent, SkillReader
    from .runtime._shell import ShellRequest
    from .runtime._tools import ToolDefinition, ToolFormat
    from .runtime._turns import Invoker
    from .runtime._workspace import Toggled
    from .select._grants import Grant, SkillGrant
    from .select._resolve import Activation, Diagnostic, Resolution
    from .select._rules import Decision, PermissionRules

# name -> module holding it; loaded on first attribute access.
_LAZY = {
    "Activation": ".select._resolve",
    "AskCallback": ".runtime._permissions",
    "CatalogFormat": ".render._formats",
    "CatalogMode": ".render._catalog",
    "CatalogReport": ".render._catalog",
    "Shown": ".render._catalog",
    "SkillSearch": ".index._search",
    "Suggestion": ".index._suggest",
    "CompletionMatch": ".runtime._complete",
    "CatalogSource": ".runtime._live",
    "CodexPermissions": "._model",
    "ConfigScope": ".config._schema",
    "Context": "._model",
    "CreatedSkill": ".runtime._create",
    "Decision": ".select._rules",
    "Diagnostic": ".select._resolve",
    "DiscoveryOptions": ".discovery._options",
    "EnvPrompt": ".runtime._deps",
    "EnvVarDependency": ".runtime._deps",
    "ErrorCode": "._errors",
    "ForkRun": ".runtime._fork",
    "Grant": ".select._grants",
    "Hook": ".runtime._hooks",
    "HookResult": ".runtime._hooks",
    "Injection": ".runtime._inject",
    "Invoker": ".runtime._turns",
    "McpDependency": ".runtime._deps",
    "McpInstall": ".runtime._deps",
    "McpServerConfig": ".config._schema",
    "MultiMention": ".config._schema",
    "ParsedSkill": ".parse._frontmatter",
    "PermissionGate": ".runtime._permissions",
    "PermissionRules": ".select._rules",
    "RefreshMode": ".runtime._live",
    "RenderedCatalog": ".render._catalog",
    "Resolution": ".select._resolve",
    "RootKind": "._model",
    "Scope": "._model",
    "Severity": "._model",
    "ShellRequest": ".runtime._shell",
    "SkillContent": ".runtime._readers",
    "SkillFile": "._model",
    "SkillGrant": ".select._grants",
    "SkillReader": ".runtime._readers",
    "SubagentRunner": ".runtime._fork",
    "Toggled": ".runtime._workspace",
    "ToolDefinition": ".runtime._tools",
    "ToolFormat": ".runtime._tools",
}

__all__ = [
    "Activation",
    "AskCallback",
    "CatalogFormat",
    "CatalogMode",
    "CatalogReport",
    "CatalogSource",
    "CodexPermissions",
    "CompletionMatch",
    "ConfigScope",
    "Context",
    "CreatedSkill",
    "Decision",
    "Diagnostic",
    "DiscoveryOptions",
    "EnvPrompt",
    "EnvVarDependency",
    "ErrorCode",
    "ForkRun",
    "Grant",
    "Hook",
    "HookResult",
    "Injection",
    "Invoker",
    "McpDependency",
    "McpInstall",
    "McpServerConfig",
    "MultiMention",
    "ParsedSkill",
    "PermissionGate",
    "PermissionRules",
    "RefreshMode",
    "RenderedCatalog",
    "Resolution",
    "RootKind",
    "Scope",
    "Severity",
    "ShellRequest",
    "Shown",
    "SkillContent",
    "SkillFile",
    "SkillGrant",
    "SkillReader",
    "SkillSearch",
    "SubagentRunner",
    "Suggestion",
    "Toggled",
    "ToolDefinition",
    "ToolFormat",
]


def __getattr__(name: str) -> Any:
    return load_lazy(name, _LAZY, package=__name__, anchor="skillpack", namespace=globals())


def __dir__() -> list[str]:
    return list(__all__)
