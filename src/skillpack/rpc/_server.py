"""`skillpack serve`: the state, the dispatcher and one transport, put together.

A server process is long-lived: it turns the cyclic garbage collector back on (the
CLI's `main` switches it off for short runs), closes every watcher on the way out, and
removes its token file. SIGTERM and SIGINT stop it cleanly.
"""

from __future__ import annotations

import gc
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .._health import Detail
from ._dispatch import Dispatcher, Hub
from ._live import Discovery, Live
from ._methods import Methods

if TYPE_CHECKING:
    from .._auth import BearerAuth


@dataclass(frozen=True, kw_only=True, slots=True)
class ServeOptions:
    """What `skillpack serve` was asked for, beyond the transport."""

    discovery: Discovery
    max_sessions: int = 256
    """Sessions open at once; `session.open` past it takes the place of the least
    recently used one with no request in flight (refused only when all are busy)."""
    session_idle: float = 3600.0
    """Seconds after which an unused session may be closed."""
    max_workspaces: int = 32
    """Workspaces (cwd + extra roots) watched at once, sessions' own excepted."""
    workers: int = 8
    """Threads that run requests (either transport)."""
    details: Mapping[str, Detail] = field(default_factory=dict)
    """What `/readyz` shows beside its checks (`source`: the OCI collection served)."""


@contextmanager
def running(options: ServeOptions) -> Iterator[tuple[Dispatcher, Hub]]:
    """The dispatcher and the notification hub, with every watcher closed at the end."""
    gc.enable()
    hub = Hub()
    live = Live(
        options.discovery,
        notify=hub.publish,
        max_workspaces=options.max_workspaces,
        max_sessions=options.max_sessions,
        session_idle=options.session_idle,
    )
    try:
        yield Dispatcher(Methods(live)), hub
    finally:
        live.close()


def serve_stdio(options: ServeOptions, *, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve JSON-RPC on a pair of byte streams until the input ends."""
    from ._stdio import serve_stdio as serve

    with running(options) as (dispatcher, hub):
        serve(dispatcher, hub, stdin=stdin, stdout=stdout, workers=options.workers)


def serve_http(
    options: ServeOptions,
    *,
    host: str,
    port: int,
    token: str | None,
    token_file: Path | None,
    remove_token_file: bool,
    allow_origins: Sequence[str],
    announce: Callable[[dict[str, Any]], None],
    heartbeat: float | None = None,
    auth: BearerAuth | None = None,
    grants: Sequence[Any] = (),
    allowed_hosts: Sequence[str] = (),
    stateless: bool = False,
) -> None:
    """Serve JSON-RPC over HTTP until SIGTERM or SIGINT.

    Clients send `token`, which `token_file` holds (removed at the end when
    `remove_token_file`: the server wrote it). `announce` gets the address, the token
    file and the pid once the port is bound. With `auth` (bearer JWTs, `grants`
    deciding what each caller sees) there is no shared token: `token` and `token_file`
    are None. `allowed_hosts`: `Host` names a balancer forwards; `stateless`: no
    session kept between requests (`_fleet`).
    """
    from ._fleet import make_stateless, server_health
    from ._http import HEARTBEAT_SECONDS, RpcHTTPServer

    with running(options) as (dispatcher, hub):
        if stateless:
            make_stateless(dispatcher.methods)
        try:
            server = RpcHTTPServer(
                (host, port),
                dispatcher=dispatcher,
                hub=hub,
                token=token,
                allow_origins=allow_origins,
                auth=auth,
                grants=grants,
                allowed_hosts=allowed_hosts,
                health=server_health(dispatcher.methods.live).with_details(options.details),
                workers=options.workers,
                heartbeat=heartbeat or HEARTBEAT_SECONDS,
            )
            stop = threading.Event()
            with _stop_on_signals(stop):
                thread = threading.Thread(
                    target=server.serve_forever,
                    kwargs={"poll_interval": 0.1},
                    name="skillpack-http",
                )
                thread.start()
                import os

                announce(
                    {
                        "url": server.url,
                        "rpc": f"{server.url}/rpc",
                        "events": f"{server.url}/events",
                        "token_file": None if token_file is None else str(token_file),
                        **(
                            {}
                            if auth is None
                            else {"metadata": auth.metadata_url(server.url.split("//", 1)[1])}
                        ),
                        "pid": os.getpid(),
                    }
                )
                stop.wait()
                server.stopping.set()
                server.shutdown()
                server.server_close()
                thread.join()
        finally:
            if remove_token_file and token_file is not None:
                with suppress(OSError):
                    token_file.unlink()


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    def handler(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
