"""The MCP server: one live `Session` served to any MCP client (official `mcp` SDK).

A thin adapter. Tools are `SkillTools` (the same definitions and envelopes as the
library); resources, prompts and the skills extension (`skills/list`, `skills/get`,
`resources/directory/read`) are read from a `ServedCatalog` (`_served.py`) built
once per catalog. Every handler runs its synchronous work on a worker thread and
maps errors in one place (`_errors.py`); a failing request never stops the server.

Each client connection is one conversation: it gets its own `Session` over the shared
catalog (so reload suppression and the invocation chain are per client) and its own
`SkillTools`, kept in the connection's state. Every conversation searches through the
server's one `SkillSearch` (one index connection, whatever the number of clients).
When the live catalog changes, every connection is sent
`notifications/{tools,resources,prompts}/list_changed`.

Over HTTP with grants (`[[auth.grant]]`), a request is served through the grant its
token opens (`_auth.caller_of`): its conversation, and the served view read by
resources, prompts and the skills extension, are of a session restricted to that
grant (`Session(grant=...)`), kept per grant (`runtime._granted`), so that every
view agrees and a hidden skill answers as a missing one. Each such request is one
audit line (`_auth.audit`).
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import shlex
import threading
import typing
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from .. import _errors as errors
from .._auth import audit
from .._model import SKILL_FILE, Skill
from .._version import __version__
from ..render._catalog import CatalogMode
from ..runtime._granted import Granted
from ..runtime._index_search import new_search
from ..runtime._noted import NOTE_PATHS_TOOL, call_note_paths, note_paths_definition
from ..runtime._readers import SkillContent
from ..runtime._session import Session
from ..runtime._tools import SkillTools
from ..select._grants import SkillGrant
from ._auth import caller_of
from ._errors import internal_error, to_mcp_error
from ._pages import (
    CACHE_FIELDS,
    INSTRUCTIONS,
    LOGGER_NAME,
    META_LEFT_OUT,
    PROBLEMS_URI,
    SKILLS_EXTENSION,
    Pages,
    Told,
    left_out_news,
    meta,
)
from ._pages import META_VERSION as META_VERSION
from ._pages import decode_cursor as _decode_cursor
from ._pages import encode_cursor as _encode_cursor
from ._served import ServedCatalog

logger = logging.getLogger("skillpack.mcp")

PAGE_RESOURCES: Final = 500
PAGE_PROMPTS: Final = 200
PAGE_CHILDREN: Final = 500
T = TypeVar("T")


class ListSkillsParams(types.PaginatedRequestParams):
    """`skills/list` params: an optional cursor."""


class GetSkillParams(types.RequestParams):
    """`skills/get` params: the SKILL.md URI."""

    uri: str


class ReadDirectoryParams(types.PaginatedRequestParams):
    """`resources/directory/read` params: a directory URI and an optional cursor."""

    uri: str


@dataclass(kw_only=True, eq=False)
class Conversation:
    """One client connection's session and tools over the shared catalog."""

    session: Session
    tools: SkillTools
    grant: SkillGrant | None = None


@dataclass(kw_only=True, eq=False)
class _Hub:
    """The connections of one running transport, and the flag that wakes its notifier.

    A `threading.Event`, so the catalog's subscriber sets it from any thread without
    waiting for the event loop (a refresh may run on a thread the loop waits for).
    """

    changed: threading.Event = field(default_factory=threading.Event)
    connections: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)


_CONVERSATION: Final = "skillpack.conversation"
_NOTIFIER: Final = "skillpack.notifier"
_LOGGED: Final = "skillpack.logged"
_LOG_LEVEL: Final = "skillpack.log-level"
_GRANT: Final = "skillpack.grant"
"""Keys in a connection's `state`: its conversation, a session to notify it through,
what it was last told is left out (so a log message goes out only on a change), the
least severe level it asked log messages at (`logging/setLevel`), and the grant its
last request was served through."""
_LOG_LEVELS: Final = typing.get_args(types.LoggingLevel)
"""The spec's log levels, least severe first."""


