"""Every type a public signature of skillpack names, importable from one public module.

`from skillpack.types import Injection, Resolution, SkillReader` types a host's code
without reaching into a private module. The classes and functions themselves live in
`skillpack`, `skillpack.install`, `skillpack.rpc`, `skillpack.mcp` and the framework
modules of `skillpack.integrations`; this module names the values, protocols and
aliases their signatures use, and the fields of those values (a few under a clearer
name than the private one: `FindingSeverity`, `PlanAction`, `SearchMatch`, ...).
Names load on first use (PEP 562), as in `skillpack`. A test fails when a public
signature names a skillpack type that no public module exports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lazy import load_lazy

if TYPE_CHECKING:
    from ._errors import ErrorCode
    from ._model import CodexPermissions, Context, RootKind, Scope, Severity, SkillFile
    from .config._schema import ConfigScope, McpServerConfig, MultiMention
    from .discovery._options import DiscoveryOptions, IncludeScope
    from .index._digests import FrontmatterStore
    from .index._query import Match as SearchMatch
    from .index._search import SearchResult, SkillSearch
    from .index._suggest import Suggestion
    from .install._audit import Severity as FindingSeverity
    from .install._doctor import DoctorEntry
    from .install._doctor import Status as DoctorStatus
    from .install._http import ProgressHook
    from .install._installer import Approve as ApproveCallback
    from .install._oci_resolve import OciOptions
    from .install._plan import Action as PlanAction
    from .install._plan import FileChanges
    from .install._publish import PublishedSkill
    from .install._values import (
        Candidate,
        InstallScope,
        OciPin,
        Origin,
        Payload,
        SkillSummary,
        SourceType,
    )
    from .mcp._served import Child as DirectoryChild
    from .mcp._served import FileRead, FrontmatterCache, Listing, Manifest, ServedCatalog
    from .mcp._server import Conversation
    from .mcp._uris import Segments as UriSegments
    from .parse._frontmatter import ParsedSkill
    from .parse._hooks import HookSpec
    from .render._catalog import CatalogMode, CatalogReport, RenderedCatalog, Shown
    from .render._formats import CatalogFormat
    from .rpc._transport import Deliver as NotificationCallback
    from .rpc._transport import Transport
    from .rpc._types import (
        ActivationEntry,
        ConfigWriteResult,
        ContextReport,
        DiagnosticEntry,
        Envelope,
        LeftOutEntry,
        NotePathsResult,
        Notification,
        OpenedSkill,
        ProblemEntry,
        ReloadResult,
        SessionCloseResult,
        SessionOpenResult,
        SkillEntry,
        SkillsListResult,
        SuggestionEntry,
        ToolError,
        TurnResult,
        WorkspaceListing,
    )
    from .rpc._types import Change as ReloadChange
    from .runtime._complete import CompletionMatch
    from .runtime._create import CreatedSkill, CreateScope
    from .runtime._deps import (
        DependencyState,
        EnvPrompt,
        EnvSource,
        EnvVarDependency,
        McpDependency,
        McpInstall,
        McpSource,
    )
    from .runtime._fork import ForkRun, SubagentRunner
    from .runtime._hooks import Hook, HookResult
    from .runtime._inject import Injection
    from .runtime._left_out import LeftOut, LeftOutKind
    from .runtime._live import CatalogSource, RefreshMode
    from .runtime._permissions import AskCallback, PermissionGate
    from .runtime._permissions import Remember as RememberCallback
    from .runtime._readers import SkillContent, SkillReader
    from .runtime._session_views import SessionSkills, SkillDeclarations
    from .runtime._shell import RunStatus, ShellRequest, ShellRun
    from .runtime._tools import ToolDefinition, ToolFormat
    from .runtime._turns import Invoker
    from .runtime._workspace import Toggled
    from .select._commands import CommandForm
    from .select._grants import Grant, SkillGrant
    from .select._mentions import MentionSource
    from .select._resolve import Activation, Diagnostic, DiagnosticKind, Resolution
    from .select._rules import Decision, PermissionRules

# name -> module holding it (`module:attribute` when exported under another name);
# loaded on first attribute access.
_LAZY = {
    "Activation": ".select._resolve",
    "ActivationEntry": ".rpc._types",
    "ApproveCallback": ".install._installer:Approve",
    "AskCallback": ".runtime._permissions",
    "Candidate": ".install._values",
    "CatalogFormat": ".render._formats",
    "CatalogMode": ".render._catalog",
    "CatalogReport": ".render._catalog",
    "CatalogSource": ".runtime._live",
    "CodexPermissions": "._model",
    "CommandForm": ".select._commands",
    "CompletionMatch": ".runtime._complete",
    "ConfigScope": ".config._schema",
    "ConfigWriteResult": ".rpc._types",
    "Context": "._model",
    "ContextReport": ".rpc._types",
    "Conversation": ".mcp._server",
    "CreateScope": ".runtime._create",
    "CreatedSkill": ".runtime._create",
    "Decision": ".select._rules",
    "DependencyState": ".runtime._deps",
    "Diagnostic": ".select._resolve",
    "DiagnosticEntry": ".rpc._types",
    "DiagnosticKind": ".select._resolve",
    "DirectoryChild": ".mcp._served:Child",
    "DiscoveryOptions": ".discovery._options",
    "DoctorEntry": ".install._doctor",
    "DoctorStatus": ".install._doctor:Status",
    "EnvPrompt": ".runtime._deps",
    "EnvSource": ".runtime._deps",
    "EnvVarDependency": ".runtime._deps",
    "Envelope": ".rpc._types",
    "ErrorCode": "._errors",
    "FileChanges": ".install._plan",
    "FileRead": ".mcp._served",
    "FindingSeverity": ".install._audit:Severity",
    "ForkRun": ".runtime._fork",
    "FrontmatterCache": ".mcp._served",
    "FrontmatterStore": ".index._digests",
    "Grant": ".select._grants",
    "Hook": ".runtime._hooks",
    "HookResult": ".runtime._hooks",
    "HookSpec": ".parse._hooks",
    "IncludeScope": ".discovery._options",
    "Injection": ".runtime._inject",
    "InstallScope": ".install._values",
    "Invoker": ".runtime._turns",
    "LeftOut": ".runtime._left_out",
    "LeftOutEntry": ".rpc._types",
    "LeftOutKind": ".runtime._left_out",
    "Listing": ".mcp._served",
    "Manifest": ".mcp._served",
    "McpDependency": ".runtime._deps",
    "McpInstall": ".runtime._deps",
    "McpServerConfig": ".config._schema",
    "McpSource": ".runtime._deps",
    "MentionSource": ".select._mentions",
    "MultiMention": ".config._schema",
    "NotePathsResult": ".rpc._types",
    "Notification": ".rpc._types",
    "NotificationCallback": ".rpc._transport:Deliver",
    "OciOptions": ".install._oci_resolve",
    "OciPin": ".install._values",
    "OpenedSkill": ".rpc._types",
    "Origin": ".install._values",
    "ParsedSkill": ".parse._frontmatter",
    "Payload": ".install._values",
    "PermissionGate": ".runtime._permissions",
    "PermissionRules": ".select._rules",
    "PlanAction": ".install._plan:Action",
    "ProblemEntry": ".rpc._types",
    "ProgressHook": ".install._http",
    "PublishedSkill": ".install._publish",
    "RefreshMode": ".runtime._live",
    "ReloadChange": ".rpc._types:Change",
    "ReloadResult": ".rpc._types",
    "RememberCallback": ".runtime._permissions:Remember",
    "RenderedCatalog": ".render._catalog",
    "Resolution": ".select._resolve",
    "RootKind": "._model",
    "RunStatus": ".runtime._shell",
    "Scope": "._model",
    "SearchMatch": ".index._query:Match",
    "SearchResult": ".index._search",
    "ServedCatalog": ".mcp._served",
    "SessionCloseResult": ".rpc._types",
    "SessionOpenResult": ".rpc._types",
    "SessionSkills": ".runtime._session_views",
    "Severity": "._model",
    "ShellRequest": ".runtime._shell",
    "ShellRun": ".runtime._shell",
    "Shown": ".render._catalog",
    "SkillContent": ".runtime._readers",
    "SkillDeclarations": ".runtime._session_views",
    "SkillEntry": ".rpc._types",
    "SkillFile": "._model",
    "SkillGrant": ".select._grants",
    "SkillReader": ".runtime._readers",
    "SkillSearch": ".index._search",
    "SkillSummary": ".install._values",
    "SkillsListResult": ".rpc._types",
    "SourceType": ".install._values",
    "SubagentRunner": ".runtime._fork",
    "Suggestion": ".index._suggest",
    "SuggestionEntry": ".rpc._types",
    "Toggled": ".runtime._workspace",
    "ToolDefinition": ".runtime._tools",
    "ToolError": ".rpc._types",
    "ToolFormat": ".runtime._tools",
    "Transport": ".rpc._transport",
    "TurnResult": ".rpc._types",
    "UriSegments": ".mcp._uris:Segments",
    "WorkspaceListing": ".rpc._types",
}

__all__ = [
    "Activation",
    "ActivationEntry",
    "ApproveCallback",
    "AskCallback",
    "Candidate",
    "CatalogFormat",
    "CatalogMode",
    "CatalogReport",
    "CatalogSource",
    "CodexPermissions",
    "CommandForm",
    "CompletionMatch",
    "ConfigScope",
    "ConfigWriteResult",
    "Context",
    "ContextReport",
    "Conversation",
    "CreateScope",
    "CreatedSkill",
    "Decision",
    "DependencyState",
    "Diagnostic",
    "DiagnosticEntry",
    "DiagnosticKind",
    "DirectoryChild",
    "DiscoveryOptions",
    "DoctorEntry",
    "DoctorStatus",
    "EnvPrompt",
    "EnvSource",
    "EnvVarDependency",
    "Envelope",
    "ErrorCode",
    "FileChanges",
    "FileRead",
    "FindingSeverity",
    "ForkRun",
    "FrontmatterCache",
    "FrontmatterStore",
    "Grant",
    "Hook",
    "HookResult",
    "HookSpec",
    "IncludeScope",
    "Injection",
    "InstallScope",
    "Invoker",
    "LeftOut",
    "LeftOutEntry",
    "LeftOutKind",
    "Listing",
    "Manifest",
    "McpDependency",
    "McpInstall",
    "McpServerConfig",
    "McpSource",
    "MentionSource",
    "MultiMention",
    "NotePathsResult",
    "Notification",
    "NotificationCallback",
    "OciOptions",
    "OciPin",
    "OpenedSkill",
    "Origin",
    "ParsedSkill",
    "Payload",
    "PermissionGate",
    "PermissionRules",
    "PlanAction",
    "ProblemEntry",
    "ProgressHook",
    "PublishedSkill",
    "RefreshMode",
    "ReloadChange",
    "ReloadResult",
    "RememberCallback",
    "RenderedCatalog",
    "Resolution",
    "RootKind",
    "RunStatus",
    "Scope",
    "SearchMatch",
    "SearchResult",
    "ServedCatalog",
    "SessionCloseResult",
    "SessionOpenResult",
    "SessionSkills",
    "Severity",
    "ShellRequest",
    "ShellRun",
    "Shown",
    "SkillContent",
    "SkillDeclarations",
    "SkillEntry",
    "SkillFile",
    "SkillGrant",
    "SkillReader",
    "SkillSearch",
    "SkillSummary",
    "SkillsListResult",
    "SourceType",
    "SubagentRunner",
    "Suggestion",
    "SuggestionEntry",
    "Toggled",
    "ToolDefinition",
    "ToolError",
    "ToolFormat",
    "Transport",
    "TurnResult",
    "UriSegments",
    "WorkspaceListing",
]


def __getattr__(name: str) -> Any:
    return load_lazy(name, _LAZY, package=__name__, anchor="skillpack", namespace=globals())


def __dir__() -> list[str]:
    return list(__all__)
