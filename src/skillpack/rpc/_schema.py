"""The one schema of the JSON-RPC app server: every method's params and result, the
notifications, the shared shapes and the error codes.

The server validates params against it (`_params.py`), `docs/rpc.md` is generated from
it (`python docs/gen_rpc_doc.py`), the tests validate every response against it with
`jsonschema`, and `rpc.discover` returns it to clients in any language. Params are
closed (an unknown key is an error naming it); results are open (fields may be added,
never renamed or removed).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, get_args

from .._errors import ErrorCode
from .._limits import MAX_PATH_CHARS, MAX_REF_CHARS
from .._model import SCOPES
from ..runtime._left_out import LeftOutKind
from ..runtime._noted import MAX_NOTED_PATHS
from ..runtime._tool_args import SCHEMAS as TOOL_SCHEMAS
from ..select._mentions import MentionSource
from ..select._resolve import DiagnosticKind
from ._codes import ERROR_CODES, PROTOCOL_CODES, RPC_CODES

MAX_CWDS = 64
"""Most working directories one `skills.list` may name."""
MAX_TEXT_CHARS = 1_000_000
"""Longest text `turn.prepare` takes (the 4 MiB frame limit applies too)."""
MAX_TOOLS = 1_000
"""Most tool names `context.inspect` takes."""

Schema = dict[str, Any]


def _ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def _obj(
    properties: dict[str, Schema], required: tuple[str, ...] = (), *, closed: bool = False
) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "required": list(required)}
    if closed:
        schema["additionalProperties"] = False
    return schema


def _str(description: str, **extra: Any) -> Schema:
    return {"type": "string", "description": description, **extra}


def _typed(type_: str, description: str) -> Schema:
    return {"type": type_, "description": description}


def _nullable(type_: str, description: str) -> Schema:
    return {"type": [type_, "null"], "description": description}


def _list(items: Schema, description: str, **extra: Any) -> Schema:
    return {"type": "array", "items": items, "description": description, **extra}


def _params(properties: dict[str, Schema], *required: str) -> Schema:
    return _obj(properties, required, closed=True)


_PATHS = {"type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS}

_CWD = _str(
    "Working directory whose repo chain (plus user and system roots) is used; "
    "default: the server's --cwd.",
    minLength=1,
    maxLength=MAX_PATH_CHARS,
)
_SESSION = _str("A session id from `session.open`.", minLength=1, maxLength=128)
_EXTRA_ROOTS = _list(_PATHS, "Extra skill roots (scope `extra`), absolute paths.", maxItems=64)
_WHERE = {
    "session": {
        **_SESSION,
        "description": "Run in this session (its state, enable "
        "overrides and permissions); without it, in the workspace of `cwd`.",
    },
    "cwd": _CWD,
}

DEFS: dict[str, Schema] = {
    "Skill": _obj(
        {
            "name": _str("Effective name."),
            "description": _str("What the skill does and when to use it."),
            "path": _str("Absolute path of its SKILL.md."),
            "dir": _str("Its folder."),
            "scope": {"enum": list(SCOPES)},
            "qualified_name": _str("`<plugin>:<name>` or `<scope>:<name>`."),
            "enabled": {"type": "boolean"},
            "model_invocable": {"type": "boolean"},
            "user_invocable": {"type": "boolean"},
            "shadowed_by": _nullable("string", "Path of the skill that wins its name."),
            "plugin": _nullable("string", "Plugin namespace."),
            "missing_dependencies": _list(
                _obj({"type": {"type": "string"}, "name": {"type": "string"}}, ("type", "name")),
                "Declared dependencies (`env_var`, `mcp`) the server's environment lacks.",
            ),
            "permission": {
                "enum": ["allow", "ask", "deny"],
                "description": "What the permission rules decide.",
            },
        },
        (
            "name",
            "description",
            "path",
            "dir",
            "scope",
            "qualified_name",
            "enabled",
            "model_invocable",
            "user_invocable",
            "shadowed_by",
            "plugin",
            "missing_dependencies",
            "permission",
        ),
    ),
    "Problem": _obj(
        {
            "path": _str("The file or folder concerned."),
            "severity": {"enum": ["error", "warning"]},
            "code": _str("Stable kebab-case code (docs/design.md lists them)."),
            "message": _str("What is wrong, where, and how to fix it."),
            "field": _str("The frontmatter field, when there is one."),
            "line": {"type": "integer"},
            "agents": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "What an agent (codex, opencode) does differently with it.",
            },
        },
        ("path", "severity", "code", "message"),
    ),
    "Workspace": _obj(
        {
            "cwd": _str("The working directory, absolute."),
            "skills": _list(_ref("Skill"), "Every skill found, in catalog order."),
            "errors": _list(_ref("Problem"), "Problems found while discovering."),
            "version": _str(
                "The catalog's version: equal for equal catalogs, new when a skill, its "
                "standing or a problem changes (list again only when it differs)."
            ),
            "left_out": _list(
                _ref("LeftOut"),
                "What the model is not offered and why: roots cut short, invalid files, "
                "shadowed, prompt-only, disabled and denied skills.",
            ),
        },
        ("cwd", "skills", "errors", "version", "left_out"),
    ),
    "LeftOut": _obj(
        {
            "kind": {
                "enum": list(get_args(LeftOutKind)),
                "description": "truncated and invalid mean a skill is missing by accident.",
            },
            "code": _str("Stable kebab-case code (docs/design.md lists them)."),
            "path": _str("The SKILL.md, or the root or folder concerned."),
            "name": {"type": ["string", "null"], "description": "The skill's name, if any."},
            "message": _str("Why it is left out and how to change that."),
        },
        ("kind", "code", "path", "name", "message"),
    ),
    "Change": _obj(
        {
            "cwd": _str("The workspace's working directory."),
            "extra_roots": _list(_PATHS, "The workspace's extra roots."),
            "added": _list(_ref("Skill"), "Skills that appeared."),
            "removed": _list(_ref("Skill"), "Skills that are gone (state before)."),
            "changed": _list(_ref("Skill"), "Skills whose SKILL.md changed."),
            "config_changed": _typed(
                "boolean",
                "The config files changed (enable state, permissions): list the skills again.",
            ),
        },
        ("cwd", "extra_roots", "added", "removed", "changed", "config_changed"),
    ),
    "ToolError": _obj(
        {
            "code": {"enum": list(get_args(ErrorCode))},
            "message": _str("What went wrong and what to do."),
            "candidates": _list({"type": "string"}, "Ids to use instead."),
        },
        ("code", "message"),
    ),
    "SearchData": _obj(
        {
            "results": _list(
                _obj(
                    {
                        "name": {"type": "string"},
                        "qualified_name": {"type": "string"},
                        "path": {"type": "string"},
                        "scope": {"enum": list(SCOPES)},
                        "description": {"type": "string"},
                        "score": {"type": "number"},
                        "reasons": _list({"type": "string"}, "Why it matched."),
                    },
                    ("name", "qualified_name", "path", "scope", "description", "score", "reasons"),
                ),
                "Ranked candidates, best first.",
            ),
            "count": _typed("integer", "How many results there are."),
            "truncated": _typed("boolean", "More skills matched than `limit` shows."),
        },
        ("results",),
    ),
    "LoadData": _obj(
        {
            "name": {"type": "string"},
            "qualified_name": {"type": "string"},
            "path": {"type": "string"},
            "dir": _str("The skill's folder."),
            "scope": {"enum": list(SCOPES)},
            "context": {"enum": ["inline", "fork"]},
            "mtime_ns": _typed("integer", "Modification time of the SKILL.md read."),
            "mtime_ms": _typed("integer", "The same in milliseconds."),
            "content": _str("The `<skill_content>` injection, or a short reminder."),
            "already_loaded": _typed("boolean", "True when `content` is the reminder."),
        },
        ("name", "qualified_name", "path", "content", "already_loaded"),
    ),
    "ReadFileData": _obj(
        {
            "skill": {"type": "string"},
            "path": _str("Relative to the skill's folder."),
            "content": {"type": "string"},
        },
        ("skill", "path", "content"),
    ),
    "Activation": _obj(
        {
            "name": {"type": "string"},
            "qualified_name": {"type": "string"},
            "path": {"type": "string"},
            "args": _str("Arguments it runs with."),
            "source": {"enum": list(get_args(MentionSource))},
        },
        ("name", "qualified_name", "path", "args", "source"),
    ),
    "Suggestion": _obj(
        {
            "id": _str("The shortest id that picks the skill (`plugin:name` in a plugin)."),
            "name": {"type": "string"},
            "path": _str("Its SKILL.md."),
            "description": {"type": "string"},
            "score": _typed("number", "The search score, comparable within one message."),
        },
        ("id", "name", "path", "description", "score"),
    ),
    "Diagnostic": _obj(
        {
            "kind": {"enum": list(get_args(DiagnosticKind))},
            "token": _str("The reference as written."),
            "message": _str("One human line: what happened and what to type instead."),
            "candidates": _list({"type": "string"}, "Ids to type instead."),
            "hint": _nullable(
                "string",
                "A line for people only (e.g. a `skillpack` command); never meant for a model.",
            ),
        },
        ("kind", "token", "message", "candidates"),
    ),
    "EntryCost": _obj(
        {
            "name": {"type": "string"},
            "qualified_name": {"type": "string"},
            "path": {"type": "string"},
            "scope": {"enum": list(SCOPES)},
            "chars": _typed("integer", "Characters of the entry with its whole description."),
            "tokens": _typed("integer", "`chars` / 4, rounded up."),
            "shown": {"enum": ["full", "shortened", "name_only", "omitted"]},
        },
        ("name", "qualified_name", "path", "scope", "chars", "tokens", "shown"),
    ),
    "LoadedCost": _obj(
        {
            "name": _nullable("string", "None when the skill left the catalog."),
            "qualified_name": {"type": ["string", "null"]},
            "path": {"type": "string"},
            "body_chars": {"type": "integer"},
            "body_tokens": {"type": "integer"},
            "mtime_ns": {"type": "integer"},
            "size": {"type": "integer"},
        },
        ("name", "qualified_name", "path", "body_chars", "body_tokens", "mtime_ns", "size"),
    ),
    "CatalogCost": _obj(
        {
            "budget_chars": _typed("integer", "The budget the catalog had to fit."),
            "used_chars": _typed("integer", "Length of the rendered catalog."),
            "tokens": _typed("integer", "`used_chars` / 4, rounded up."),
            "share_of_window": _nullable("number", "`tokens` / `context_window`."),
            "format": {"enum": ["xml", "markdown", "json"]},
            "total": _typed("integer", "Skills in the model's catalog."),
            "shown": _typed("integer", "Skills the text lists."),
            "shortened": _list({"type": "string"}, "Names whose description was cut."),
            "names_only": _list({"type": "string"}, "Names listed without description."),
            "omitted": _list({"type": "string"}, "Names left out (skill_search finds them)."),
            "truncated": _typed("boolean", "Anything shortened, reduced or omitted."),
            "deferred": _typed(
                "boolean", "The deferred catalog: no skill listed, a stub naming skill_search."
            ),
            "locations_dropped": _typed(
                "boolean", "Locations left out to fit (the model has skill_load)."
            ),
            "location_base": _nullable("string", "The prefix every location shared, stated once."),
            "description_chars": _nullable(
                "integer", "The common length descriptions were cut to."
            ),
            "entries": _list(
                _ref("EntryCost"), "Each entry's cost, in catalog order (with `include_skills`)."
            ),
        },
        (
            "budget_chars",
            "used_chars",
            "tokens",
            "share_of_window",
            "format",
            "total",
            "shown",
            "shortened",
            "names_only",
            "omitted",
            "truncated",
        ),
    ),
    "ActiveTools": _obj(
        {
            "restricted": _typed("boolean", "A leading skill declares tools."),
            "declarations": _list(
                _obj(
                    {
                        "skill": {"type": "string"},
                        "allowed_tools": _nullable("array", "Its `allowed-tools`."),
                        "disallowed_tools": _nullable("array", "Its `disallowed-tools`."),
                    },
                    ("skill", "allowed_tools", "disallowed_tools"),
                ),
                "The leading skills that declare tools.",
            ),
            "tools": _nullable("array", "The host's `tools` left active (when given)."),
        },
        ("restricted", "declarations", "tools"),
    ),
    "Counts": _obj(
        {
            "skills": _typed("integer", "Discovered."),
            "in_model_catalog": _typed("integer", "Enabled, permitted, model-invocable."),
            "disabled": _typed("integer", "Disabled by config or session."),
            "denied": _typed("integer", "Hidden by a permission rule."),
            "problems": _typed("integer", "Problems found."),
        },
        ("skills", "in_model_catalog", "disabled", "denied", "problems"),
    ),
    "Root": _obj({"path": {"type": "string"}, "scope": {"enum": list(SCOPES)}}, ("path", "scope")),
}


def envelope(data: Schema) -> Schema:
    """The tool envelope `{ok: true, data}` / `{ok: false, error}` (design rules: tools
    and errors)."""
    return {
        "oneOf": [
            _obj({"ok": {"const": True}, "data": data}, ("ok", "data")),
            _obj({"ok": {"const": False}, "error": _ref("ToolError")}, ("ok", "error")),
        ]
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class Method:
    """One method of the server."""

    name: str
    summary: str
    """One paragraph for docs/rpc.md."""
    params: Schema
    result: Schema
    errors: tuple[int, ...] = ()
    """Error codes this method answers with beyond the protocol's."""
    tool: str | None = None
    """The tool whose arguments this method takes (`runtime._tool_args.SCHEMAS`): their
    schema is the tool's, and the tool's own check (`check_args`) holds them, answering
    in the envelope; the dispatcher checks only the method's other params."""

    @property
    def checked(self) -> Schema:
        """The params schema the dispatcher checks: the tool's arguments left to it."""
        if self.tool is None:
            return self.params
        own = {
            key: ({} if key in TOOL_SCHEMAS[self.tool]["properties"] else value)
            for key, value in self.params["properties"].items()
        }
        return {**self.params, "properties": own, "required": []}


