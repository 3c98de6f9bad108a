"""Streamable HTTP for `skillpack mcp --transport http`: `/mcp` behind the shared guard.

Every request passes `_httpguard.HostGuard` (Host 421, Origin 403, bearer token 401,
the same answers as `skillpack serve --transport http`), then, with `[auth]`, the
bearer JWT check (`_auth.McpAuth`: 401/403 with the RFC 9728 challenge, the metadata
document); a refusal closes the connection. The
connections are bounded as `_httpguard` says (a whole head within `HEADER_SECONDS`
however it is drip-fed, a whole body within `BODY_SECONDS` of it, at most `PENDING_MAX`
waiting for a head, the oldest closed first; the limit kept under the open-file
limit), and so are the client sessions (`MAX_SESSIONS`, closed after
`SESSION_IDLE_SECONDS` idle or on DELETE). Running out of file handles, or of
sessions, is one log line per episode (`_httpguard.EpisodeLog`).

The SDK's own transport security (the same host and origin lists) and its request
body limit stay on behind these.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from .._errors import UsageError
from .._httpguard import (
    BODY_SECONDS,
    HEADER_SECONDS,
    EpisodeLog,
    HostGuard,
    PendingConnections,
    client_left,
    connection_limit,
    out_of_handles,
)

if TYPE_CHECKING:
    from ._auth import McpAuth

MCP_PATH: Final = "/mcp"
MAX_SESSIONS: Final = 500
"""Client sessions open at once; one more is refused with 503 "Too many open sessions"
until one ends (DELETE, or idle). A session costs about 60 KB (its `Session` and
tools; the index connection is shared), so 500 bound the server near 30 MB over its
start."""
SESSION_IDLE_SECONDS: Final = 600.0
"""A session with no request in flight and no open event stream for this long is
closed (a client that vanished without DELETE, or whose connection dropped); its id
then answers 404."""
MAX_CONNECTIONS: Final = 256
"""Open connections; more are answered 503 (lowered under a small open-file limit)."""
KEEP_ALIVE_SECONDS: Final = 5.0


class GuardedApp:
    """ASGI wrapper: the shared Host, Origin and token checks (module docstring), then
    the bearer JWT check when the server has one (`_auth.McpAuth`)."""

    def __init__(self, app: Any, *, guard: HostGuard, auth: McpAuth | None = None) -> None:
        self.app = app
        self.guard = guard
        self.auth = auth

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        refused = self.guard.check(
            headers.get(b"host"), headers.get(b"origin"), headers.get(b"authorization")
        )
        if refused is not None:
            await _refuse(send, *refused)
            return
        if self.auth is not None and not await self.auth.admit(scope, headers, send):
            return
        await self.app(scope, receive, send)


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
    max_sessions: int = MAX_SESSIONS,
    auth: McpAuth | None = None,
) -> Any:
    """The ASGI app: the SDK's streamable HTTP at `/mcp`, wrapped in `GuardedApp`
    (requests must name `port` when given; `auth`: bearer JWTs), holding at most
    `max_sessions` client sessions (closed after `SESSION_IDLE_SECONDS` idle)."""
    from mcp.server.transport_security import TransportSecuritySettings

    guard = HostGuard(host, token=token, port=port)
    hosts = guard.hosts
    bracketed = [f"[{h}]" if ":" in h else h for h in sorted(hosts)]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in bracketed],
        allowed_origins=[f"{s}://{h}:*" for h in bracketed for s in ("http", "https")],
    )
    app = sdk_server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=security,
        max_sessions=max_sessions,
        session_idle_timeout=SESSION_IDLE_SECONDS,
    )
    return GuardedApp(app, guard=guard, auth=auth)


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

    quiet = episode_log()
    for name in _EPISODE_LOGGERS:
        logging.getLogger(name).addFilter(quiet)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=guarded_protocol(PendingConnections()),
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
    """The server's log filter: one line per episode of file-handle exhaustion and of
    a full session table; none for a client that left mid-request."""
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
                f"skillpack mcp: {MAX_SESSIONS} client sessions are open; new ones are "
                "refused with 503 until one ends (DELETE, or "
                f"{int(SESSION_IDLE_SECONDS // 60)} minutes idle). (Logged once per episode.)",
            ),
        }
    )


def guarded_protocol(pending: PendingConnections) -> Any:
    """uvicorn's h11 protocol with the head and body deadlines and the bound on
    connections waiting for a request head (`_httpguard`): those that send none are
    closed, oldest first, and never hold the places of clients that do; a request
    whose body stops coming is closed `BODY_SECONDS` after its head."""
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
                    self._body_timer = self.loop.call_later(BODY_SECONDS, self._drop)
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
            self._head_timer = self.loop.call_later(HEADER_SECONDS, self._drop)

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
