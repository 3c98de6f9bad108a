"""`skillpack mcp --transport http` over weeks: bounded sessions, one shared index
connection, file-handle exhaustion logged once and survived, the index never deleted."""

from __future__ import annotations

import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from skill_client import skill_md, write

from conftest import QUICK_DEADLINES, QUICKLY_S, isolated_env
from skillpack.mcp._http import MAX_SESSIONS, MAX_SESSIONS_ENV

SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]
INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bounds", "version": "1"},
        },
    }
)
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
SEARCH = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "skill_search", "arguments": {"query": "alpha"}},
    }
)


@dataclass
class Server:
    process: subprocess.Popen[str]
    port: int
    stderr: Path
    cache: Path

    token: str | None = None

    def post(
        self, body: str | bytes, session: str | None = None, *, timeout: float = 30
    ) -> tuple[int, str | None, bytes]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if session:
            headers["Mcp-Session-Id"] = session
            headers["Mcp-Protocol-Version"] = "2025-06-18"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("POST", "/mcp", body, headers)
            response = connection.getresponse()
            return response.status, response.getheader("mcp-session-id"), response.read()
        finally:
            connection.close()

    def open_session(self) -> str:
        status, session, _ = self.post(INIT)
        assert status == 200 and session
        assert self.post(INITIALIZED, session)[0] == 202
        return session

    def search(self, session: str) -> bool:
        """Whether a `skill_search` call in `session` succeeds."""
        status, _, body = self.post(SEARCH, session)
        if status != 200:
            return False
        data = [line[5:] for line in body.decode().splitlines() if line.startswith("data:")]
        reply = json.loads(data[-1] if data else body)
        return bool(reply["result"]["structuredContent"]["ok"])

    def open_stream(self, session: str) -> socket.socket:
        """A socket holding `session`'s event stream (GET /mcp), its head read."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.sendall(
            (
                f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                f"Accept: text/event-stream\r\nMcp-Session-Id: {session}\r\n"
                "Mcp-Protocol-Version: 2025-06-18\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, head
            head += chunk
        assert head.startswith(b"HTTP/1.1 200"), head
        return sock

    def usage(self) -> tuple[int, int]:
        """(RSS in KB, open files) of the server process."""
        with open(f"/proc/{self.process.pid}/status", encoding="ascii") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
        return rss, len(os.listdir(f"/proc/{self.process.pid}/fd"))


TOKEN = "s3cret-token"


def start(
    tmp_path: Path,
    *,
    files: int | None = None,
    token: bool = False,
    deadlines: str = "",
    home: Path | None = None,
    sessions: int | None = None,
) -> Iterator[Server]:
    """A server over one skill under `tmp_path`; in `home` (`conftest.isolated_env`)
    for a fixture wider than one test, else in the test's own isolated home."""
    env = dict(os.environ) if home is None else isolated_env(home)
    env["SKILLPACK_HTTP_DEADLINES"] = deadlines
    tree = write(tmp_path / "skills", {"alpha/SKILL.md": skill_md("alpha")})
    token_args: tuple[str, ...] = ()
    if token:
        (tmp_path / "token").write_text(TOKEN + "\n", encoding="utf-8")
        token_args = ("--token-file", str(tmp_path / "token"))
    cache = Path(env["SKILLPACK_CACHE_DIR"])
    stderr_path = tmp_path / "server.err"

    if sessions is not None:
        env[MAX_SESSIONS_ENV] = str(sessions)

    def limit() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    with (
        stderr_path.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            [
                *SERVE,
                *("--transport", "http", "--port", "0", "--json", "--root", str(tree)),
                *("--no-user", "--no-system"),
                *token_args,
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            preexec_fn=limit,  # noqa: PLW1509 - only setrlimit, before exec
        ) as process,
    ):
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line, stderr_path.read_text(encoding="utf-8")
            port = int(json.loads(line)["url"].split(":")[2].split("/")[0])
            yield Server(process, port, stderr_path, cache, TOKEN if token else None)
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from start(tmp_path)


