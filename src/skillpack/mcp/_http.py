"""Streamable HTTP for `skillpack mcp --transport http`: `/mcp` behind the shared guard.

Every request passes `_httpguard.HostGuard` (Host 421, Origin 403, bearer token 401,
the same answers as `skillpack serve --transport http`); `GET /healthz` and
`GET /readyz` (`_health`) are answered after its Host and Origin checks, before any
token; then, with `[auth]`, the bearer JWT check (`_auth.McpAuth`: 401/403 with the
RFC 9728 challenge, the metadata document); a refusal closes the connection. The
connections are bounded as `_httpguard` says (a whole head within `HEADER_SECONDS`
however it is drip-fed, a whole body within `BODY_SECONDS` of it, at most `PENDING_MAX`
waiting for a head, the oldest closed first; the limit kept under the open-file
limit), and so are the client sessions (`MAX_SESSIONS`, closed after
`SESSION_IDLE_SECONDS` idle or on DELETE). A full session table does not lock new
clients out: the least recently used session with no request in flight is closed to
admit the new one (`make_room`, run inside the SDK's admission: `evict_on_admit`);
only when every session is busy is a new client refused (503). That rule, and its one
log line per episode, is `_room.SessionRoom`, which `skillpack serve` keeps too.
Running out of file handles is one log line per episode (`_httpguard.EpisodeLog`).

The SDK's own transport security (the same host and origin lists) and its request
body limit stay on behind these. A request nested deeper than `MAX_FRAME_DEPTH` is
read with its deep parts cut (`_clipped`, `clip_request`), as a stdio line is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from .._errors import UsageError
from .._health import Health, is_health_path
from .._httpguard import (
    EpisodeLog,
    HostGuard,
    PendingConnections,
    client_left,
    connection_limit,
    deadline_seconds,
    out_of_handles,
)
from .._room import SessionRoom
from ..runtime._tool_args import clip_request
from ._stdio import MAX_LINE_BYTES

if TYPE_CHECKING:
    from ._auth import McpAuth

MCP_PATH: Final = "/mcp"
MAX_SESSIONS: Final = 500
"""Client sessions open at once; a new client past it takes the place of the least
recently used idle session (`make_room`), and is refused with 503 "Too many open
sessions" only while every session has a request in flight. A session costs about
60 KB (its `Session` and tools; the index connection is shared), so 500 bound the
server near 30 MB over its start."""
MAX_SESSIONS_ENV: Final = "SKILLPACK_MCP_MAX_SESSIONS"
"""A positive integer here lowers (or raises) `MAX_SESSIONS` for one server (tests)."""
_log = logging.getLogger("skillpack.mcp")
SESSION_IDLE_SECONDS: Final = 600.0
"""A session with no request in flight and no open event stream for this long is
closed (a client that vanished without DELETE, or whose connection dropped); its id
then answers 404."""
MAX_CONNECTIONS: Final = 256
"""Open connections; more are answered 503 (lowered under a small open-file limit)."""
KEEP_ALIVE_SECONDS: Final = 5.0


def session_cap() -> int:
    """The session table's size: `MAX_SESSIONS`, or `MAX_SESSIONS_ENV` when it holds a
    positive integer.

    Raises:
        UsageError: `MAX_SESSIONS_ENV` is set to something else.
    """
    raw = os.environ.get(MAX_SESSIONS_ENV, "").strip()
    if not raw:
        return MAX_SESSIONS
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(
            f"{MAX_SESSIONS_ENV}={raw!r} is not a positive whole number of sessions; "
            f"set it to one (e.g. {MAX_SESSIONS}) or unset it."
        )
    return int(raw)


def evict_on_admit(manager: Any) -> None:
    """Have the SDK's session manager `make_room` each time it admits a new session:
    inside its admission (under its lock, with nothing awaited in between), so two
    clients arriving together cannot both find the one place made. A manager of
    another shape is left as it is (a full table then refuses with 503)."""
    admit = getattr(manager, "_admit_session", None)
    cap = getattr(manager, "max_sessions", None)
    if admit is None or not isinstance(cap, int):
        return
    room = session_room(cap)

    def admit_making_room(*args: Any, **kwargs: Any) -> Any:
        make_room(manager, room)
        return admit(*args, **kwargs)

    manager._admit_session = admit_making_room


def session_room(cap: int) -> SessionRoom:
    """The rule of this server's full session table (`_room`), in its words."""
    return SessionRoom(
        cap=cap,
        log=_log,
        evicting=(
            f"skillpack mcp: {cap} client sessions are open (the most it keeps); each new "
            "client takes the place of the least recently used idle session, whose id then "
            "answers 404. Clients that end their sessions with DELETE avoid this."
        ),
        refusing=(
            f"skillpack mcp: {cap} client sessions are open, each with a request in flight; "
            "new ones are refused with 503 until one is idle or ends."
        ),
    )


