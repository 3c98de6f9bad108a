"""The tools a model calls: `skill_search`, `skill_load`, `use_skill`, `skill_read_file`.

Every call returns one envelope, `{"ok": true, "data": …}` or
`{"ok": false, "error": {"code", "message", "candidates"?}}`, never an exception, so a
host can hand the result straight back to the model. The code is the error's own
(`SkillpackError.code`, see `_errors.ErrorCode`), the same in every surface.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .. import _errors as errors
from .. import _telemetry
from .._errors import ErrorCode as ErrorCode
from .._limits import NAME_ENUM_MAX
from .._limits import SEARCH_MAX_LIMIT as MAX_LIMIT
from .._model import Skill
from ..select._resolve import shown_ids
from ._fork import SubagentRunner, no_runner_message
from ._index_search import new_search
from ._inject import Injection
from ._session import Session, check_not_running, ensure_fresh
from ._tool_args import check_args, strict_schema, tool_schema
from ._workspace import looks_like_path

if TYPE_CHECKING:
    from ..index._search import SkillSearch
    from ..render._catalog import CatalogMode

TOOL_NAMES = ("skill_search", "skill_load", "use_skill", "skill_read_file")

__all__ = ["SkillTools", "SubagentRunner", "ToolCallError", "ToolDefinition"]


class ToolCallError(errors.SkillpackError):
    """A tool call that fails with a specific envelope code."""

    def __init__(self, code: ErrorCode, message: str, *, candidates: Sequence[str] = ()) -> None:
        super().__init__(message, candidates=candidates)
        self.code = code


def error_code_for(exc: BaseException) -> str:
    """The stable code of any exception: a skillpack error's own, else INTERNAL_ERROR."""
    return exc.code if isinstance(exc, errors.SkillpackError) else "INTERNAL_ERROR"


def ok(data: Any) -> dict[str, Any]:
    return {"ok": True, "data": data}