# The servers below serve several tests each (one start per module): those tests change
# no skill and close the connections they open; the sessions they leave are a few of
# the 500 a server keeps.


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("token-server")
    yield from start(base, token=True, home=base / "home")


@pytest.fixture(scope="module")
def quick_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("quick-server")
    yield from start(base, deadlines=QUICK_DEADLINES, home=base / "home")


@pytest.fixture(scope="module")
def quick_token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("quick-token-server")
    yield from start(base, token=True, deadlines=QUICK_DEADLINES, home=base / "home")


@pytest.fixture
def small_server(tmp_path: Path) -> Iterator[Server]:
    yield from start(tmp_path, files=256)


def test_2000_sessions_that_never_close_hold_rss_and_open_files_bounded(
    server: Server,
) -> None:
    """Bound: at most MAX_SESSIONS (500) sessions, every new client admitted in the
    place of the least recently used idle one; RSS grows by under 64 MB over the start,
    open files by under 16 (the index is one shared connection)."""
    first = server.open_session()
    assert server.search(first)
    rss0, files0 = server.usage()
    statuses: dict[int, int] = {}
    for n in range(2000):
        status, session, _ = server.post(INIT)
        statuses[status] = statuses.get(status, 0) + 1
        if status == 200 and session and n % 25 == 0:
            assert server.post(INITIALIZED, session)[0] == 202
            assert server.search(session)
    rss, files = server.usage()

    assert statuses == {200: 2000}
    assert rss - rss0 < 64 * 1024, (rss0, rss)
    assert files - files0 < 16, (files0, files)
    assert server.post(SEARCH, first)[0] == 404  # idle the longest: its place was taken
    log = server.stderr.read_text(encoding="utf-8")
    assert log.count(f"{MAX_SESSIONS} client sessions are open") == 1, log[:2000]
    assert "Traceback" not in log


def test_a_deeply_nested_tool_argument_over_http_gets_the_invalid_param_result(
    token_server: Server,
) -> None:
    """A `limit` nested 300 (past the SDK's parser), 1,000 and 100,000 arrays deep: the
    body is read with its nesting cut, so the tool's own check answers the call."""
    server = token_server
    session = server.open_session()
    for depth in (300, 1_000, 100_000):
        deep = "[" * depth + "3" + "]" * depth
        body = SEARCH.replace('"query": "alpha"}', f'"query": "alpha", "limit": {deep}}}')
        status, _, reply = server.post(body, session)
        assert status == 200, reply[:300]
        data = [line[5:] for line in reply.decode().splitlines() if line.startswith("data:")]
        error = json.loads(data[-1] if data else reply)["result"]["structuredContent"]["error"]
        assert error["code"] == "INVALID_PARAM"
        assert error["message"].startswith("`limit` of skill_search nests arrays or objects")
    assert server.search(session)


@pytest.fixture
def five_sessions(tmp_path: Path) -> Iterator[Server]:
    yield from start(tmp_path, sessions=5)


def test_a_full_session_table_admits_a_new_client_in_the_least_recently_used_idle_place(
    five_sessions: Server,
) -> None:
    """Abandoned sessions fill the table (5 here, by MAX_SESSIONS_ENV): a new client
    is admitted, the session idle the longest makes room and says so in the log, a
    session in use keeps its place, one holding an event stream (a request in
    flight) is never closed, and only a table of busy sessions refuses (503)."""
    server = five_sessions
    streaming = server.open_session()
    stream = server.open_stream(streaming)
    try:
        abandoned = [server.open_session() for _ in range(3)]
        used = server.open_session()
        assert server.search(used)  # now `used` is the most recently used

        newcomer = server.open_session()  # a sixth: `abandoned[0]` makes room

        assert server.search(newcomer) and server.search(used)
        assert server.post(SEARCH, abandoned[0])[0] == 404
        assert all(server.search(s) for s in abandoned[1:])
        for _ in range(10):  # every new client admitted, the streaming one kept
            assert server.post(INIT)[0] == 200
        assert server.post(SEARCH, newcomer)[0] == 404
        log = server.stderr.read_text(encoding="utf-8")
        assert log.count("5 client sessions are open (the most it keeps)") == 1, log
        assert "least recently used idle session" in log
        # Every other session busy too: nothing idle to close, so 503.
        busy = [server.open_session() for _ in range(4)]
        streams = [server.open_stream(s) for s in busy]
        try:
            assert server.post(INIT)[0] == 503
        finally:
            for sock in streams:
                sock.close()
        sock_ok = server.search(streaming)
    finally:
        stream.close()
    assert sock_ok
    assert "Traceback" not in server.stderr.read_text(encoding="utf-8")


