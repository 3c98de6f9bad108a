"""The tools a model calls: `skill_search`, `skill_load`, `use_skill`, `skill_read_file`.

Every call returns one envelope, `{"ok": true, "data": …}` or
`{"ok": false, "error": {"code", "message", "candidates"?}}`, never an exception, so a
host can hand the result straight back to the model. Codes (DESIGN §6):
`INVALID_PARAM`, `NOT_FOUND`, `AMBIGUOUS`, `DISABLED`, `PERMISSION_DENIED`,
`EXECUTION_ERROR`, `INTERNAL_ERROR`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .. import _errors as errors
from .._limits import NAME_ENUM_MAX
from .._limits import SEARCH_MAX_LIMIT as MAX_LIMIT
from .._model import SCOPES, Skill
from ._session import Session
from ._workspace import looks_like_path

ErrorCode = Literal[
    "INVALID_PARAM",
    "NOT_FOUND",
    "AMBIGUOUS",
    "DISABLED",
    "PERMISSION_DENIED",
    "EXECUTION_ERROR",
    "INTERNAL_ERROR",
]

ERROR_CODES: Mapping[type[errors.SkillpackError], ErrorCode] = {
    errors.SkillpackError: "INTERNAL_ERROR",
    errors.SkillError: "EXECUTION_ERROR",
    errors.SkillParseError: "EXECUTION_ERROR",
    errors.UsageError: "INVALID_PARAM",
    errors.SkillNotFoundError: "NOT_FOUND",
    errors.AmbiguousSkillError: "AMBIGUOUS",
    errors.SkillDisabledError: "DISABLED",
    errors.SkillPermissionError: "PERMISSION_DENIED",
    errors.SkillIOError: "EXECUTION_ERROR",
}

TOOL_NAMES = ("skill_search", "skill_load", "use_skill", "skill_read_file")


class SubagentRunner(Protocol):
    """The host's way to run a skill in a forked context (`context: fork`)."""

    def run(self, *, skill: Skill, prompt: str, agent: str | None, model: str | None) -> Any:
        """Start (or run) a subagent on `prompt`; return a task id or the final result.

        Whatever is returned goes back to the model as `data.result` (a string or a
        JSON-able value).
        """
        ...


