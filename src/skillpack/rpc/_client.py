"""`skillpack.rpc.Client`: a typed client of `skillpack serve`, over stdio or HTTP.

    with Client.stdio("--cwd", project) as client:        # spawns `skillpack serve` (stdio)
        listing = client.skills_list()
    with Client.spawn_http("--no-user") as client:        # spawns `serve --transport http --port 0`
        for note in client.notifications(timeout=5): ...
    client = Client.http("http://127.0.0.1:8765", token_file=path)  # a running server

A client may be used from several threads at once: over stdio requests share the pipe
and replies are matched by id; over HTTP each takes a kept-alive connection from a small
pool. Notifications (`skills/changed`) queue up for `notifications()` and go to every
callback given to `on_notification`; over HTTP they come from `GET /events`, opened on
first use (or by `listen()`). Only the standard library is used.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Self, cast

from ._transport import (
    Deliver,
    HttpTransport,
    RpcConnectionError,
    RpcError,
    StdioTransport,
    Transport,
)
from ._types import (
    ConfigWriteResult,
    ContextReport,
    Envelope,
    NotePathsResult,
    Notification,
    ReloadResult,
    SessionCloseResult,
    SessionOpenResult,
    SkillsListResult,
    TurnResult,
)

__all__ = ["Client", "RpcConnectionError", "RpcError", "serve_command"]

DEFAULT_TIMEOUT = 60.0

Callback = Deliver


def serve_command() -> list[str]:
    """How to start `skillpack serve` with this interpreter (this skillpack)."""
    return [sys.executable, "-c", "from skillpack.cli import main; main()", "serve"]


class Client:
    """A JSON-RPC client of `skillpack serve`. Thread-safe; a context manager."""

    def __init__(
        self, connect: Callable[[Deliver], Transport], *, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        """Use `Client.stdio`, `Client.http` or `Client.spawn_http` rather than this.

        Args:
            connect: Builds the transport, given where to deliver notifications.
            timeout: Seconds to wait for each reply.
        """
        self._ids = itertools.count(1)
        self._timeout = timeout
        self._notes: queue.Queue[Notification] = queue.Queue()
        self._callbacks: list[Callback] = []
        self._lock = threading.Lock()
        self._transport = connect(self._deliver)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        *args: str,
        command: Sequence[str] | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Self:
        """Spawn `skillpack serve --transport stdio ARGS…` and talk to it over its stdin/stdout."""
        argv = [*(command or serve_command()), "--transport", "stdio", *args]
        return cls(
            lambda deliver: StdioTransport(argv, cwd=cwd, env=env, deliver=deliver), timeout=timeout
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        token: str | None = None,
        token_file: str | Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Self:
        """Talk to a running HTTP server at `url` (`http://127.0.0.1:PORT`)."""
        if token is None:
            if token_file is None:
                raise ValueError("Give the server's token or the token file it printed.")
            token = Path(token_file).read_text(encoding="utf-8").strip()
        secret = token
        return cls(lambda deliver: HttpTransport(url, secret, deliver=deliver), timeout=timeout)

    @classmethod
    def spawn_http(
        cls,
        *args: str,
        command: Sequence[str] | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Self:
        """Spawn `skillpack serve --transport http --port 0 --json ARGS…`; the client
        stops it on close."""
        argv = [
            *(command or serve_command()),
            "--transport",
            "http",
            "--port",
            "0",
            "--json",
            *args,
        ]
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            code = process.wait(timeout=timeout)
            raise RpcConnectionError(f"`{' '.join(argv)}` exited with {code} before serving.")
        info = json.loads(line)
        client = cls.http(info["url"], token_file=info["token_file"], timeout=timeout)
        cast(HttpTransport, client._transport).process = process
        return client

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening and, for a spawned server, stop it."""
        self._transport.close()

    # -- calls ----------------------------------------------------------------------------

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send one request and return its result.

        Raises:
            RpcError: the server answered with an error (`code`, `message`, `data`).
            RpcConnectionError: no answer (the server is gone or the timeout passed).
        """
        request_id = next(self._ids)
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            request["params"] = {k: v for k, v in params.items() if v is not None}
        reply = self._transport.send(request_id, json.dumps(request).encode(), self._timeout)
        if "error" in reply:
            error = reply["error"]
            raise RpcError(error.get("code", 0), error.get("message", ""), error.get("data"))
        return reply["result"]

    def skills_list(
        self,
        cwds: Sequence[str] | None = None,
        *,
        force_reload: bool | None = None,
        extra_roots: Sequence[str] | None = None,
    ) -> SkillsListResult:
        params = {
            "cwds": _list(cwds),
            "force_reload": force_reload,
            "extra_roots": _list(extra_roots),
        }
        return cast(SkillsListResult, self.call("skills.list", params))

    def skills_search(
        self,
        query: str,
        *,
        limit: int | None = None,
        scope: str | None = None,
        session: str | None = None,
        cwd: str | None = None,
    ) -> Envelope:
        params = {"query": query, "limit": limit, "scope": scope, "session": session, "cwd": cwd}
        return cast(Envelope, self.call("skills.search", params))

    def skills_load(
        self,
        *,
        name: str | None = None,
        path: str | None = None,
        args: str | None = None,
        session: str | None = None,
        cwd: str | None = None,
    ) -> Envelope:
        params = {"name": name, "path": path, "args": args, "session": session, "cwd": cwd}
        return cast(Envelope, self.call("skills.load", params))

    def skills_read_file(
        self, skill: str, path: str, *, session: str | None = None, cwd: str | None = None
    ) -> Envelope:
        params = {"skill": skill, "path": path, "session": session, "cwd": cwd}
        return cast(Envelope, self.call("skills.read_file", params))

    def skills_reload(self, *, cwd: str | None = None) -> ReloadResult:
        return cast(ReloadResult, self.call("skills.reload", {"cwd": cwd}))

    def skills_config_write(
        self, ref: str, *, enabled: bool, target: str = "user", cwd: str | None = None
    ) -> ConfigWriteResult:
        params = {"ref": ref, "enabled": enabled, "target": target, "cwd": cwd}
        return cast(ConfigWriteResult, self.call("skills.config.write", params))

    def session_open(
        self, *, cwd: str | None = None, extra_roots: Sequence[str] | None = None
    ) -> SessionOpenResult:
        params = {"cwd": cwd, "extra_roots": _list(extra_roots)}
        return cast(SessionOpenResult, self.call("session.open", params))

    def session_close(self, session: str) -> SessionCloseResult:
        return cast(SessionCloseResult, self.call("session.close", {"session": session}))

    def session_note_paths(self, session: str, paths: Sequence[str]) -> NotePathsResult:
        """The files or folders `session` works on: the `paths:` skills they open."""
        params = {"session": session, "paths": list(paths)}
        return cast(NotePathsResult, self.call("session.note_paths", params))

    def turn_prepare(self, session: str, text: str, *, invoker: str | None = None) -> TurnResult:
        params = {"session": session, "text": text, "invoker": invoker}
        return cast(TurnResult, self.call("turn.prepare", params))

    def context_inspect(
        self,
        *,
        session: str | None = None,
        cwd: str | None = None,
        include_skills: bool | None = None,
        context_window: int | None = None,
        budget_chars: int | None = None,
        format: str | None = None,
        tools: Sequence[str] | None = None,
        catalog_mode: str | None = None,
    ) -> ContextReport:
        params = {
            "session": session,
            "cwd": cwd,
            "include_skills": include_skills,
            "context_window": context_window,
            "budget_chars": budget_chars,
            "format": format,
            "tools": _list(tools),
            "catalog_mode": catalog_mode,
        }
        return cast(ContextReport, self.call("context.inspect", params))

    def discover(self) -> dict[str, Any]:
        """The server's schema (`rpc.discover`)."""
        return cast(dict[str, Any], self.call("rpc.discover"))

    # -- notifications --------------------------------------------------------------------

    def on_notification(self, callback: Callback) -> Callable[[], None]:
        """Call `callback` for every notification from now on; returns an unsubscribe."""
        with self._lock:
            self._callbacks.append(callback)
        self._transport.start_events()

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return unsubscribe

    def listen(self) -> None:
        """Start receiving notifications now (HTTP: open `/events` and wait until the
        server has it), so none sent after this returns is missed."""
        self._transport.start_events()

    def notifications(self, *, timeout: float | None = None) -> Iterator[Notification]:
        """Notifications as they come; stops after `timeout` seconds without one."""
        self._transport.start_events()
        while True:
            try:
                yield self._notes.get(timeout=timeout)
            except queue.Empty:
                return

    def wait_for(
        self, predicate: Callable[[Notification], bool], *, timeout: float
    ) -> Notification | None:
        """The first notification `predicate` accepts within `timeout` seconds."""
        self._transport.start_events()
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                note = self._notes.get(timeout=left)
            except queue.Empty:
                return None
            if predicate(note):
                return note
        return None

    def _deliver(self, note: Notification) -> None:
        self._notes.put(note)
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(note)
            except Exception:  # noqa: BLE001 - a host's callback never stops the reader
                continue


def _list(values: Sequence[str] | None) -> list[str] | None:
    return None if values is None else list(values)