def _connection(session: ServerSession) -> Any:
    """The client connection behind a request's session (one per client; the SDK makes
    a `ServerSession` per request). Its `state` lives as long as the connection."""
    return getattr(session, "_connection", session)


def _state(connection: Any) -> dict[str, Any]:
    state = getattr(connection, "state", None)
    if not isinstance(state, dict):
        state = {}
        connection.state = state
    return state


class SkillServer:
    """The `skillpack mcp` server over one `Session` (ideally `refresh="watch"`)."""

    def __init__(
        self,
        session: Session,
        *,
        cwd: str | None = None,
        offload: bool = True,
        catalog_chars: int | None = None,
        catalog_instructions: bool = False,
        catalog_mode: CatalogMode | None = None,
        _pages: Pages | None = None,
        _told: Told | None = None,
    ) -> None:
        """Args:
        session: The live session whose catalog, config and reader are served.
        cwd: Base folder for relative skill links, per conversation.
        offload: Run each request's work on a worker thread, so a slow one (a first
            search builds the index) does not hold up other clients: what HTTP
            wants. Over stdio there is one client, and the two thread switches per
            call cost more than most calls take: `run_stdio` turns it off.
        catalog_chars: Budget in characters of the catalog (skill names and
            descriptions) listed in `skill_load`'s description, where every client
            shows it to the model; past it the catalog is shortened and says so.
            None is the session's budget (`[budget] chars`, the environment), 0
            lists nothing.
        catalog_instructions: Also put the catalog, within the same budget, in the
            server's `instructions` (for clients that pass those to the model).
        catalog_mode: `auto`, `full` or `deferred` (`Session.render_catalog`); None
            is the config's `[catalog] mode`.
        _pages: The served view and pages of `session` already built (the stdio
            front's, `_front`); a new `Pages(session)` when None. Private: how the
            front hands its work over, not a host's option.
        _told: What the first client connection was already told is left out (by
            the front, in its log message): not told again.

        Raises:
            UsageError: the session's reader cannot serve bytes, or the catalog's
                budget is not a number of characters.
        """
        self.pages = _pages if _pages is not None else Pages(session)
        if self.pages.session is not session:
            raise errors.UsageError(
                "The pages given to SkillServer are of another session; build them with "
                "Pages(session) for the session served."
            )
        self.pages.catalog_chars = catalog_chars
        self.pages.catalog_instructions = catalog_instructions
        self.pages.catalog_mode = catalog_mode
        self.session = session
        self._reader: SkillContent = self.pages.reader
        self._cwd = cwd
        self.offload = offload
        self.told_first = _told
        """What the first connection was told is left out (see `_told`)."""
        self._lock = threading.Lock()
        self._granted: Granted[Pages] = Granted(
            session,
            build=lambda granted: Pages(granted, catalog_chars=catalog_chars),
            session_of=lambda pages: pages.session,
        )
        self._hubs: list[_Hub] = []
        self._search: Any = None
        self.catalog_chars = catalog_chars
        self.catalog_instructions = catalog_instructions
        self.catalog_mode = catalog_mode
        # A bad budget (negative, or a `SKILLS_PROMPT_CHAR_BUDGET` that is no number)
        # is refused here, before a client connects, not by every tools/list.
        session.render_catalog(
            budget_chars=catalog_chars, include_location=False, mode=catalog_mode
        )
        self.server = self._build()

    # -- state ------------------------------------------------------------------

    def view(self, grant: SkillGrant | None = None) -> ServedCatalog:
        """The served view of the session's current catalog (`Pages.view`), as `grant`
        may see it."""
        return self._pages_for(grant).view()

    def _pages_for(self, grant: SkillGrant | None) -> Pages:
        """The pages of the session restricted to `grant` (the server's own: None),
        kept per grant and moved onto the current catalog and config."""
        if grant is None:
            return self.pages
        return self._granted.get(grant, cwd=self._cwd or self.session.cwd)

    def prepare(self) -> threading.Thread:
        """Build the served view on a thread of its own, so that it is ready (or under
        way) when the first client asks: started as the server starts listening."""
        thread = threading.Thread(target=self._prepare, name="skillpack-mcp-view", daemon=True)
        thread.start()
        return thread

    def _prepare(self) -> None:
        try:
            self.view()
        except Exception:  # noqa: BLE001 - the first request builds it again and reports
            logger.debug("could not build the served view ahead", exc_info=True)

    def instructions(self) -> str:
        """The `instructions` a client gets when it connects (`Pages.instructions`)."""
        return self.pages.instructions()

    def conversation(
        self, request_session: ServerSession, grant: SkillGrant | None = None
    ) -> Conversation:
        """The conversation of a request's client connection: created on its first
        request (and again when the config or the request's grant changed), moved
        onto the current catalog whenever it changed."""
        catalog, config = self.session.catalog, self.session.config
        state = _state(_connection(request_session))
        with self._lock:
            found = state.get(_CONVERSATION)
            if (
                not isinstance(found, Conversation)
                or found.session.config is not config
                or found.grant != grant
            ):
                session = self.session.conversation(cwd=self._cwd or self.session.cwd, grant=grant)
                if self._search is None:
                    self._search = new_search(self.session.reader)
                found = Conversation(
                    session=session, tools=SkillTools(session, search=self._search), grant=grant
                )
                state[_CONVERSATION] = found
        if found.session.catalog is not catalog:
            found.session.refresh(catalog)
        return found

    def close(self) -> None:
        """Close the shared index connection (the server has stopped)."""
        with self._lock:
            search, self._search = self._search, None
        if search is not None:
            search.close()

    def catalog_changed(self, _change: object = None) -> None:
        """Tell every connected client that tools, resources and prompts changed.

        The live catalog's subscriber: it runs on any thread and never waits.
        """
        for hub in list(self._hubs):
            hub.changed.set()

    async def _run(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)`: on a worker thread when offloading, else right here."""
        if self.offload:
            return await anyio.to_thread.run_sync(work, *args)
        return work(*args)

    # -- the SDK server ---------------------------------------------------------

    def _build(self) -> Server[Any]:
        server = _Server(
            "skillpack",
            version=__version__,
            instructions=INSTRUCTIONS,
            instructions_of=self.instructions,
            lifespan=self._lifespan,
            on_list_tools=self._guard(self._list_tools),
            on_call_tool=self._guard(self._call_tool),
            on_list_resources=self._guard(self._list_resources),
            on_list_resource_templates=self._guard(self._list_templates),
            on_read_resource=self._guard(self._read_resource),
            on_list_prompts=self._guard(self._list_prompts),
            on_get_prompt=self._guard(self._get_prompt),
        )
        server.add_request_handler("skills/list", ListSkillsParams, self._guard(self._skills_list))
        server.add_request_handler("skills/get", GetSkillParams, self._guard(self._skills_get))
        server.add_request_handler(
            "resources/directory/read", ReadDirectoryParams, self._guard(self._read_directory)
        )
        server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._initialized
        )
        # The handshake era's `logging/setLevel` (a client that sees the `logging`
        # capability may send it); registered here rather than through the constructor's
        # deprecated `on_set_logging_level`, which warns on every build.
        server.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self._guard(self._set_level)
        )
        server.extensions[SKILLS_EXTENSION] = {"directoryRead": True}
        # Only ours: the SDK's default OpenTelemetry middleware (a span per message, a
        # no-op without an exporter) is dropped, as its docs allow, to keep calls cheap.
        server.middleware[:] = [_advertise_extensions(server)]
        return server

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[_Hub]:
        hub = _Hub()
        self._hubs.append(hub)
        unsubscribe = self.session.subscribe(self.catalog_changed)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._notify_loop, hub)
                try:
                    yield hub
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            unsubscribe()
            self._hubs.remove(hub)
            hub.changed.set()  # lets the notifier's waiting thread go

    async def _notify_loop(self, hub: _Hub) -> None:
        waiter = anyio.CapacityLimiter(1)  # its own thread: never one a handler needs
        while True:
            await anyio.to_thread.run_sync(hub.changed.wait, abandon_on_cancel=True, limiter=waiter)
            hub.changed.clear()
            for connection in list(hub.connections):
                notifier = _state(connection).get(_NOTIFIER)
                if notifier is None:
                    continue
                for send in (
                    notifier.send_tool_list_changed,
                    notifier.send_resource_list_changed,
                    notifier.send_prompt_list_changed,
                    functools.partial(self._log_left_out, connection),
                ):
                    try:
                        await send()
                    except Exception:  # noqa: BLE001 - a gone client must not stop the rest
                        logger.debug("could not notify a client", exc_info=True)
                        break

    async def _initialized(self, ctx: ServerRequestContext[Any], _params: Any) -> None:
        self._track(ctx)
        try:
            await self._log_left_out(_connection(ctx.session))
        except Exception:  # noqa: BLE001 - a log message never stops the server
            logger.debug("could not tell a client what is left out", exc_info=True)

    async def _log_left_out(self, connection: Any) -> None:
        """Send the connection a `notifications/message` (warning) naming what is left
        out, when that differs from what it was last told. Clients of the handshake
        era only: the modern protocol has no unrequested log messages (its clients
        see `_meta` of `skills/list` and the problems resource)."""
        from mcp.server.connection import allowed_log_levels

        state = _state(connection)
        notifier = state.get(_NOTIFIER)
        version = getattr(connection, "protocol_version", None)
        if notifier is None or not isinstance(version, str):
            return
        if "warning" not in allowed_log_levels(version, None):
            return
        view = await self._run(self.view, state.get(_GRANT))
        # From here to the state's update nothing awaits: two callers (a page and the
        # notifier) must not both find the same news, and the level is the one set
        # when the message goes (a `logging/setLevel` may come while the view builds).
        wanted = state.get(_LOG_LEVEL, _LOG_LEVELS[0])
        if _LOG_LEVELS.index("warning") < _LOG_LEVELS.index(wanted):
            return  # the client asked for more severe messages only
        told = state.get(_LOGGED, self.told_first)
        self.told_first = None  # the front spoke to the first connection only
        now, data = left_out_news(view, told)
        state[_LOGGED] = now
        if data is None:
            return
        await notifier.send_notification(
            types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(
                    level="warning", logger=LOGGER_NAME, data=data
                )
            )
        )

    async def _set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """`logging/setLevel`: the least severe level this client wants log messages at
        (skillpack sends one kind: a warning naming what is left out)."""
        _state(_connection(ctx.session))[_LOG_LEVEL] = params.level
        return types.EmptyResult()

    def _track(self, ctx: ServerRequestContext[Any]) -> None:
        """Remember the request's connection, to notify it of catalog changes."""
        hub = ctx.lifespan_context
        if isinstance(hub, _Hub):
            connection = _connection(ctx.session)
            state = _state(connection)
            if _NOTIFIER not in state:
                # Notifications go out on the connection's own channel, whichever
                # request's session sends them.
                state[_NOTIFIER] = ctx.session
                hub.connections.add(connection)

    def _guard(
        self, handler: Callable[[ServerRequestContext[Any], Any], Awaitable[T]]
    ) -> Callable[[ServerRequestContext[Any], Any], Awaitable[T]]:
        """Every handler's one error path: skillpack errors and surprises become
        JSON-RPC errors, and the server keeps serving."""

        async def guarded(ctx: ServerRequestContext[Any], params: Any) -> T:
            self._track(ctx)
            caller = caller_of(ctx.request)
            if caller is not None:
                _state(_connection(ctx.session))[_GRANT] = caller.grant
                audit("mcp", caller.principal, method=ctx.method, **_audited(params))
            try:
                return await handler(ctx, params)
            except MCPError:
                raise
            except errors.SkillpackError as exc:
                raise to_mcp_error(exc) from None
            except Exception as exc:
                logger.exception("%s failed", ctx.method)
                raise internal_error(exc) from None

        return guarded

    # -- tools ------------------------------------------------------------------

    async def _list_tools(self, ctx: ServerRequestContext[Any], _params: Any) -> Any:
        conversation = self.conversation(ctx.session, _grant(ctx))

        def definitions() -> list[dict[str, Any]]:
            # The catalog in skill_load's description follows the live catalog: a
            # change sends tools/list_changed, and the client lists tools again.
            listed = conversation.tools.definitions_for(
                "mcp",
                catalog=True,
                catalog_chars=self.catalog_chars,
                catalog_mode=self.catalog_mode,
            )
            return [*listed, note_paths_definition()]

        listed = await self._run(definitions)
        return types.ListToolsResult(tools=[_tool(d) for d in listed])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> Any:
        conversation = self.conversation(ctx.session, _grant(ctx))
        if params.name == NOTE_PATHS_TOOL:
            envelope = await self._run(
                functools.partial(call_note_paths, opened_from=self.session),
                conversation.session,
                params.arguments,
            )
            if envelope["ok"] and envelope["data"]["opened"]:
                self.catalog_changed()  # skill_load's catalog grew: clients list tools again
        else:
            envelope = await self._run(conversation.tools.call, params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(envelope))],
            structured_content=envelope,
            is_error=not envelope["ok"],
        )

    # -- resources ----------------------------------------------------------------

    async def _list_resources(self, ctx: ServerRequestContext[Any], params: Any) -> Any:
        return await self._run(self._resources_page, _cursor(params), _grant(ctx))

    def _resources_page(self, start: int, grant: SkillGrant | None = None) -> Any:
        view = self.view(grant)
        resources: list[types.Resource] = []
        if start == 0:
            resources.append(
                types.Resource(
                    uri=PROBLEMS_URI,
                    name="problems",
                    description="What skillpack leaves out of this catalog and why, each "
                    "with its fix (JSON).",
                    mime_type="application/json",
                )
            )
        index = start
        while index < len(view.skills) and len(resources) < PAGE_RESOURCES:
            skill = view.skills[index]
            index += 1
            for uri, item in view.own_files(skill):
                resources.append(_resource(skill, uri, item))
        return types.ListResourcesResult(
            resources=resources,
            next_cursor=_encode_cursor(index) if index < len(view.skills) else None,
        )

    async def _list_templates(self, _ctx: ServerRequestContext[Any], _params: Any) -> Any:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template="skill://{+skill_path}/SKILL.md",
                    name="skill",
                    description="A skill's SKILL.md, by the skill-path skills/list gives.",
                    mime_type="text/markdown",
                ),
            ]
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> Any:
        grant = _grant(ctx)
        if str(params.uri) == PROBLEMS_URI:
            pages = self._pages_for(grant)
            report = await self._run(functools.partial(pages.problems_report, check_all=True))
            return types.ReadResourceResult(
                contents=[
                    types.TextResourceContents(
                        uri=PROBLEMS_URI, mime_type="application/json", text=json.dumps(report)
                    )
                ]
            )
        found = await self._run(self.view(grant).read, str(params.uri))
        contents: types.TextResourceContents | types.BlobResourceContents
        try:
            text = found.data.decode("utf-8")
        except UnicodeDecodeError:
            blob = base64.b64encode(found.data).decode("ascii")
            contents = types.BlobResourceContents(
                uri=found.uri, mime_type=found.mime_type, blob=blob
            )
        else:
            contents = types.TextResourceContents(
                uri=found.uri, mime_type=found.mime_type, text=text
            )
        return types.ReadResourceResult(contents=[contents])

    async def _read_directory(
        self, ctx: ServerRequestContext[Any], params: ReadDirectoryParams
    ) -> dict[str, Any]:
        start = _decode_cursor(params.cursor)
        children = await self._run(self.view(_grant(ctx)).directory, params.uri)
        page = children[start : start + PAGE_CHILDREN]
        result: dict[str, Any] = {
            "resources": [
                {
                    "uri": c.uri,
                    "name": c.name,
                    "mimeType": c.mime_type,
                    **({"size": c.size} if c.size is not None else {}),
                }
                for c in page
            ]
        }
        if start + PAGE_CHILDREN < len(children):
            result["nextCursor"] = _encode_cursor(start + PAGE_CHILDREN)
        return result

    # -- prompts ----------------------------------------------------------------

    async def _list_prompts(self, ctx: ServerRequestContext[Any], params: Any) -> Any:
        start = _cursor(params)
        prompts = list(self.view(_grant(ctx)).prompts.items())
        page = prompts[start : start + PAGE_PROMPTS]
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=name,
                    description=skill.description,
                    arguments=_prompt_arguments(skill),
                )
                for name, skill in page
            ],
            next_cursor=(
                _encode_cursor(start + PAGE_PROMPTS)
                if start + PAGE_PROMPTS < len(prompts)
                else None
            ),
        )

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> Any:
        grant = _grant(ctx)
        skill = self.view(grant).prompts.get(params.name)
        if skill is None:
            raise errors.SkillNotFoundError(
                f"No prompt named {params.name!r}; prompts/list gives the skills offered."
            )
        args = _prompt_args(skill, params.arguments or {})
        session = self.conversation(ctx.session, grant).session

        def inject() -> str:
            session.skills.forget(skill)  # a prompt is always inserted whole
            return session.inject(skill, args=args).text

        text = await self._run(inject)
        return types.GetPromptResult(
            description=skill.description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    # -- the skills extension -----------------------------------------------------

    async def _skills_list(
        self, ctx: ServerRequestContext[Any], params: ListSkillsParams
    ) -> dict[str, Any]:
        page = await self._run(self.skills_page, _decode_cursor(params.cursor), _grant(ctx))
        if page["_meta"][META_LEFT_OUT]["notListable"]:
            try:  # this page found skills it cannot list: say so as it happens
                await self._log_left_out(_connection(ctx.session))
            except Exception:  # noqa: BLE001 - a log message never fails the request
                logger.debug("could not tell a client what is left out", exc_info=True)
        return page

    def skills_page(self, start: int, grant: SkillGrant | None = None) -> dict[str, Any]:
        """One `skills/list` page from the served skill at `start` (`Pages.skills_page`),
        as `grant` may see it."""
        return self._pages_for(grant).skills_page(start)

    def problems_report(
        self, *, check_all: bool = True, with_skills: bool = False
    ) -> dict[str, Any]:
        """What the server serves and leaves out (`Pages.problems_report`)."""
        return self.pages.problems_report(check_all=check_all, with_skills=with_skills)

    async def _skills_get(
        self, ctx: ServerRequestContext[Any], params: GetSkillParams
    ) -> dict[str, Any]:
        grant = _grant(ctx)

        def get() -> dict[str, Any]:
            view = self.view(grant)
            skill = view.skill_at(params.uri)
            listing = view.listing(skill)
            if listing.entry is None:
                raise errors.SkillNotFoundError(
                    f"Skill '{skill.name}' is not served through the skills extension: "
                    f"{listing.reason}. Its files are still resources; use skill_load for it."
                )
            return {"skill": listing.entry, **CACHE_FIELDS, "_meta": meta(view)}

        return await self._run(get)


class _Server(Server[Any]):
    """`listChanged: true` on every transport: the streamable-HTTP manager builds its
    initialization options without arguments, so the default must carry them.

    `instructions` are asked of `instructions_of` each time they are sent (the SDK
    reads the attribute for every `initialize` and `server/discover`), so a client
    that connects later gets the catalog as it is then.
    """

    def __init__(self, *args: Any, instructions_of: Callable[[], str], **kwargs: Any) -> None:
        self._instructions_of = instructions_of
        super().__init__(*args, **kwargs)

    @property
    def instructions(self) -> str | None:
        return self._instructions_of()

    @instructions.setter
    def instructions(self, _value: str | None) -> None:
        """The SDK's constructor sets it; the text always comes from `instructions_of`."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        changed = NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        return super().create_initialization_options(
            notification_options or changed, experimental_capabilities, extensions
        )


def _advertise_extensions(server: Server[Any]) -> Any:
    """Middleware putting `capabilities.extensions` into the `initialize` result.

    The SDK (2.3) checks a handshake-era `initialize` result against the 2025-11-25
    schema, which has no `extensions`, and drops the key; clients of that era (the
    MCP Inspector among them) then see no skills extension. The modern era's
    `server/discover` keeps it on its own.
    """

    async def advertise(ctx: ServerRequestContext[Any], call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            capabilities = result.setdefault("capabilities", {})
            capabilities.setdefault("extensions", {}).update(server.extensions)
        return result

    return advertise


def _tool(definition: dict[str, Any]) -> types.Tool:
    return types.Tool(
        name=definition["name"],
        description=definition["description"],
        input_schema=definition["inputSchema"],
        annotations=types.ToolAnnotations(
            read_only_hint=True, destructive_hint=False, open_world_hint=False
        ),
    )


def _resource(skill: Skill, uri: str, item: Any) -> types.Resource:
    from ._served import mime_type

    if item.path == SKILL_FILE:
        return types.Resource(
            uri=uri,
            name=skill.name,
            description=skill.description,
            mime_type="text/markdown",
            size=item.size,
        )
    return types.Resource(uri=uri, name=item.path, mime_type=mime_type(item.path), size=item.size)


def _prompt_arguments(skill: Skill) -> list[types.PromptArgument]:
    if skill.arguments:
        hint = f"Argument of /{skill.name}"
        if skill.argument_hint:
            hint += f" ({skill.argument_hint})"
        return [
            types.PromptArgument(name=name, description=hint, required=False)
            for name in skill.arguments
        ]
    return [
        types.PromptArgument(
            name="arguments",
            description=skill.argument_hint
            or "Arguments, as you would type them after /" + skill.name,
            required=False,
        )
    ]


def _prompt_args(skill: Skill, given: dict[str, str]) -> str:
    """The `$ARGUMENTS` text of a prompt's arguments (named ones in their order)."""
    names = list(skill.arguments) or ["arguments"]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise errors.UsageError(
            f"Prompt '{skill.name}' has no argument {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(names)}."
        )
    if not skill.arguments:
        return given.get("arguments", "")
    values = [given.get(name, "") for name in names]
    while values and not values[-1]:
        values.pop()
    return " ".join(shlex.quote(v) if v else "''" for v in values)


def _grant(ctx: ServerRequestContext[Any]) -> SkillGrant | None:
    """The grant a request is served through (None: every skill)."""
    caller = caller_of(ctx.request)
    return None if caller is None else caller.grant


def _audited(params: Any) -> dict[str, Any]:
    """What an audit line names of a request: the tool, and the skill or URI."""
    fields: dict[str, Any] = {}
    name = getattr(params, "name", None)
    arguments = getattr(params, "arguments", None)
    if isinstance(arguments, dict):  # tools/call
        fields["tool"] = name
        for key in ("name", "skill", "path"):
            if isinstance(arguments.get(key), str):
                fields["skill"] = arguments[key]
                break
        if isinstance(arguments.get("query"), str):
            fields["query"] = arguments["query"][:200]
    elif isinstance(name, str):  # prompts/get
        fields["skill"] = name
    uri = getattr(params, "uri", None)
    if uri is not None:
        fields["uri"] = str(uri)
    return fields


def _cursor(params: Any) -> int:
    return _decode_cursor(getattr(params, "cursor", None) if params is not None else None)


def run_stdio(server: SkillServer, *, prefix: bytes = b"", drop_id: str | None = None) -> None:
    """Serve over stdin/stdout until the client closes them (one client: requests are
    answered on the event loop's thread, see `SkillServer(offload=)`).

    `prefix` is read before stdin and the reply to `drop_id` is not written: the
    stdio front's hand-over (`_front`).
    """
    from ._stdio import stdio_streams

    server.offload = False
    server.prepare()

    async def main() -> None:
        async with stdio_streams(prefix, drop_id) as (read, write):
            sdk = server.server
            await sdk.run(read, write, sdk.create_initialization_options())

    anyio.run(main)
