"""The HTTP transport: `POST /rpc` for requests, `GET /events` for notifications
(server-sent events), on the standard library's `ThreadingHTTPServer`.

Every request passes the shared guard (`_httpguard.HostGuard`, the same answers as
`skillpack mcp --transport http`): a `Host` naming this server (else 421, against DNS
rebinding), a browser's `Origin` being this server or one given with `--allow-origin`
(else 403), and `Authorization: Bearer <token>` (the token is read from a file only its
owner can read, written at start; else 401); a refusal closes the connection. With
JWT auth (`_auth.BearerAuth`) the token is an access token instead: 401/403 with the
RFC 9728 challenge, and the metadata document at `GET /.well-known/oauth-protected-
resource[/rpc]`; each request then runs for its caller (`Dispatcher.handle(caller=)`). A body
over 4 MiB is refused by its `Content-Length` before a byte of it is read. `GET /healthz`
and `GET /readyz` (`_health`) pass the Host and Origin checks only, never a token, and
close their connection (they never take a slot).

Each connection has its own thread for its I/O and hands each request to a fixed pool
of workers. A connection takes one of the `max_connections` slots only once a request
on it passed the guard (more are answered 503): before that it is one of at most
`PENDING_MAX` waiting connections, the oldest closed when another arrives, with
`HEADER_SECONDS` to send its whole head, however it drip-feeds it. So connections
without the token cannot take the places of clients that have it. A request's body must
all arrive within `BODY_SECONDS` of its head, and a kept-alive connection's next head
within `IDLE_SECONDS`; past a deadline the connection is closed (`_httpguard.Deadlines`).
A socket timeout frees the thread of a client that stalls or leaves mid-request;
nothing a client sends stops the server.

The standard library suffices: the server is small, loopback-only by default, and the
`rpc` extra stays free of dependencies (decision recorded in docs/design.md).
"""

from __future__ import annotations

import contextlib
import functools
import json
import queue
import socket
import socketserver
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .._auth import AuthRefused, BearerAuth, Caller, audit
from .._errors import UsageError
from .._health import Health, is_health_path
from .._httpguard import (
    Deadlines,
    HostGuard,
    PendingConnections,
    connection_limit,
    deadline_seconds,
)
from ._codes import RPC_CODES
from ._dispatch import Dispatcher, Hub
from ._frame import MAX_MESSAGE_BYTES, error_frame

HEARTBEAT_SECONDS = 15.0
"""A comment line on `/events` this often keeps proxies and clients from timing out."""
EVENT_QUEUE = 1000
"""Notifications buffered per `/events` client; a client that falls further behind is
disconnected (it reconnects and calls `skills.list`) rather than grow memory."""
IDLE_SECONDS = 120.0
"""A connection that sends nothing for this long is closed, and a kept-alive one has
this long after a reply to send its next whole request head."""


class RpcHTTPServer(ThreadingHTTPServer):
    """The HTTP server: shared state for the request handlers."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the listen backlog: many clients may connect at once

    def __init__(
        self,
        address: tuple[str, int],
        *,
        dispatcher: Dispatcher,
        hub: Hub,
        token: str | None,
        allow_origins: Sequence[str] = (),
        auth: BearerAuth | None = None,
        grants: Sequence[Any] = (),
        allowed_hosts: Sequence[str] = (),
        health: Health | None = None,
        max_connections: int = 128,
        workers: int = 8,
        heartbeat: float = HEARTBEAT_SECONDS,
        idle: float = IDLE_SECONDS,
    ) -> None:
        try:
            self.header_seconds, self.body_seconds = deadline_seconds()
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, RpcHandler)
        self.dispatcher = dispatcher
        self.hub = hub
        self.auth = auth
        self.health = health
        """`/healthz` and `/readyz` (None: not served)."""
        self.grants = tuple(grants)
        """`[[auth.grant]]` (`select._grants.Grant`): what each caller's claims open."""
        self.heartbeat = heartbeat
        self.idle = idle
        self.stopping = threading.Event()
        # Connection threads only read and write; requests run on a fixed pool, as over
        # stdio, so memory and CPU follow `workers`, not how many clients are connected.
        self.work = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="skillpack-rpc")
        host, port = self.server_address[:2]
        self.guard = HostGuard(
            str(host),
            token=token,
            port=int(port),
            allow_origins=allow_origins,
            forwarded=allowed_hosts,
        )
        self.pending = PendingConnections()
        self.deadlines = Deadlines()
        self._slots = threading.BoundedSemaphore(connection_limit(max_connections))

    def server_close(self) -> None:
        super().server_close()
        self.work.shutdown(wait=False, cancel_futures=True)

    def server_bind(self) -> None:
        # HTTPServer.server_bind asks DNS for the host's full name; nothing here needs it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{_host_literal(str(host))}:{port}"

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pending.add(request, lambda: _hang_up(request))
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.pending.done(request)

    def admit(self, request: Any) -> bool:
        """Give a connection whose request passed the guard a slot (once); False when
        every slot is taken."""
        self.pending.done(request)
        return self._slots.acquire(blocking=False)

    def leave(self) -> None:
        self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):  # a client that left is not worth a line
            sys.stderr.write(f"skillpack serve: error serving {client_address}: {exc!r}\n")