STREAMS = 180
"""Event streams held open in the file-handle test: with the server's own files (about
25) and the connections waiting for a head (`PENDING_MAX`, 64) more than 256, yet under
uvicorn's connection limit there (192)."""


def test_out_of_file_handles_is_one_line_and_the_server_answers_after(
    small_server: Server,
) -> None:
    server = small_server
    session = server.open_session()
    assert server.search(session)
    index = server.cache / "index.sqlite3"
    assert index.is_file()

    # A session's event stream (GET /mcp) stays open as long as its client keeps it:
    # no deadline closes it, so the server's files run out for certain once the
    # connections waiting for a head come on top, however slowly the machine runs.
    held: list[socket.socket] = []
    try:
        for _ in range(STREAMS):
            held.append(server.open_stream(server.open_session()))
        for _ in range(300):
            if "out of file handles" in server.stderr.read_text(encoding="utf-8"):
                break
            try:
                held.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
            except OSError:
                time.sleep(0.2)  # the backlog is full while the server cannot accept
        _wait_for(lambda: "out of file handles" in server.stderr.read_text(encoding="utf-8"))
    finally:
        for sock in held:
            sock.close()

    _wait_for(lambda: _answers(server, session))
    assert server.open_session()
    log = server.stderr.read_text(encoding="utf-8")
    assert log.count("out of file handles") == 1, log[:2000]
    assert "Traceback" not in log
    assert len(log) < 2000
    assert index.is_file()


def _answers(server: Server, session: str) -> bool:
    try:
        return server.search(session)
    except OSError:
        return False


def _wait_for(condition: Callable[[], bool], seconds: float = 30, *, required: bool = True) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            assert not required, "condition not reached"
            return
        time.sleep(0.2)


@pytest.mark.parametrize(
    "body",
    [b'{"a":' * 100_000 + b"1" + b"}" * 100_000, b"[" * 100_000 + b"]" * 100_000, b"{nope"],
    ids=["deep-object", "deep-array", "malformed"],
)
def test_deep_and_malformed_bodies_are_the_json_rpc_parse_error(
    token_server: Server, body: bytes
) -> None:
    status, _, reply = token_server.post(body)
    assert status == 400 and json.loads(reply)["error"]["code"] == -32700
    assert token_server.open_session()


def test_connections_without_the_token_cannot_take_the_places_of_clients(
    token_server: Server,
) -> None:
    server = token_server
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(300)]
    try:
        for _ in range(20):
            assert (
                Server(server.process, server.port, server.stderr, server.cache).post(INIT)[0]
                == 401
            )
        assert server.search(server.open_session())
    finally:
        for sock in idle:
            sock.close()


def test_a_connection_that_sends_no_request_head_is_closed(quick_token_server: Server) -> None:
    with socket.create_connection(
        ("127.0.0.1", quick_token_server.port), timeout=QUICKLY_S
    ) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")
        # Closed by the server (its head deadline), before this socket's own timeout.
        assert sock.recv(1024) == b""


def test_a_request_whose_body_never_comes_is_closed(quick_server: Server) -> None:
    server = quick_server
    with socket.create_connection(("127.0.0.1", server.port), timeout=QUICKLY_S) as sock:
        sock.sendall(
            (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                "Content-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
            ).encode()
        )
        # Closed by the server (its body deadline after the head); before, it waited forever.
        assert sock.recv(1024) == b""
    assert server.search(server.open_session())


def test_a_request_head_drip_fed_byte_by_byte_is_closed(
    quick_server: Server, drip_until_closed: Callable[[int, str], float]
) -> None:
    # The head's own deadline (from the connection's start) closes it.
    assert drip_until_closed(quick_server.port, "/mcp") < QUICKLY_S