def failure(exc: BaseException) -> dict[str, Any]:
    error: dict[str, Any] = {"code": error_code_for(exc), "message": str(exc)}
    candidates = exc.candidates if isinstance(exc, errors.SkillpackError) else ()
    if candidates:
        error["candidates"] = list(candidates)
    return {"ok": False, "error": error}


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDefinition:
    """A tool as a JSON schema, convertible to each provider's format.

    The OpenAI formats are strict function schemas (`"strict": true`: every property
    required, optional ones nullable, no numeric bounds; see `_tool_args.
    strict_schema`); Anthropic and MCP get the plain schema, where optional
    properties are simply left out of `required`.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]

    def openai_chat(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": strict_schema(self.parameters),
                "strict": True,
            },
        }

    def openai_responses(self) -> dict[str, Any]:
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": strict_schema(self.parameters),
            "strict": True,
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


class SkillTools:
    """The model-facing tools over one `Session`. Thread-safe."""

    def __init__(
        self,
        session: Session,
        *,
        runner: SubagentRunner | None = None,
        search_connection: Any = None,
        search: SkillSearch | None = None,
        create: bool = False,
    ) -> None:
        """Create the tool set.

        Args:
            session: The session whose catalog, permissions and state the tools use.
            runner: Runs `context: fork` skills; without one such a skill is refused
                (`EXECUTION_ERROR`: no subagent runner is available), never run inline.
            search_connection: An open `sqlite3.Connection` for the search index
                (default: the persistent index file, or memory when it cannot open).
            search: A `SkillSearch` shared with other tool sets (a server's many
                conversations share one, so they hold one index connection between
                them, not one each); it takes turns itself. Overrides
                `search_connection`.
            create: Also offer `skill_create`, so the model can write skills (each
                call still asks the host: permission action `create`).
        """
        self.session = session
        self.runner = runner
        self.create = create
        self._search_connection = search_connection
        self._search: Any = search
        self._lock = threading.RLock()

    # -- definitions ------------------------------------------------------------

    def definitions(
        self,
        *,
        catalog: bool = False,
        catalog_chars: int | None = None,
        catalog_mode: CatalogMode | None = None,
    ) -> tuple[ToolDefinition, ...]:
        """The tools, their skill-id fields listing the ids the model may pass.

        The enum holds, for each skill in the model's catalog, the shortest id that
        picks exactly it (`select._resolve.shown_ids`): the bare name where that is
        unique, else the qualified id, else the SKILL.md path; it is left out past
        `NAME_ENUM_MAX` ids.

        Args:
            catalog: Also list the model's skills (names and descriptions, as
                `Session.render_catalog` writes them in Markdown, without locations)
                in `skill_load`'s description, as Claude Code's skill tool does: a
                host that shows the model nothing but tools still tells it which
                skills exist and when to use each.
            catalog_chars: That list's budget in characters (the renderer shortens,
                then drops, past it and says so); None is the session's budget
                (`[budget] chars`, `SKILLS_PROMPT_CHAR_BUDGET`), 0 lists nothing.
            catalog_mode: `auto`, `full` or `deferred` (`Session.render_catalog`);
                None is the config's `[catalog] mode`.
        """
        session = self.session
        skills = session.skills.model_skills()
        enum = None
        # One id per skill (each picks exactly its skill): past the limit there is no
        # enum, and no need to work the ids out (18 ms at 10,000 skills).
        if 0 < len(skills) <= NAME_ENUM_MAX:
            enum = sorted(shown_ids(session.catalog, skills, is_visible=session.skills.is_visible))
        limits = self._search_limits()
        descriptions = dict(_DESCRIPTIONS)
        if catalog:
            listed = session.render_catalog(
                format="markdown",
                budget_chars=catalog_chars,
                include_location=False,
                mode=catalog_mode,
            ).text
            if listed:
                descriptions["skill_load"] = f"{descriptions['skill_load']}\n\n{listed}"
        return tuple(
            ToolDefinition(
                name=tool,
                description=descriptions[tool],
                parameters=tool_schema(tool, skill_ids=enum, search_limits=limits),
            )
            for tool in self._tool_names()
        )

    def _search_limits(self) -> tuple[int, int]:
        """(most, default) results of a search: the config's `[search]` within bounds."""
        config = self.session.config
        most = min(config.search_max_limit, MAX_LIMIT)
        return most, min(config.search_default_limit, most)

    def _tool_names(self) -> tuple[str, ...]:
        return (*TOOL_NAMES, "skill_create") if self.create else TOOL_NAMES

    def definitions_for(
        self,
        fmt: ToolFormat,
        *,
        catalog: bool = False,
        catalog_chars: int | None = None,
        catalog_mode: CatalogMode | None = None,
    ) -> list[dict[str, Any]]:
        """Tool definitions in one provider's format (`catalog`, `catalog_chars`,
        `catalog_mode`: as for `definitions`)."""
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
        definitions = self.definitions(
            catalog=catalog, catalog_chars=catalog_chars, catalog_mode=catalog_mode
        )
        return [convert[fmt](d) for d in definitions]

    # -- dispatch ---------------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Run tool `name` with JSON `arguments`; always returns an envelope.

        With OpenTelemetry on (`_telemetry`), the call is an `execute_tool <name>` span.
        """
        active = _telemetry.tracer()
        if active is None:
            return self._call(name, arguments)
        with _telemetry.tool_span(active, name) as span:
            envelope = self._call(name, arguments)
            skill, digest = self._skill_used(envelope)
            _telemetry.record_outcome(span, envelope, skill=skill, digest=digest)
            return envelope

    def _skill_used(self, envelope: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """The name and digest of the skill a call's envelope loaded or read from."""
        data = envelope.get("data")
        if not isinstance(data, Mapping):
            return None, None
        name = data.get("name") if "name" in data else data.get("skill")
        if not isinstance(name, str):
            return None, None
        path = data.get("path") if "name" in data else None
        catalog = self.session.catalog
        found = catalog.at_path(path) if isinstance(path, str) else None
        if found is None:
            found = next((s for s in catalog.skills if name in (s.qualified_name, s.name)), None)
        return name, (None if found is None else self.session.skills.digest(found))

    def _call(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        handlers: dict[str, Callable[[Mapping[str, Any]], Any]] = {
            "skill_search": self._search_tool,
            "skill_load": self._load_tool,
            "use_skill": self._use_tool,
            "skill_read_file": self._read_file_tool,
        }
        if self.create:
            handlers["skill_create"] = self._create_tool
        handler = handlers.get(name)
        try:
            ensure_fresh(self.session)
            self.session.skills.require_skills_enabled()
            if handler is None:
                raise ToolCallError(
                    "INVALID_PARAM",
                    f"Unknown tool {name!r}; skillpack provides {', '.join(self._tool_names())}.",
                )
            return ok(handler(check_args(name, arguments)))
        except errors.SkillpackError as exc:
            return failure(exc)
        except Exception as exc:  # noqa: BLE001 - the envelope must never raise
            return failure(ToolCallError("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}"))

    async def acall(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """`call` for an event loop: the same envelope, the work on a worker thread.

        The loop never waits for what a call may do (discover, build the search index,
        read files, ask the host's permission callback, run a fork on the runner); the
        sync `call` is the one implementation, and is thread-safe.
        """
        import asyncio

        return await asyncio.to_thread(self.call, name, arguments)

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
                self._search = new_search(self.session.reader, self._search_connection)
            return self._search

    def _search_tool(self, args: Mapping[str, Any]) -> Any:
        session = self.session
        most, default = self._search_limits()
        limit = args.get("limit")
        if limit is None:
            limit = default
        elif isinstance(limit, int) and not isinstance(limit, bool) and limit > most:
            raise ToolCallError(
                "INVALID_PARAM",
                f"`limit` must be at most {most} (the configured `[search] max_limit`).",
            )
        searcher = self._searcher()
        with self._lock:  # one sqlite connection: one query at a time
            # The whole catalog keeps the shared index warm across grants; the
            # grant hides what it must through `is_visible`.
            results, truncated = searcher.search_page(
                session.skills.whole_catalog,
                args["query"],
                limit=limit,
                scope=args.get("scope"),
                is_visible=lambda s: session.skills.is_visible(s) and session.skills.is_enabled(s),
            )
        return {
            "results": [r.to_dict() for r in results],
            "count": len(results),
            "truncated": truncated,
        }

    def _resolve(self, ref: str) -> Skill:
        if looks_like_path(ref):
            return self.session.find(path=ref, invoker="model")
        return self.session.find(name=ref, invoker="model")

    def _load_tool(self, args: Mapping[str, Any]) -> Any:
        name, path = args.get("name", "").strip(), args.get("path", "").strip()
        if not name and not path:
            raise ToolCallError("INVALID_PARAM", "skill_load needs `name` or `path`.")
        # The path wins; a path given as `name` (the id enum may hold one) is a path.
        skill = self._resolve(path or name)
        data = _injection_data(self.session.inject(skill, args=args.get("args", "")))
        if self.create:
            data["digest"] = self.session.skills.digest(skill)
        return data

    def _use_tool(self, args: Mapping[str, Any]) -> Any:
        skill = self._resolve(args["skill"])
        task = args.get("args", "")
        if skill.context == "fork":
            return self._fork(skill, task)
        # Inline use is no call stack: only a skill whose forked run is under way
        # cannot be used again from inside that run.
        check_not_running(self.session, skill)
        data = _injection_data(self.session.inject(skill, args=task))
        data["context"] = "inline"
        return data

    def _read_file_tool(self, args: Mapping[str, Any]) -> Any:
        skill = self._resolve(args["skill"])
        relpath = args["path"]
        self.session.permissions.require(skill, "read_file")
        content = self.session.reader.read_file(skill, relpath)
        return {"skill": skill.name, "path": relpath, "content": content}

    def _create_tool(self, args: Mapping[str, Any]) -> Any:
        created = self.session.skills.create_skill(
            name=args["name"],
            description=args["description"],
            body=args["body"],
            scope="project" if args.get("scope") == "project" else "user",
            frontmatter=args.get("frontmatter"),
            digest=args.get("digest"),
        )
        return created.to_dict()

    # -- forks ------------------------------------------------------------------

    def _fork(self, skill: Skill, task: str) -> dict[str, Any]:
        if self.runner is None:
            raise ToolCallError("EXECUTION_ERROR", no_runner_message(skill))
        try:
            run = self.session.fork(skill, args=task, runner=self.runner)
        except errors.SkillpackError:
            raise
        except Exception as exc:
            raise ToolCallError(
                "EXECUTION_ERROR",
                f"The subagent running skill '{skill.name}' failed: {type(exc).__name__}: {exc}",
            ) from exc
        return {**_skill_data(skill), **run.to_dict()}


_DESCRIPTIONS: Mapping[str, str] = {
    "skill_search": (
        "Find skills relevant to a task when the catalog in the prompt does not "
        "list one that fits. Returns ranked candidates with reasons, each a "
        "`strong` or `weak` match; without a strong match, no skill fits."
    ),
    "skill_load": (
        "Load a skill's full instructions before doing a task it covers. "
        "Give `name` or `path` (path wins)."
    ),
    "use_skill": (
        "Run a skill on a task: inline skills return their instructions, "
        "fork skills run in a subagent and return its result."
    ),
    "skill_read_file": (
        "Read one file bundled with a loaded skill (for example "
        "`references/api.md`), by path relative to the skill's folder."
    ),
    "skill_create": (
        "Save a reusable skill (instructions for a recurring task) for later "
        "sessions. The host approves each write. To change an existing skill, "
        "pass the `digest` that skill_load returned for it."
    ),
}


def _skill_data(skill: Skill) -> dict[str, Any]:
    """Which skill, and where it lives."""
    return {
        "name": skill.name,
        "qualified_name": skill.qualified_name,
        "path": skill.path,
        "dir": skill.dir,
        "scope": skill.scope,
        "context": skill.context,
    }


def _injection_data(injection: Injection) -> dict[str, Any]:
    mtime_ns = injection.version[0]
    return {
        **_skill_data(injection.skill),
        "mtime_ns": mtime_ns,
        "mtime_ms": mtime_ns // 1_000_000,
        "content": injection.text,
        "already_loaded": injection.reminder,
        "missing_dependencies": list(injection.missing_dependencies),
    }