def _tool_params(tool: str, **where: Schema) -> Schema:
    """A tool-like method's params: the tool's arguments (its bounds, its required
    ones) and where to run it (`session`, `cwd`)."""
    schema = TOOL_SCHEMAS[tool]
    properties = {**copy.deepcopy(dict(schema["properties"])), **where}
    return _params(properties, *schema["required"])


_DOMAIN = tuple(sorted(set(ERROR_CODES.values()), reverse=True))

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            name="skills.list",
            summary="The catalog of each working directory, resolved with its own repo chain "
            "(plus user, system and configured roots), cached per directory and kept current "
            "by the live catalog. `force_reload` re-discovers first.",
            params=_params(
                {
                    "cwds": _list(
                        _CWD, "Working directories (default: the server's).", maxItems=MAX_CWDS
                    ),
                    "force_reload": _typed("boolean", "Re-discover now."),
                    "extra_roots": {
                        **_EXTRA_ROOTS,
                        "description": "Extra skill roots (scope `extra`), absolute paths, "
                        "for every cwd of the request.",
                    },
                    "per_cwd_extra_roots": _list(
                        _obj(
                            {"cwd": _CWD, "extra_roots": _EXTRA_ROOTS},
                            ("cwd", "extra_roots"),
                            closed=True,
                        ),
                        "Extra roots of one cwd only (Codex's `perCwdExtraUserRoots`), after "
                        "`extra_roots`; `cwd` must be one of `cwds`.",
                        maxItems=MAX_CWDS,
                    ),
                }
            ),
            result=_obj(
                {"data": _list(_ref("Workspace"), "One entry per cwd, in the order asked.")},
                ("data",),
            ),
            errors=_DOMAIN,
        ),
        Method(
            name="skills.search",
            summary="The `skill_search` tool: ranked candidates with reasons, as an envelope.",
            params=_tool_params("skill_search", **_WHERE),
            result=envelope(_ref("SearchData")),
            errors=(RPC_CODES["session-not-found"],),
            tool="skill_search",
        ),
        Method(
            name="skills.load",
            summary="The `skill_load` tool: a skill's injection by `name` or `path` (path "
            "wins), as an envelope. In a session, loading an unchanged skill again answers a "
            "short reminder; without one every load renders in full.",
            params=_tool_params("skill_load", **_WHERE),
            result=envelope(_ref("LoadData")),
            errors=(RPC_CODES["session-not-found"],),
            tool="skill_load",
        ),
        Method(
            name="skills.read_file",
            summary="The `skill_read_file` tool: one file bundled with a skill, by path "
            "relative to its folder (never outside it), as an envelope.",
            params=_tool_params("skill_read_file", **_WHERE),
            result=envelope(_ref("ReadFileData")),
            errors=(RPC_CODES["session-not-found"],),
            tool="skill_read_file",
        ),
        Method(
            name="skills.reload",
            summary="Re-discover now (every watched workspace, or those of `cwd`) and say "
            "what changed; subscribers also get `skills/changed`.",
            params=_params({"cwd": _CWD}),
            result=_obj({"data": _list(_ref("Change"), "One per workspace.")}, ("data",)),
            errors=_DOMAIN,
        ),
        Method(
            name="skills.config.write",
            summary="Enable or disable a skill in the user or project config file (atomic, "
            "locked). Workspaces re-read their config; open sessions of them get the new "
            "state of that skill.",
            params=_params(
                {
                    "ref": _str(
                        "Name, qualified id or path.", minLength=1, maxLength=MAX_REF_CHARS
                    ),
                    "enabled": {"type": "boolean"},
                    "target": {
                        "enum": ["user", "project"],
                        "description": "Which config "
                        "file: the user's, or the project's `.skillpack/config.toml`.",
                    },
                    "cwd": _CWD,
                },
                "ref",
                "enabled",
                "target",
            ),
            result=_obj(
                {
                    "name": {"type": "string"},
                    "qualified_name": {"type": "string"},
                    "path": {"type": "string"},
                    "enabled": {
                        "type": "boolean",
                        "description": "The resulting state from every config file: "
                        "unlike `params.enabled` when another file decides.",
                    },
                    "target": {"enum": ["user", "project"]},
                    "config": _str("The config file written."),
                    "decided_by": {
                        "type": ["string", "null"],
                        "description": "The config file whose `[skills]` entry decides "
                        "the state now; null: no entry names the skill.",
                    },
                },
                ("name", "qualified_name", "path", "enabled", "target", "config", "decided_by"),
            ),
            errors=_DOMAIN,
        ),
        Method(
            name="session.open",
            summary="Open a conversation: its own loaded versions, leading skills and "
            "enable overrides over the live catalog of `cwd`. Sessions are capped "
            "(`--max-sessions`): at the cap a new one takes the place of the least recently "
            "used session with no request in flight, and is refused (session-limit) only "
            "while every session has one; an idle one is closed after `--session-idle` "
            "seconds.",
            params=_params({"cwd": _CWD, "extra_roots": _EXTRA_ROOTS}),
            result=_obj(
                {
                    "session": _str("Pass it to the other methods."),
                    "cwd": {"type": "string"},
                    "skills": _typed("integer", "Skills in the model's catalog."),
                },
                ("session", "cwd", "skills"),
            ),
            errors=(*_DOMAIN, RPC_CODES["session-limit"]),
        ),
        Method(
            name="session.close",
            summary="Close a session; closing an unknown or closed one answers `closed: false`.",
            params=_params({"session": _SESSION}, "session"),
            result=_obj({"closed": {"type": "boolean"}}, ("closed",)),
        ),
        Method(
            name="session.note_paths",
            summary="The files or folders the session works on: skills with `paths:` globs "
            "join its model catalog once one matches (relative to the project root), and "
            "skill roots in the folders between each path and the project root are "
            "discovered. `$name` loads a `paths:` skill either way.",
            params=_params(
                {
                    "session": _SESSION,
                    "paths": _list(
                        _PATHS,
                        "Files or folders the session works on, absolute paths.",
                        maxItems=MAX_NOTED_PATHS,
                    ),
                },
                "session",
                "paths",
            ),
            result=_obj(
                {
                    "opened": _list(
                        _obj(
                            {
                                "name": {"type": "string"},
                                "qualified_name": {"type": "string"},
                                "description": {"type": "string"},
                            },
                            ("name", "qualified_name", "description"),
                        ),
                        "Skills now in the session's model catalog that were not before.",
                    ),
                    "skills": _typed("integer", "Skills in the session's model catalog now."),
                },
                ("opened", "skills"),
            ),
            errors=(*_DOMAIN, RPC_CODES["session-not-found"]),
        ),
        Method(
            name="turn.prepare",
            summary="A user (or model) message: which skills it activates (`$name`, "
            "`[$name](path)`, `/name args`), their injections, and why others did not.",
            params=_params(
                {
                    "session": _SESSION,
                    "text": _str("The message.", maxLength=MAX_TEXT_CHARS),
                    "invoker": {
                        "enum": ["user", "model"],
                        "description": "Who wrote the text (default: user).",
                    },
                },
                "session",
                "text",
            ),
            result=_obj(
                {
                    "activations": _list(_ref("Activation"), "In order."),
                    "injections": _list({"type": "string"}, "One per inline activation."),
                    "diagnostics": _list(
                        _ref("Diagnostic"),
                        "Refused or unknown references, "
                        "and activated skills that could not be used.",
                    ),
                    "lines": _list({"type": "string"}, "`Using skill: <id>` lines."),
                    "text": _str("The task text left."),
                    "forks": _list(
                        {"type": "object"},
                        "`context: fork` activations run on "
                        "the host's runner (none here: a `fork-unavailable` "
                        "diagnostic says so).",
                    ),
                    "suggestions": _list(
                        _ref("Suggestion"),
                        "Skills that may fit the request, best first (at most `[search] "
                        "suggestions`, 3); none when the message activated a skill. Hints "
                        "for the model, never injected.",
                    ),
                    "suggestion_note": _str(
                        "The note to put before the model naming the suggestions; empty "
                        "when there are none."
                    ),
                },
                ("activations", "injections", "diagnostics", "lines", "text"),
            ),
            errors=(*_DOMAIN, RPC_CODES["session-not-found"]),
        ),
        Method(
            name="context.inspect",
            summary="What skills cost the model's context: the catalog's budget and what it "
            "shortened or omitted, each entry's cost (with `include_skills`), the skills "
            "loaded in the session with their body cost, the leading skill and the active "
            "tool set (the host's `tools` filtered by the leading skills' declarations).",
            params=_params(
                {
                    **_WHERE,
                    "include_skills": _typed(
                        "boolean", "Also each catalog entry's cost and every skill's state."
                    ),
                    "context_window": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "The model's window in tokens (budget: 2% of it).",
                    },
                    "budget_chars": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "An explicit catalog budget.",
                    },
                    "format": {
                        "enum": ["xml", "markdown", "json"],
                        "description": "The catalog format the host renders.",
                    },
                    "catalog_mode": {
                        "enum": ["auto", "full", "deferred"],
                        "description": "The catalog mode the host renders (default: "
                        "`[catalog] mode` in the config, else auto).",
                    },
                    "tools": _list(
                        {"type": "string", "maxLength": 256},
                        "The host's tools.",
                        maxItems=MAX_TOOLS,
                    ),
                }
            ),
            result=_obj(
                {
                    "session_id": _str(
                        "The session measured (a workspace's own without `session`)."
                    ),
                    "context_window": _nullable("integer", "As given."),
                    "catalog": _ref("CatalogCost"),
                    "loaded": _list(_ref("LoadedCost"), "Skills injected in the session."),
                    "loaded_tokens": _typed("integer", "Their bodies' estimated tokens."),
                    "loaded_share_of_window": _nullable(
                        "number", "`loaded_tokens` / `context_window`."
                    ),
                    "leading": _nullable("string", "The leading skill's qualified name."),
                    "leading_chain": _list(
                        {"type": "string"},
                        "Every skill activated since the last user turn, leader first.",
                    ),
                    "active_tools": _ref("ActiveTools"),
                    "counts": _ref("Counts"),
                    "roots": _list(_ref("Root"), "Roots searched."),
                    "skills": _list(
                        {"type": "object"},
                        "Every skill's state: name, "
                        "qualified_name, path, scope, enabled, visible, "
                        "in_model_catalog (with `include_skills`).",
                    ),
                },
                (
                    "session_id",
                    "context_window",
                    "catalog",
                    "loaded",
                    "loaded_tokens",
                    "loaded_share_of_window",
                    "leading",
                    "leading_chain",
                    "active_tools",
                    "counts",
                    "roots",
                ),
            ),
            errors=(*_DOMAIN, RPC_CODES["session-not-found"]),
        ),
        Method(
            name="rpc.discover",
            summary="This schema: methods, notifications, shapes and error codes.",
            params=_params({}),
            result={"type": "object"},
        ),
    )
}

NOTIFICATIONS: dict[str, tuple[str, Schema]] = {
    "skills/changed": (
        "The live catalog of a workspace changed (a skill created, edited or removed on "
        "disk, or `skills.reload` found a difference). Sent for every workspace a request "
        "has named; over HTTP on `GET /events` (server-sent events).",
        _ref("Change"),
    ),
}


def document() -> Schema:
    """The whole schema as one JSON-ready object (what `rpc.discover` returns)."""
    from .._version import __version__

    return {
        "name": "skillpack",
        "version": __version__,
        "jsonrpc": "2.0",
        "methods": {
            name: {
                "summary": m.summary,
                "params": m.params,
                "result": m.result,
                "errors": list(m.errors),
            }
            for name, m in METHODS.items()
        },
        "notifications": {
            name: {"summary": summary, "params": params}
            for name, (summary, params) in NOTIFICATIONS.items()
        },
        "errors": {
            **{str(code): name for name, code in PROTOCOL_CODES.items()},
            **{str(number): code for code, number in ERROR_CODES.items()},
            **{str(code): name for name, code in RPC_CODES.items()},
        },
        "$defs": DEFS,
    }