def test_the_session_cap_comes_from_the_environment_or_is_refused_clearly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from skillpack._errors import UsageError
    from skillpack.mcp._http import session_cap

    monkeypatch.delenv(MAX_SESSIONS_ENV, raising=False)
    assert session_cap() == MAX_SESSIONS
    monkeypatch.setenv(MAX_SESSIONS_ENV, " 7 ")
    assert session_cap() == 7
    for bad in ("0", "-3", "many"):
        monkeypatch.setenv(MAX_SESSIONS_ENV, bad)
        with pytest.raises(UsageError, match="not a positive whole number of sessions"):
            session_cap()


class FakeScope:
    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.cancel_called = False

    def cancel(self) -> None:
        self.cancel_called = True


class FakeTransport:
    def __init__(self, deadline: float, in_flight: int = 0) -> None:
        self.idle_scope = FakeScope(deadline)
        self._requests_in_flight = in_flight


class FakeManager:
    def __init__(self, cap: int, transports: dict[str, FakeTransport]) -> None:
        self.max_sessions = cap
        self._server_instances = dict(transports)
        self._session_owners = {key: "owner" for key in transports}
        self.admitted = 0

    def _admit_session(self, requestor: object) -> str:
        self.admitted += 1
        return f"new{self.admitted}"


def test_make_room_closes_the_least_recently_used_idle_session_only_when_full() -> None:
    from skillpack.mcp._http import evict_on_admit, make_room, session_room

    busy, old, recent = FakeTransport(1.0, in_flight=1), FakeTransport(5.0), FakeTransport(9.0)
    manager = FakeManager(3, {"busy": busy, "old": old, "recent": recent})
    roomy = FakeManager(4, {"old": FakeTransport(5.0)})
    assert make_room(roomy, session_room(4)) is None  # room left

    evict_on_admit(manager)
    assert manager._admit_session(None) == "new1"

    assert set(manager._server_instances) == {"busy", "recent"}
    assert "old" not in manager._session_owners and old.idle_scope.cancel_called
    assert not busy.idle_scope.cancel_called and not recent.idle_scope.cancel_called
    all_busy = FakeManager(1, {"busy": FakeTransport(1.0, in_flight=2)})
    assert make_room(all_busy, session_room(1)) is None
    assert len(all_busy._server_instances) == 1
    assert make_room(object(), session_room(1)) is None  # another SDK's shape: left to it
    evict_on_admit(object())  # nothing to wrap


def test_a_body_is_read_whole_and_a_deep_request_cut_else_passed_as_it_comes() -> None:
    import anyio

    from skillpack.mcp._http import _clipped
    from skillpack.mcp._stdio import MAX_LINE_BYTES

    deep = b"[" * 1_000 + b"]" * 1_000
    request = b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"p": ' + deep + b"}}"

    def received(*messages: dict[str, object], reads: int) -> list[Any]:
        queue = list(messages)

        async def receive() -> dict[str, object]:
            return queue.pop(0)

        async def main() -> list[Any]:
            clipped = _clipped(receive)
            return [await clipped() for _ in range(reads)]

        return anyio.run(main)

    half = len(request) // 2
    [whole] = received(
        {"type": "http.request", "body": request[:half], "more_body": True},
        {"type": "http.request", "body": request[half:]},
        reads=1,
    )
    assert json.loads(whole["body"])["id"] == 1 and len(whole["body"]) < len(request)
    gone: dict[str, object] = {"type": "http.disconnect"}
    assert received(gone, reads=1) == [gone]
    first, then = received(
        {"type": "http.request", "body": b"[[", "more_body": True}, gone, reads=2
    )
    assert first == {"type": "http.request", "body": b"[[", "more_body": True} and then == gone
    big = b"x" * (MAX_LINE_BYTES + 1)
    first, rest = received(
        {"type": "http.request", "body": big, "more_body": True},
        {"type": "http.request", "body": deep},
        reads=2,
    )
    assert first["body"] == big and first["more_body"] is True
    assert rest == {"type": "http.request", "body": deep}  # past the bound: as it comes