def make_room(manager: Any, room: SessionRoom) -> str | None:
    """When the SDK's session table (`manager`, its `StreamableHTTPSessionManager`) is
    full, close the session `room` chooses, the least recently used one with no
    request in flight (an open event stream counts as one), and return its id; None
    when there is room, or when every session is busy (the SDK then refuses the new
    client with 503).

    The session leaves the table at once, so the new client is admitted; its server
    task ends as an idle timeout would end it (its id then answers 404). Uses the
    SDK's table and each transport's idle deadline (mcp 2.x, which the extra pins);
    any other shape leaves admission to the SDK as it is.
    """
    try:
        table: dict[str, Any] = manager._server_instances
        # The idle deadline is the end of the last request plus the idle timeout:
        # the earliest is the session used least recently.
        session_id = room.choose(
            table, last_used=lambda transport: transport.idle_scope.deadline, busy=_busy
        )
        if session_id is None:
            return None
        transport = table.pop(session_id)
        manager._session_owners.pop(session_id, None)
        transport.idle_scope.cancel()
    except (AttributeError, TypeError):
        return None
    return session_id


def _busy(transport: Any) -> bool:
    """A request (or an event stream) in flight, or no idle deadline to end it by."""
    scope = transport.idle_scope
    return bool(transport._requests_in_flight) or scope is None or scope.cancel_called


class GuardedApp:
    """ASGI wrapper: the shared Host, Origin and token checks (module docstring), then
    the bearer JWT check when the server has one (`_auth.McpAuth`); a request body is
    read the way a stdio line is (`_clipped`); with `health`, `GET /healthz` and
    `/readyz` after the Host and Origin checks alone."""

    def __init__(
        self,
        app: Any,
        *,
        guard: HostGuard,
        auth: McpAuth | None = None,
        health: Health | None = None,
    ) -> None:
        self.app = app
        self.guard = guard
        self.auth = auth
        self.health = health

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        if self.health is not None and is_health_path(scope.get("path", "")):
            await self._health(scope, headers, send)
            return
        refused = self.guard.check(
            headers.get(b"host"), headers.get(b"origin"), headers.get(b"authorization")
        )
        if refused is not None:
            await _refuse(send, *refused)
            return
        if self.auth is not None and not await self.auth.admit(scope, headers, send):
            return
        if scope.get("method") == "POST":
            receive = _clipped(receive)
        await self.app(scope, receive, send)

    async def _health(self, scope: Any, headers: dict[bytes, str], send: Any) -> None:
        assert self.health is not None
        refused = self.guard.place_check(headers.get(b"host"), headers.get(b"origin"))
        if refused is not None:
            await _refuse(send, *refused)
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await _refuse(send, 405, "Health checks are GET requests.")
            return
        status, body = await asyncio.to_thread(self.health.answer, scope["path"])
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _clipped(receive: Any) -> Any:
    """`receive` whose request body, once whole (within `MAX_LINE_BYTES`), comes as one
    message, a deep request's nesting cut (`clip_request`), as a stdio line is: the SDK's parser
    drops a request nested past 200 levels, where the tool's own check should answer.
    A longer body, and everything after the body, passes as it comes."""
    pending: list[Any] = []
    read = False

    async def clipped() -> Any:
        nonlocal read
        if pending:
            return pending.pop(0)
        if read:
            return await receive()
        read = True
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                if not body:
                    return message
                pending.append(message)
                return {"type": "http.request", "body": bytes(body), "more_body": True}
            body += message.get("body", b"")
            if not message.get("more_body", False):
                return {"type": "http.request", "body": clip_request(bytes(body))}
            if len(body) > MAX_LINE_BYTES:
                return {"type": "http.request", "body": bytes(body), "more_body": True}

    return clipped