class ToolCallError(errors.SkillpackError):
    """A tool call that fails with a specific envelope code."""

    def __init__(
        self, code: ErrorCode, message: str, *, candidates: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.candidates = candidates


def error_code_for(exc: BaseException) -> ErrorCode:
    if isinstance(exc, ToolCallError):
        return exc.code
    for cls in type(exc).__mro__:
        code = ERROR_CODES.get(cls)
        if code is not None:
            return code
    return "INTERNAL_ERROR"


def ok(data: Any) -> dict[str, Any]:
    return {"ok": True, "data": data}


def failure(exc: BaseException) -> dict[str, Any]:
    error: dict[str, Any] = {"code": error_code_for(exc), "message": str(exc)}
    candidates = getattr(exc, "candidates", ()) or getattr(exc, "suggestions", ())
    if candidates:
        error["candidates"] = list(candidates)
    return {"ok": False, "error": error}


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDefinition:
    """A tool as a JSON schema, convertible to each provider's format."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def openai_chat(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }

    def openai_responses(self) -> dict[str, Any]:
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }

    def anthropic(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": dict(self.parameters),
        }

    def mcp(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": dict(self.parameters),
        }


ToolFormat = Literal["openai", "openai-responses", "anthropic", "mcp"]


def _string(description: str, enum: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description}
    if enum:
        schema["enum"] = enum
    return schema


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


class SkillTools:
    """The model-facing tools over one `Session`. Thread-safe."""

    def __init__(
        self,
        session: Session,
        *,
        runner: SubagentRunner | None = None,
        search_connection: Any = None,
        create: bool = False,
    ) -> None:
        """Create the tool set.

        Args:
            session: The session whose catalog, permissions and state the tools use.
            runner: Runs `context: fork` skills; without one they run inline.
            search_connection: An open `sqlite3.Connection` for the search index
                (default: the persistent index file, or memory when it cannot open).
            create: Also offer `skill_create`, so the model can write skills (each
                call still asks the host: permission action `create`).
        """
        self.session = session
        self.runner = runner
        self.create = create
        self._search_connection = search_connection
        self._search: Any = None
        self._lock = threading.RLock()

    # -- definitions ------------------------------------------------------------

    def definitions(self) -> tuple[ToolDefinition, ...]:
        names = sorted({s.name for s in self.session.model_skills()})
        config = self.session.config
        most = min(config.search_max_limit, MAX_LIMIT)
        default = min(config.search_default_limit, most)
        enum = names if 0 < len(names) <= NAME_ENUM_MAX else None
        skill_hint = "Skill name, qualified id (`plugin:name`), or SKILL.md path."
        return (
            ToolDefinition(
                name="skill_search",
                description=(
                    "Find skills relevant to a task when the catalog in the prompt does not "
                    "list one that fits. Returns ranked candidates with reasons, each a "
                    "`strong` or `weak` match; without a strong match, no skill fits."
                ),
                parameters=_object(
                    {
                        "query": _string("What the task is about, in a few words."),
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": most,
                            "description": f"How many results (default {default}).",
                        },
                        "scope": _string("Only skills from this scope.", list(SCOPES)),
                    },
                    ["query"],
                ),
            ),
            ToolDefinition(
                name="skill_load",
                description=(
                    "Load a skill's full instructions before doing a task it covers. "
                    "Give `name` or `path` (path wins)."
                ),
                parameters=_object(
                    {
                        "name": _string(skill_hint, enum),
                        "path": _string("Absolute path of the skill's SKILL.md."),
                        "args": _string("Arguments for the skill, as a user would type them."),
                    },
                    [],
                ),
            ),
            ToolDefinition(
                name="use_skill",
                description=(
                    "Run a skill on a task: inline skills return their instructions, "
                    "fork skills run in a subagent and return its result."
                ),
                parameters=_object(
                    {
                        "skill": _string(skill_hint, enum),
                        "args": _string("The task or arguments for the skill."),
                    },
                    ["skill"],
                ),
            ),
            ToolDefinition(
                name="skill_read_file",
                description=(
                    "Read one file bundled with a loaded skill (for example "
                    "`references/api.md`), by path relative to the skill's folder."
                ),
                parameters=_object(
                    {
                        "skill": _string(skill_hint, enum),
                        "path": _string("File path relative to the skill folder."),
                    },
                    ["skill", "path"],
                ),
            ),
        ) + ((self._create_definition(),) if self.create else ())

    def _create_definition(self) -> ToolDefinition:
        return ToolDefinition(
            name="skill_create",
            description=(
                "Save a reusable skill (instructions for a recurring task) for later "
                "sessions. The host approves each write. To change an existing skill, "
                "pass the `digest` that skill_load returned for it."
            ),
            parameters=_object(
                {
                    "name": _string("Lowercase words joined by '-', e.g. 'project-conventions'."),
                    "description": _string("What the skill does and when to use it."),
                    "body": _string("The Markdown instructions."),
                    "scope": _string(
                        "Where to save it: 'user' (all projects) or 'project'.",
                        ["user", "project"],
                    ),
                    "digest": _string("Digest of the version being replaced (from skill_load)."),
                    "frontmatter": {
                        "type": "object",
                        "description": "Optional extra fields, e.g. {\"user-invocable\": false}.",
                    },
                },
                ["name", "description", "body"],
            ),
        )

    def definitions_for(self, fmt: ToolFormat) -> list[dict[str, Any]]:
        """Tool definitions in one provider's format."""
        convert: dict[str, Callable[[ToolDefinition], dict[str, Any]]] = {
            "openai": ToolDefinition.openai_chat,
            "openai-responses": ToolDefinition.openai_responses,
            "anthropic": ToolDefinition.anthropic,
            "mcp": ToolDefinition.mcp,
        }
        if fmt not in convert:
            raise errors.UsageError(
                f"Unknown tool format {fmt!r}; use one of {', '.join(sorted(convert))}."
            )
        return [convert[fmt](d) for d in self.definitions()]

    # -- dispatch ---------------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Run tool `name` with JSON `arguments`; always returns an envelope."""
        handlers: dict[str, Callable[[Mapping[str, Any]], Any]] = {
            "skill_search": self._search_tool,
            "skill_load": self._load_tool,
            "use_skill": self._use_tool,
            "skill_read_file": self._read_file_tool,
        }
        if self.create:
            handlers["skill_create"] = self._create_tool
        handler = handlers.get(name)
        self.session.ensure_fresh()
        try:
            self.session.require_skills_enabled()
            if handler is None:
                raise ToolCallError(
                    "INVALID_PARAM",
                    f"Unknown tool {name!r}; skillpack provides {', '.join(TOOL_NAMES)}.",
                )
            if arguments is None:
                arguments = {}
            if not isinstance(arguments, Mapping):
                raise ToolCallError(
                    "INVALID_PARAM", f"Arguments of {name} must be a JSON object."
                )
            return ok(handler(arguments))
        except errors.SkillpackError as exc:
            return failure(exc)
        except Exception as exc:  # noqa: BLE001 - the envelope must never raise
            return failure(ToolCallError("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}"))

    # -- the tools --------------------------------------------------------------

    def skill_search(
        self, query: str, *, limit: int | None = None, scope: str | None = None
    ) -> dict[str, Any]:
        return self.call("skill_search", {"query": query, "limit": limit, "scope": scope})

    def skill_load(
        self, *, name: str | None = None, path: str | None = None, args: str | None = None
    ) -> dict[str, Any]:
        return self.call("skill_load", {"name": name, "path": path, "args": args})

    def use_skill(self, skill: str, args: str | None = None) -> dict[str, Any]:
        return self.call("use_skill", {"skill": skill, "args": args})

    def skill_read_file(self, skill: str, path: str) -> dict[str, Any]:
        return self.call("skill_read_file", {"skill": skill, "path": path})

    def _searcher(self) -> Any:
        with self._lock:
            if self._search is None:
                from ..index._search import SkillSearch

                conn = self._search_connection
                if conn is None:
                    conn = _open_search_connection()
                reader = self.session.reader
                # Readers that can read just the head of a body make index builds cheaper.
                read_head = getattr(reader, "read_body_head", None)
                self._search = SkillSearch(conn, read_body=reader.read_body, read_head=read_head)
            return self._search

    def _search_tool(self, args: Mapping[str, Any]) -> Any:
        # `SkillSearch.search` checks limit and scope (UsageError → INVALID_PARAM)
        # before it touches the index.
        query = _required_str(args, "query")
        limit = args.get("limit")
        scope = _optional_str(args, "scope")
        session = self.session
        config = session.config
        most = min(config.search_max_limit, MAX_LIMIT)
        if limit is None:
            limit = min(config.search_default_limit, most)
        elif isinstance(limit, int) and not isinstance(limit, bool) and limit > most:
            raise ToolCallError(
                "INVALID_PARAM",
                f"`limit` must be at most {most} (the configured `[search] max_limit`).",
            )
        searcher = self._searcher()
        with self._lock:  # one sqlite connection: one query at a time
            results = searcher.search(
                session.catalog,
                query,
                limit=limit,
                scope=scope,
                is_visible=lambda s: session.is_visible(s) and session.is_enabled(s),
            )
        return {"results": [r.to_dict() for r in results]}

    def _resolve(self, ref: str) -> Skill:
        if looks_like_path(ref):
            return self.session.find(path=ref, invoker="model")
        return self.session.find(name=ref, invoker="model")

    def _load_tool(self, args: Mapping[str, Any]) -> Any:
        name = _optional_str(args, "name")
        path = _optional_str(args, "path")
        if not name and not path:
            raise ToolCallError("INVALID_PARAM", "skill_load needs `name` or `path`.")
        skill = self.session.find(name=name or None, path=path or None, invoker="model")
        injection = self.session.inject(skill, args=_optional_str(args, "args") or "")
        data = _injection_data(injection)
        if self.create:
            data["digest"] = self.session.digest(skill)
        return data

    def _use_tool(self, args: Mapping[str, Any]) -> Any:
        ref = _required_str(args, "skill")
        task = _optional_str(args, "args") or ""
        skill = self._resolve(ref)
        if skill.context == "fork" and self.runner is not None:
            return self._fork(skill, task)
        injection = self._inject_checked(skill, task)
        data = _injection_data(injection)
        data["context"] = "inline"
        return data

    def _read_file_tool(self, args: Mapping[str, Any]) -> Any:
        ref = _required_str(args, "skill")
        relpath = _required_str(args, "path")
        skill = self._resolve(ref)
        self.session.permissions.require(skill, "read_file")
        content = self.session.reader.read_file(skill, relpath)
        return {"skill": skill.name, "path": relpath, "content": content}

    def _create_tool(self, args: Mapping[str, Any]) -> Any:
        scope = _optional_str(args, "scope") or "user"
        if scope not in ("user", "project"):
            raise ToolCallError("INVALID_PARAM", "`scope` must be 'user' or 'project'.")
        frontmatter = args.get("frontmatter")
        if frontmatter is not None and not isinstance(frontmatter, Mapping):
            raise ToolCallError("INVALID_PARAM", "`frontmatter` must be a JSON object.")
        created = self.session.create_skill(
            name=_required_str(args, "name"),
            description=_required_str(args, "description"),
            body=_required_str(args, "body"),
            scope="project" if scope == "project" else "user",
            frontmatter=frontmatter,
            digest=_optional_str(args, "digest"),
        )
        return created.to_dict()

    # -- invocation stack -------------------------------------------------------

    def _inject_checked(self, skill: Skill, args: str) -> Any:
        self.session.push_invocation(skill)
        return self.session.inject(skill, args=args)

    def _fork(self, skill: Skill, task: str) -> dict[str, Any]:
        assert self.runner is not None
        self.session.permissions.require(skill, "fork")
        self.session.push_invocation(skill)
        try:
            prompt = self.session.render_body(skill, args=task).strip()
            try:
                result = self.runner.run(
                    skill=skill, prompt=prompt, agent=skill.agent, model=skill.model
                )
            except errors.SkillpackError:
                raise
            except Exception as exc:
                raise ToolCallError(
                    "EXECUTION_ERROR",
                    f"The subagent running skill '{skill.name}' failed: "
                    f"{type(exc).__name__}: {exc}",
                ) from exc
        finally:
            self.session.pop_invocation(skill)
        return {
            "name": skill.name,
            "qualified_name": skill.qualified_name,
            "path": skill.path,
            "context": "fork",
            "result": result,
        }


def _injection_data(injection: Any) -> dict[str, Any]:
    skill: Skill = injection.skill
    return {
        "name": skill.name,
        "qualified_name": skill.qualified_name,
        "path": skill.path,
        "content": injection.text,
        "already_loaded": injection.reminder,
        "missing_dependencies": list(injection.missing_dependencies),
    }


def _required_str(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ToolCallError("INVALID_PARAM", f"`{key}` is required and must be a non-empty string.")
    return value


def _optional_str(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolCallError("INVALID_PARAM", f"`{key}` must be a string.")
    return value


def _open_search_connection() -> Any:
    import sqlite3

    from ..index._cache import connect, index_path

    try:
        conn = connect(index_path())
    except Exception:  # noqa: BLE001 - fall back to memory rather than fail a search
        conn = sqlite3.connect(":memory:", check_same_thread=False)
    return conn