class RpcHandler(BaseHTTPRequestHandler):
    """One connection's requests."""

    server: RpcHTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "skillpack-rpc"
    sys_version = ""

    admitted = False
    caller: Caller | None = None

    def _deadline(self, seconds: float) -> None:
        """Close this connection unless what it must send now arrives within `seconds`."""
        request = self.request
        self.server.deadlines.set(request, seconds, lambda: _hang_up(request))

    def handle_one_request(self) -> None:
        # A whole head in time, however slowly it comes: a first one within
        # HEADER_SECONDS, a kept-alive connection's next one within its idle time.
        self._deadline(self.server.idle if self.admitted else self.server.header_seconds)
        super().handle_one_request()

    def parse_request(self) -> bool:
        try:
            return super().parse_request()  # reads the header lines
        finally:
            self.server.deadlines.clear(self.request)  # the head is in

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.header_seconds)  # idle's once admitted
        # Headers and body go out in two writes; without this, Nagle's algorithm and the
        # client's delayed ACK hold the body back ~40 ms.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def finish(self) -> None:
        self.server.deadlines.clear(self.request)
        try:
            super().finish()
        finally:
            if self.admitted:
                self.admitted = False
                self.server.leave()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: stderr stays for problems."""

    # -- checks ---------------------------------------------------------------------

    def _refuse(self, status: int, message: str, *, close: bool = False) -> None:
        body = json.dumps({"error": {"code": status, "message": message}}).encode()
        self._send(status, body, close=close)

    def _allowed(self) -> bool:
        """The shared guard, the caller's access token (JWT auth), then a connection
        slot (the first time it passes)."""
        refused = self.server.guard.check(
            self.headers.get("Host"), self.headers.get("Origin"), self.headers.get("Authorization")
        )
        if refused is None and self.server.auth is not None:
            return self._caller_allowed(self.server.auth)
        if refused is not None:
            status, message = refused
            if status == 403:
                message += " Start `skillpack serve` with --allow-origin ORIGIN to allow a page."
            if status == 401:
                message += " The token is in the file `skillpack serve` printed at start."
            self._refuse(status, message, close=True)
            return False
        return self._admit()

    def _caller_allowed(self, auth: BearerAuth) -> bool:
        from ..select._grants import grant_for

        try:
            principal = auth.principal(self.headers.get("Authorization"))
        except AuthRefused as refused:
            audit("serve", None, event="refused", status=refused.status, code=refused.code)
            body = json.dumps({"error": {"code": refused.status, "message": str(refused)}})
            self._send(
                refused.status,
                body.encode(),
                close=True,
                challenge=auth.challenge(refused, self.headers.get("Host")),
            )
            return False
        self.caller = Caller(
            principal=principal, grant=grant_for(self.server.grants, principal.claims)
        )
        return self._admit()

    def _admit(self) -> bool:
        if not self.admitted:
            if not self.server.admit(self.request):
                self._refuse(503, "Every connection slot is taken; retry in a moment.", close=True)
                return False
            self.admitted = True
            self.connection.settimeout(self.server.idle)
        return True

    def _cors(self) -> None:
        origin = self.headers.get("Origin")
        if origin is not None and self.server.guard.origin_ok(origin):
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Vary", "Origin")

    # -- methods --------------------------------------------------------------------

    def do_OPTIONS(self) -> None:  # noqa: N802 - the http.server naming
        origin = self.headers.get("Origin")
        if origin is None or not self.server.guard.origin_ok(origin):
            self._refuse(403, f"Origin {origin!r} may not call this server.", close=True)
            return
        self.send_response(204)
        self._cors()
        self.send_header("Access-Control-Allow-Methods", "POST, GET")
        self.send_header("Access-Control-Allow-Headers", "Authorization, Content-Type")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        if self.path != "/rpc":
            self._refuse(404, "Not found: send JSON-RPC requests to POST /rpc.", close=True)
            return
        if not self._allowed():
            return
        length_text = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding") or length_text is None:
            self._refuse(411, "A Content-Length is required (no chunked bodies).", close=True)
            return
        try:
            length = int(length_text)
            if length < 0:
                raise ValueError(length_text)
        except ValueError:
            self._refuse(400, f"Content-Length {length_text!r} is not a size.", close=True)
            return
        if length > MAX_MESSAGE_BYTES:
            frame = error_frame(
                None,
                RPC_CODES["message-too-large"],
                f"Message too large: {length} bytes, over the {MAX_MESSAGE_BYTES} byte "
                "limit. Split the request.",
            )
            self._send(413, frame, close=True)
            return
        self._deadline(self.server.body_seconds)
        try:
            body = self.rfile.read(length)
        except OSError:
            body = b""  # a socket timeout, or hung up at the deadline
        finally:
            self.server.deadlines.clear(self.request)
        if len(body) < length:
            self.close_connection = True  # the client left mid-request
            return
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            self._refuse(415, "Send the request as Content-Type: application/json.")
            return
        reply = self.server.work.submit(
            functools.partial(self.server.dispatcher.handle, body, caller=self.caller)
        ).result()
        if reply is None:
            self.send_response(204)
            self._cors()
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send(200, reply)

    def _send(
        self, status: int, body: bytes, *, close: bool = False, challenge: str | None = None
    ) -> None:
        self.send_response(status)
        if challenge is not None:
            self.send_header("WWW-Authenticate", challenge)
        elif status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="skillpack"')
        self._cors()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        if self.server.health is not None and is_health_path(self.path):
            refused = self.server.guard.place_check(
                self.headers.get("Host"), self.headers.get("Origin")
            )
            if refused is not None:
                self._refuse(*refused, close=True)
            else:  # a connection not admitted: it is closed after the answer
                self._send(*self.server.health.answer(self.path), close=True)
            return
        auth = self.server.auth
        if auth is not None and self.path in auth.paths:
            refused = self.server.guard.check(
                self.headers.get("Host"), self.headers.get("Origin"), None
            )
            if refused is not None:
                self._refuse(*refused, close=True)
            else:  # a connection not admitted: it is closed after the document
                self._send(200, auth.metadata, close=True)
            return
        if self.path != "/events":
            self._refuse(404, "Not found: notifications are at GET /events.", close=True)
            return
        if not self._allowed():
            return
        self._events()

    def _events(self) -> None:
        events: queue.Queue[bytes | None] = queue.Queue(EVENT_QUEUE)

        def deliver(method: str, frame: bytes) -> None:
            try:
                events.put_nowait(b"event: " + method.encode() + b"\ndata: " + frame + b"\n\n")
            except queue.Full:
                _drain_and_stop(events)

        self.close_connection = True
        self.send_response(200)
        self._cors()
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        grant = None if self.caller is None else self.caller.grant
        unsubscribe = self.server.hub.subscribe(deliver, grant=grant)
        try:
            self.wfile.write(b"event: ready\ndata: {}\n\n")
            self.wfile.flush()
            while not self.server.stopping.is_set():
                try:
                    item = events.get(timeout=self.server.heartbeat)
                except queue.Empty:
                    item = b": ping\n\n"
                if item is None:
                    break
                self.wfile.write(item)
                self.wfile.flush()
        except OSError:
            pass  # the client went away
        finally:
            unsubscribe()


def _drain_and_stop(events: queue.Queue[bytes | None]) -> None:
    """A client too slow to keep up: drop what it has not read and disconnect it."""
    try:
        while True:
            events.get_nowait()
    except queue.Empty:
        pass
    with contextlib.suppress(queue.Full):
        events.put_nowait(None)


def _host_literal(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _hang_up(request: Any) -> None:
    """Close a waiting connection from another thread (its handler's read then ends)."""
    with contextlib.suppress(OSError):
        request.shutdown(socket.SHUT_RDWR)
