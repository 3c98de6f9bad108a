"""The client's transports: a `skillpack serve --transport stdio` child process, or HTTP
(`POST /rpc` on pooled keep-alive connections, `GET /events` for notifications)."""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import subprocess
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Protocol, cast

from .._process import close_input, reap
from ._types import Notification

MAX_IDLE_CONNECTIONS = 64
"""Kept-alive HTTP connections a client keeps for reuse."""
_STOP_WAIT_S = 10.0
"""How long a server asked to stop may take to exit before it is killed."""

Deliver = Callable[[Notification], None]
"""Where a transport hands the notifications it receives."""


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


class Transport(Protocol):
    """Carries a client's requests; hands notifications to the `Deliver` it was given."""

    def send(self, request_id: int, frame: bytes, timeout: float) -> Any:
        """Send request `request_id` (encoded as `frame`) and return its decoded reply."""
        ...

    def start_events(self) -> None:
        """Receive notifications from now on (returns once the server has the listener)."""
        ...

    def close(self) -> None: ...


# -- stdio --------------------------------------------------------------------------------


class StdioTransport:
    """A `skillpack serve --transport stdio` child process; a reader thread matches replies."""

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

    def start_events(self) -> None:
        """Notifications come on stdout with the replies: nothing to open."""

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
                self._deliver(
                    cast(
                        Notification,
                        {"method": message["method"], "params": message.get("params") or {}},
                    )
                )
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
        close_input(self.process)
        reap(self.process, _STOP_WAIT_S)


# -- HTTP ---------------------------------------------------------------------------------


class HttpTransport:
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
        self._deliver(
            cast(Notification, {"method": message["method"], "params": message.get("params") or {}})
        )

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
            reap(self.process, _STOP_WAIT_S)


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
