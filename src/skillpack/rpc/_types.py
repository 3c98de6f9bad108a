"""Typed results of the JSON-RPC methods, for Python hosts using `skillpack.rpc.Client`.

Each TypedDict mirrors a shape of `_schema.py` (a test checks they agree); results may
carry more keys than listed here, since servers add fields over time.
"""

# No `from __future__ import annotations`: TypedDict reads `NotRequired` at class creation.
from typing import Any, Literal, NotRequired, TypedDict

from ..runtime._left_out import LeftOutKind


class SkillEntry(TypedDict):
    name: str
    description: str
    path: str
    dir: str
    scope: str
    qualified_name: str
    enabled: bool
    model_invocable: bool
    user_invocable: bool
    shadowed_by: str | None
    plugin: str | None
    missing_dependencies: list[dict[str, str]]
    permission: Literal["allow", "ask", "deny"]


class ProblemEntry(TypedDict):
    path: str
    severity: Literal["error", "warning"]
    code: str
    message: str
    field: NotRequired[str]
    line: NotRequired[int]
    agents: NotRequired[dict[str, str]]


class LeftOutEntry(TypedDict):
    kind: LeftOutKind
    code: str
    path: str
    name: str | None
    message: str


class WorkspaceListing(TypedDict):
    cwd: str
    skills: list[SkillEntry]
    errors: list[ProblemEntry]
    version: str
    left_out: list[LeftOutEntry]


class SkillsListResult(TypedDict):
    data: list[WorkspaceListing]


class Change(TypedDict):
    cwd: str
    extra_roots: list[str]
    added: list[SkillEntry]
    removed: list[SkillEntry]
    changed: list[SkillEntry]
    config_changed: bool


class ReloadResult(TypedDict):
    data: list[Change]


class ToolError(TypedDict):
    code: str
    message: str
    candidates: NotRequired[list[str]]


class Envelope(TypedDict):
    """`{ok: true, data}` or `{ok: false, error}`: the tools' result (design rules: tools
    and errors)."""

    ok: bool
    data: NotRequired[dict[str, Any]]
    error: NotRequired[ToolError]


class ConfigWriteResult(TypedDict):
    name: str
    qualified_name: str
    path: str
    enabled: bool
    target: Literal["user", "project"]
    config: str
    decided_by: str | None


class SessionOpenResult(TypedDict):
    session: str
    cwd: str
    skills: int


class SessionCloseResult(TypedDict):
    closed: bool


class OpenedSkill(TypedDict):
    name: str
    qualified_name: str
    description: str


class NotePathsResult(TypedDict):
    opened: list[OpenedSkill]
    skills: int


class ActivationEntry(TypedDict):
    name: str
    qualified_name: str
    path: str
    args: str
    source: str


class DiagnosticEntry(TypedDict):
    kind: str
    token: str
    message: str
    candidates: list[str]
    hint: NotRequired[str | None]


class SuggestionEntry(TypedDict):
    id: str
    name: str
    path: str
    description: str
    score: float


class TurnResult(TypedDict):
    activations: list[ActivationEntry]
    injections: list[str]
    diagnostics: list[DiagnosticEntry]
    lines: list[str]
    text: str
    forks: NotRequired[list[dict[str, Any]]]
    suggestions: NotRequired[list[SuggestionEntry]]
    suggestion_note: NotRequired[str]


class ContextReport(TypedDict):
    session_id: str
    context_window: int | None
    catalog: dict[str, Any]
    loaded: list[dict[str, Any]]
    loaded_tokens: int
    loaded_share_of_window: float | None
    leading: str | None
    leading_chain: list[str]
    active_tools: dict[str, Any]
    counts: dict[str, int]
    roots: list[dict[str, str]]
    skills: NotRequired[list[dict[str, Any]]]


class Notification(TypedDict):
    """A message the server sent on its own (`skills/changed`)."""

    method: str
    params: dict[str, Any]
