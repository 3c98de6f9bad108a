"""`skillpack.rpc.Client`: a typed client of `skillpack serve`, over stdio or HTTP.

    with Client.stdio("--cwd", project) as client:        # spawns `skillpack serve --stdio`
        listing = client.skills_list()
    with Client.spawn_http("--no-user") as client:        # spawns `serve --http --port 0`
        for note in client.notifications(timeout=5): ...
    client = Client.http("http://127.0.0.1:8765", token_file=path)  # a running server

A client may be used from several threads at once: over stdio requests share the pipe
and replies are matched by id; over HTTP each takes a kept-alive connection from a small
pool. Notifications (`skills/changed`) queue up for `notifications()` and go to every
callback given to `on_notification`; over HTTP they come from `GET /events`, opened on
first use (or by `listen()`). Only the standard library is used.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import queue
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, cast

from ._types import (
    ConfigWriteResult,
    ContextReport,
    Envelope,
    Notification,
    ReloadResult,
    SessionCloseResult,
    SessionOpenResult,
    SkillsListResult,
    TurnResult,
)

DEFAULT_TIMEOUT = 60.0
MAX_IDLE_CONNECTIONS = 64
"""Kept-alive HTTP connections a client keeps for reuse."""


class RpcError(Exception):
    """The server answered a request with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.message = message
        self.data = data


class RpcConnectionError(RpcError):
    """The server could not be reached, or went away before answering."""

    def __init__(self, message: str) -> None:
        super().__init__(-32099, message)


Callback = Callable[[Notification], None]
Deliver = Callable[[Notification], None]


def serve_command() -> list[str]:
    """How to start `skillpack serve` with this interpreter (this skillpack)."""
    return [sys.executable, "-c", "from skillpack.cli import main; main()", "serve"]


class _Transport:
    """Sends a frame; delivers replies and notifications to the client."""

    def send(self, request_id: int, frame: bytes, timeout: float) -> Any:
        raise NotImplementedError

    def start_events(self) -> None:
        """Begin receiving notifications (HTTP opens `/events`); stdio always does."""

    def close(self) -> None:
        raise NotImplementedError


class Client:
    """A JSON-RPC client of `skillpack serve`. Thread-safe; a context manager."""

    def __init__(
        self, connect: Callable[[Deliver], _Transport], *, timeout: float = DEFAULT_TIMEOUT
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
    ) -> Client:
        """Spawn `skillpack serve --stdio ARGS…` and talk to it over its stdin/stdout."""
        argv = [*(command or serve_command()), "--stdio", *args]
        return cls(lambda deliver: _Stdio(argv, cwd=cwd, env=env, deliver=deliver),
                   timeout=timeout)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        token: str | None = None,
        token_file: str | Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Client:
        """Talk to a running HTTP server at `url` (`http://127.0.0.1:PORT`)."""
        if token is None:
            if token_file is None:
                raise ValueError("Give the server's token or the token file it printed.")
            token = Path(token_file).read_text(encoding="utf-8").strip()
        secret = token
        return cls(lambda deliver: _Http(url, secret, deliver=deliver), timeout=timeout)

    @classmethod
    def spawn_http(
        cls,
        *args: str,
        command: Sequence[str] | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Client:
        """Spawn `skillpack serve --http --port 0 --json ARGS…`; the client stops it on close."""
        argv = [*(command or serve_command()), "--http", "--port", "0", "--json", *args]
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
        cast(_Http, client._transport).process = process
        return client

    def __enter__(self) -> Client:
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
        params = {"cwds": _list(cwds), "force_reload": force_reload,
                  "extra_roots": _list(extra_roots)}
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
    ) -> ContextReport:
        params = {
            "session": session,
            "cwd": cwd,
            "include_skills": include_skills,
            "context_window": context_window,
            "budget_chars": budget_chars,
            "format": format,
            "tools": _list(tools),
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


# -- stdio --------------------------------------------------------------------------------


class _Stdio(_Transport):
    """A `skillpack serve --stdio` child process; a reader thread matches replies."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | Path | None,
        env: Mapping[str, str] | None,
        deliver: Callable[[Notification], None],
    ) -> None:
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._deliver = deliver
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._waiting: dict[Any, queue.Queue[dict[str, Any]]] = {}
        self._gone = False
        self._reader = threading.Thread(target=self._read, name="skillpack-rpc-client", daemon=True)
        self._reader.start()

    def send(self, request_id: int, frame: bytes, timeout: float) -> Any:
        box: queue.Queue[dict[str, Any]] = queue.Queue(1)
        with self._lock:
            if self._gone:
                raise RpcConnectionError("The server process has exited.")
            self._waiting[request_id] = box
        stdin = cast(IO[bytes], self.process.stdin)
        try:
            with self._write_lock:
                stdin.write(frame + b"\n")
                stdin.flush()
            return box.get(timeout=timeout)
        except (BrokenPipeError, OSError) as exc:
            raise RpcConnectionError(f"The server process is gone: {exc}.") from exc
        except queue.Empty:
            raise RpcConnectionError(f"No reply within {timeout} s.") from None
        finally:
            with self._lock:
                self._waiting.pop(request_id, None)

    def _read(self) -> None:
        stdout = cast(IO[bytes], self.process.stdout)
        for line in stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and "method" in message and "id" not in message:
                self._deliver(cast(Notification, {"method": message["method"],
                                                  "params": message.get("params") or {}}))
                continue
            if not isinstance(message, dict):
                continue
            with self._lock:
                box = self._waiting.get(message.get("id"))
            if box is not None:
                box.put(message)
        with self._lock:
            self._gone = True
            waiting = list(self._waiting.values())
        gone = {"error": {"code": -32099, "message": "The server process exited."}}
        for box in waiting:
            box.put(gone)

    def close(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError):
                stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


# -- HTTP ---------------------------------------------------------------------------------


class _Http(_Transport):
    """`POST /rpc` on a keep-alive connection per thread; `GET /events` on its own."""

    def __init__(self, url: str, token: str, *, deliver: Callable[[Notification], None]) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname or not parsed.port:
            raise ValueError(f"Expected http://HOST:PORT, got {url!r}.")
        self.host, self.port = parsed.hostname, parsed.port
        self.headers = {"Authorization": f"Bearer {token}"}
        self.process: subprocess.Popen[bytes] | None = None
        self._deliver = deliver
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._events: threading.Thread | None = None
        self._ready = threading.Event()
        self._events_connection: http.client.HTTPConnection | None = None
        self._closed = False

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _release(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(connection)
                return
        connection.close()

    def send(self, request_id: int, frame: bytes, timeout: float) -> Any:
        headers = {**self.headers, "Content-Type": "application/json"}
        for attempt in (1, 2):
            connection = self._connection(timeout)
            try:
                connection.request("POST", "/rpc", body=frame, headers=headers)
                response = connection.getresponse()
                body = response.read()
            except (http.client.HTTPException, OSError) as exc:
                connection.close()
                if attempt == 2:
                    raise RpcConnectionError(
                        f"Cannot reach the server at {self.host}:{self.port}: {exc}."
                    ) from exc
                continue  # a kept-alive connection the server closed: retry once
            if response.will_close:
                connection.close()
            else:
                self._release(connection)
            if response.status != 200:
                raise _http_error(response.status, body)
            return json.loads(body)
        raise AssertionError("unreachable")

    def start_events(self) -> None:
        with self._lock:
            if self._events is None:
                self._events = threading.Thread(
                    target=self._listen, name="skillpack-rpc-events", daemon=True
                )
                self._events.start()
        if not self._ready.wait(timeout=30):
            raise RpcConnectionError("The server did not open its event stream.")

    def _listen(self) -> None:
        connection = http.client.HTTPConnection(self.host, self.port)
        self._events_connection = connection
        try:
            connection.request("GET", "/events", headers=self.headers)
            response = connection.getresponse()
            if response.status != 200:
                return
            event = ""
            data: list[str] = []
            while True:
                raw = response.readline()
                if not raw:
                    return
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith(":"):
                    continue
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
                elif not line:
                    self._dispatch(event, "\n".join(data))
                    event, data = "", []
        except (OSError, http.client.HTTPException, ValueError):
            return
        finally:
            self._ready.set()  # never leave a waiter hanging

    def _dispatch(self, event: str, data: str) -> None:
        if event == "ready":
            self._ready.set()
            return
        message = json.loads(data)
        self._deliver(cast(Notification, {"method": message["method"],
                                          "params": message.get("params") or {}}))

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        if self._events_connection is not None and self._events_connection.sock is not None:
            with contextlib.suppress(OSError):
                self._events_connection.sock.shutdown(2)
            self._events_connection.close()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stdout is not None:
                self.process.stdout.close()


def _http_error(status: int, body: bytes) -> RpcError:
    try:
        payload = json.loads(body)
    except ValueError:
        payload = {}
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        code = error.get("code", status)
        return RpcError(int(code), str(error.get("message", "")), {"http_status": status})
    return RpcError(status, f"HTTP {status}", {"http_status": status})