async def _refuse(send: Any, status: int, message: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": message.encode()})


def build_app(
    sdk_server: Any,
    *,
    host: str,
    token: str | None,
    port: int | None = None,
    max_sessions: int | None = None,
    auth: McpAuth | None = None,
    allowed_hosts: Sequence[str] = (),
    health: Health | None = None,
    stateless: bool = False,
) -> Any:
    """The ASGI app: the SDK's streamable HTTP at `/mcp`, wrapped in `GuardedApp`
    (requests must name `port` when given, or one of `allowed_hosts`; `auth`: bearer
    JWTs; `health`: `/healthz` and `/readyz`), holding at most `max_sessions` client
    sessions (default `session_cap()`; closed after `SESSION_IDLE_SECONDS` idle, the
    least recently used idle one when a new client needs its place); `stateless`: none
    at all, each request answered on its own, so any replica answers any request."""
    from mcp.server.transport_security import TransportSecuritySettings

    guard = HostGuard(host, token=token, port=port, forwarded=allowed_hosts)
    hosts = guard.hosts
    bracketed = [f"[{h}]" if ":" in h else h for h in sorted(hosts)]
    names = [f"{h}:*" for h in bracketed]
    origins = [f"{s}://{h}:*" for h in bracketed for s in ("http", "https")]
    for name, only in sorted(guard.forwarded):
        shown = f"[{name}]" if ":" in name else name
        names += [f"{shown}:{only}"] if only else [shown, f"{shown}:*"]
        for scheme in ("http", "https"):
            origins += (
                [f"{scheme}://{shown}:{only}"]
                if only
                else [
                    f"{scheme}://{shown}",
                    f"{scheme}://{shown}:*",
                ]
            )
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=names, allowed_origins=origins
    )
    app = sdk_server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=security,
        stateless_http=stateless,
        max_sessions=None if stateless else (max_sessions or session_cap()),
        session_idle_timeout=None if stateless else SESSION_IDLE_SECONDS,
    )
    if not stateless:
        evict_on_admit(sdk_server.session_manager)
    return GuardedApp(app, guard=guard, auth=auth, health=health)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one.

    Raises:
        UsageError: the address cannot be bound (in use, not this machine's).
    """
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"Cannot listen on {host}:{port} ({exc.strerror or exc}); pick another --port "
            "(0 picks a free one) or --host."
        ) from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


def serve(app: Any, sock: socket.socket, *, on_ready: Callable[[str], None]) -> None:
    """Run uvicorn on `sock` until interrupted; `on_ready(url)` once it listens."""
    import uvicorn

    try:
        head, body = deadline_seconds()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    quiet = episode_log()
    for name in _EPISODE_LOGGERS:
        logging.getLogger(name).addFilter(quiet)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=guarded_protocol(PendingConnections(), header_seconds=head, body_seconds=body),
        backlog=128,
        limit_concurrency=connection_limit(MAX_CONNECTIONS),
        timeout_keep_alive=int(KEEP_ALIVE_SECONDS),
    )
    server = uvicorn.Server(config)
    on_ready(url_of(sock))
    sys.stdout.flush()
    server.run(sockets=[sock])


_EPISODE_LOGGERS: Final = (
    "asyncio",
    "uvicorn.error",
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "skillpack.mcp",
)
"""Where the repeated conditions are logged from: the event loop's accept, uvicorn,
the SDK's session manager, skillpack's handlers."""


def episode_log() -> EpisodeLog:
    """The server's log filter: one line per episode of file-handle exhaustion; none
    for a client that left mid-request, nor for the SDK's refusal of a new session
    (the session table's own lines are `session_room`'s)."""
    return EpisodeLog(
        {
            "no-handles": (
                out_of_handles,
                "skillpack mcp: out of file handles (the process's open-file limit); "
                "new connections wait until some close. Raise `ulimit -n` if this "
                "repeats. (Logged once per episode.)",
            ),
            "client-left": (client_left, None),
            "sessions-full": (
                lambda record: record.getMessage().startswith("Refusing to open a new session"),
                None,
            ),
        }
    )


def guarded_protocol(
    pending: PendingConnections, *, header_seconds: float, body_seconds: float
) -> Any:
    """uvicorn's h11 protocol with the head and body deadlines and the bound on
    connections waiting for a request head (`_httpguard`): those that send none are
    closed, oldest first, and never hold the places of clients that do; a request
    whose body stops coming is closed `body_seconds` after its head."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _body_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            self._body_arrived()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:
                self._head_arrived()
                self._body_arrived()
                if self.cycle is not None and self.cycle.more_body:
                    self._body_timer = self.loop.call_later(body_seconds, self._drop)
            if self.cycle is None or not self.cycle.more_body:
                self._body_arrived()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (
                self.cycle is None or self.cycle.response_complete
            ):
                self._await_head()

        def _await_head(self) -> None:
            self._head_arrived()
            pending.add(self, self._drop)
            self._head_timer = self.loop.call_later(header_seconds, self._drop)

        def _head_arrived(self) -> None:
            pending.done(self)
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _body_arrived(self) -> None:
            if self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None

        def _drop(self) -> None:
            self._head_arrived()
            self._body_arrived()
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedProtocol
