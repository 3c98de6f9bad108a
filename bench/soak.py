"""Each server under bounded mixed load for a fixed time: does it hold for weeks?

    python bench/soak.py                                   # 60 s per server, all four
    python bench/soak.py --seconds 600                     # the 10-minute soak
    python bench/soak.py --seconds 20 --servers mcp-http,serve-stdio --json

Each server (`mcp-http`: `skillpack mcp --transport http`, `mcp-stdio`: `skillpack
mcp`, `serve-http`: `skillpack serve --transport http`, `serve-stdio`: `skillpack
serve`) runs as a subprocess on 127.0.0.1 over a generated skills tree (gen_corpus)
whose project configures one `[[mcp_servers]]` upstream: `tests/hostile/
hostile_upstream.py huge-file`, which answers every read of a `notes.txt` with 300 MB.
For `--seconds`, after `--warmup` seconds of the same traffic, it gets:

- **well-formed requests** from `--clients` concurrent clients, each in its own session
  (over stdio they share the pipe): list pages, get/load, search, file reads (the
  `serve` mix of bench_rpc.py; for `mcp`, `skills/list` pages, `skill_search`,
  `skill_load`, `skill_read_file` and `resources/read`). Each must succeed: any error
  counts.
- **hostile traffic** at the same time, each kind from its own thread:
  sessions opened and never closed (HTTP MCP sessions that never send DELETE;
  `session.open` without `session.close`), slow clients (a request head drip-fed a
  byte a second, a body promised by Content-Length and never sent, connections that
  send nothing), bad bodies (malformed JSON, 100,000-deep arrays and objects; the
  HTTP answers must be the JSON-RPC parse error, -32700) and the upstream flood (a
  read of the upstream's `notes.txt`, which must fail with the "over ... bytes" error).

With `--requests N` a server's run ends early, once N well-formed requests were
answered and every hostile loop sent its traffic at least once (the smallest run that
still fills every field of the report; `tests/test_bench_soak.py` runs it).

RSS (`VmRSS` of /proc/PID/status) and open files (entries of /proc/PID/fd) are read at
the start (after the warm-up) and at the end, each time with the traffic paused and the
hostile connections closed, once the server's open-file count stopped moving for
`--settle` seconds (2). The
warm-up of `mcp-http` first fills its session table (`MAX_SESSIONS`, or `--sessions`)
with sessions that never close, so the start is the steady state a server left running
reaches.

Exit 1 when a well-formed request failed, RSS grew by `RSS_GROWTH_LIMIT` (10%) or more
from start to end, or open files at the end exceed the start by more than
`FILES_SLACK`.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    Stats,
    ensure_corpus,
    format_table,
    isolated_env,
    machine_info,
    work_dir,
)
from bench_rpc import Call, Request, rss_kib, search_query
from bench_rpc import failed as serve_failed
from bench_rpc import plan as serve_plan

SERVERS = ("mcp-http", "mcp-stdio", "serve-http", "serve-stdio")
RSS_GROWTH_LIMIT = 0.10
FILES_SLACK = 8
"""Open files the end may have over the start and still be flat: an upstream
connection that happens to be open (its pipes), a file the watcher holds."""
UPSTREAM = BENCH_DIR.parent / "tests" / "hostile" / "hostile_upstream.py"
PROTOCOL = "2025-06-18"
DEEP = 100_000
BAD_BODIES = (
    b"{nope",
    b"[" * DEEP + b"]" * DEEP,
    b'{"a":' * DEEP + b"1" + b"}" * DEEP,
)
MCP_MIX = (
    ("skill_search", 30),
    ("skill_load", 25),
    ("skill_read_file", 20),
    ("resources/read", 15),
    ("skills/list", 10),
)


class CallFailed(RuntimeError):
    """A request got an error answer (or none)."""


# -- the servers ----------------------------------------------------------------------


def cli(errors: Path) -> list[str]:
    """This interpreter's skillpack, its stderr appended to `errors` (the shell execs
    into Python, so the process id is the server's)."""
    return [
        "sh",
        "-c",
        'f="$1"; shift; exec "$@" 2>>"$f"',
        "sh",
        str(errors),
        sys.executable,
        "-c",
        "from skillpack.cli import main; main()",
    ]


def write_project(work: Path) -> Path:
    """The project: a `.git` marker and a config with the flooding upstream."""
    project = work / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".skillpack").mkdir(exist_ok=True)
    (project / ".skillpack" / "config.toml").write_text(
        "[[mcp_servers]]\n"
        'name = "up"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(UPSTREAM))}, 'huge-file']\n"
        "timeout = 60\n",
        encoding="utf-8",
    )
    return project


class McpHttp:
    """One client of `skillpack mcp --transport http`: a keep-alive connection and a
    session (initialized), requests as JSON-RPC over POST /mcp."""

    def __init__(self, port: int, *, timeout: float = 120) -> None:
        self.port = port
        self.timeout = timeout
        self.session: str | None = None
        self._connection: http.client.HTTPConnection | None = None
        self._ids = 0

    def open(self) -> McpHttp:
        status, session, reply = self.post(_initialize(1))
        if status != 200 or not session:
            raise CallFailed(f"initialize: HTTP {status} {reply[:200]!r}")
        self.session = session
        status, _, reply = self.post(_message("notifications/initialized"))
        if status != 202:
            raise CallFailed(f"notifications/initialized: HTTP {status} {reply[:200]!r}")
        return self

    def post(self, body: bytes) -> tuple[int, str | None, bytes]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["Mcp-Protocol-Version"] = PROTOCOL
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=self.timeout
                )
            try:
                self._connection.request("POST", "/mcp", body, headers)
                response = self._connection.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # The server closed a kept-alive connection between two requests.
                self.close()
                if attempt == 2:
                    raise
                continue
            if response.getheader("connection", "").lower() == "close":
                self.close()
            return response.status, response.getheader("mcp-session-id"), data
        raise AssertionError("unreachable")

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self._ids += 1
        status, _, body = self.post(_message(method, params, self._ids))
        if status == 404 and self.session:
            # The server closed the session (a full table hands an idle one's place to
            # a new client): as the MCP spec asks, start a new session and ask again.
            self.session = None
            self.open()
            status, _, body = self.post(_message(method, params, self._ids))
        if status != 200:
            raise CallFailed(f"{method}: HTTP {status} {body[:200]!r}")
        return _result(method, _last_message(body))

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _message(method: str, params: dict[str, Any] | None = None, ident: int | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if ident is not None:
        message["id"] = ident
    return json.dumps(message).encode()


def _initialize(ident: int) -> bytes:
    params = {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "soak", "version": "1"},
    }
    return _message("initialize", params, ident)


def _last_message(body: bytes) -> dict[str, Any]:
    """The JSON-RPC message of a reply: a JSON body, or the last event of a stream."""
    text = body.decode("utf-8", "replace")
    events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    message: dict[str, Any] = json.loads(events[-1] if events else text)
    return message


def _result(method: str, message: dict[str, Any]) -> Any:
    if "error" in message:
        raise CallFailed(f"{method}: {message['error']}")
    return message["result"]


@dataclass
class Running:
    """A started server: its process id, how to call it, what hostile traffic it gets."""

    name: str
    pid: int
    calls: Callable[[], Call]
    """A new well-formed client (its own session): a function (method, params)."""
    close: Callable[[], None]
    port: int | None = None
    token: str | None = None
    raw_line: Callable[[bytes], None] | None = None
    """stdio: write one raw line into the server's input."""
    shared: list[Any] = field(default_factory=list)


def start(name: str, work: Path, args: list[str], env: dict[str, str]) -> Running:
    errors = work / f"{name}.stderr"
    errors.write_text("", encoding="utf-8")
    base = cli(errors)
    if name == "mcp-http":
        process = subprocess.Popen(
            [*base, "mcp", "--transport", "http", "--port", "0", "--json", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"mcp-http did not start: {errors.read_text()[-2000:]}")
        port = int(json.loads(line)["url"].split(":")[2].split("/")[0])
        clients: list[McpHttp] = []

        def http_calls() -> Call:
            client = McpHttp(port).open()
            clients.append(client)
            return client.call

        def stop() -> None:
            for client in clients:
                client.close()
            process.terminate()
            process.wait(timeout=60)

        return Running(name, process.pid, http_calls, stop, port=port, shared=clients)
    from skillpack.rpc import Client
    from skillpack.rpc._transport import StdioTransport

    if name == "mcp-stdio":
        argv = [*base, "mcp", *args]
        client = Client(
            lambda deliver: StdioTransport(argv, cwd=None, env=env, deliver=deliver), timeout=120
        )
        transport: Any = client._transport  # noqa: SLF001 - the pipe, for raw lines

        def raw_line(line: bytes) -> None:
            with transport._write_lock:  # noqa: SLF001 - one writer at a time
                transport.process.stdin.write(line + b"\n")
                transport.process.stdin.flush()

        client.call("initialize", json.loads(_initialize(0))["params"])
        raw_line(_message("notifications/initialized"))
        return Running(
            name,
            transport.process.pid,
            lambda: client.call,
            client.close,
            raw_line=raw_line,
        )
    if name == "serve-http":
        client = Client.spawn_http(*args, command=[*base, "serve"], env=env, timeout=120)
        transport = client._transport  # noqa: SLF001 - its process and token
        return Running(
            name,
            transport.process.pid,
            lambda: client.call,
            client.close,
            port=transport.port,
            token=transport.headers["Authorization"].split(" ", 1)[1],
        )
    client = Client.stdio(*args, command=[*base, "serve"], env=env, timeout=120)
    transport = client._transport  # noqa: SLF001

    def serve_raw(line: bytes) -> None:
        with transport._write_lock:  # noqa: SLF001
            transport.process.stdin.write(line + b"\n")
            transport.process.stdin.flush()

    return Running(
        name, transport.process.pid, lambda: client.call, client.close, raw_line=serve_raw
    )


# -- the workload ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Workload:
    names: list[str]
    files: list[tuple[str, str]]


def workload(work: Path, corpus_roots: list[str], project: Path) -> Workload:
    """The local skills' names and their `references/` files (upstream ones left out)."""
    from skillpack.discovery import DiscoveryOptions
    from skillpack.discovery._skill_files import list_skill_files
    from skillpack.rpc._live import Discovery, Live

    options = DiscoveryOptions(roots=corpus_roots, include_user=False, include_system=False)
    live = Live(
        Discovery(cwd=str(project), options=options),
        notify=lambda method, params: None,
    )
    try:
        catalog = live.workspace().live.catalog
        skills = [s for s in catalog.skills if s.scope != "mcp" and s.shadowed_by is None]
        names = [s.name for s in skills if s.model_invocable]
        files = []
        for skill in skills:
            listed, _ = list_skill_files(skill)
            files.extend((skill.name, f) for f in listed if f.startswith("references/"))
    finally:
        live.close()
    return Workload(names=names, files=files)


def mcp_plan(
    seed: int, count: int, load: Workload, pages: list[str | None], uris: list[str]
) -> list[Request]:
    rng = random.Random(seed)
    methods = [m for m, weight in MCP_MIX for _ in range(weight)]
    requests: list[Request] = []
    for _ in range(count):
        method = rng.choice(methods)
        if method == "skill_search":
            query = search_query(rng, load.names)
            requests.append(("tools/call", {"name": method, "arguments": {"query": query}}))
        elif method == "skill_load":
            requests.append(
                ("tools/call", {"name": method, "arguments": {"name": rng.choice(load.names)}})
            )
        elif method == "skill_read_file":
            skill, path = rng.choice(load.files)
            requests.append(
                ("tools/call", {"name": method, "arguments": {"skill": skill, "path": path}})
            )
        elif method == "resources/read":
            requests.append((method, {"uri": rng.choice(uris)}))
        else:
            cursor = rng.choice(pages)
            requests.append((method, {} if cursor is None else {"cursor": cursor}))
    return requests


def mcp_failed(method: str, result: Any) -> str | None:
    if method == "tools/call":
        content = result.get("structuredContent") or {}
        if result.get("isError") or not content.get("ok"):
            return f"tools/call: {json.dumps(result)[:300]}"
        return None
    if method == "resources/read":
        return None if result.get("contents") else "resources/read: no contents"
    if method == "skills/list":
        return None if result.get("skills") else "skills/list: an empty page"
    return None


def mcp_pages(call: Call) -> tuple[list[str | None], list[str]]:
    """Every `skills/list` cursor and the SKILL.md URIs of the local skills."""
    pages: list[str | None] = [None]
    uris: list[str] = []
    cursor: str | None = None
    while True:
        page = call("skills/list", {} if cursor is None else {"cursor": cursor})
        uris.extend(e["uri"] for e in page["skills"] if not e["uri"].startswith("skill://mcp/"))
        cursor = page.get("nextCursor")
        if cursor is None:
            return pages, uris
        pages.append(cursor)


# -- running --------------------------------------------------------------------------


class Gate:
    """Pauses every traffic thread (for a quiet measurement) and stops them."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._open = threading.Event()
        self._open.set()
        self._lock = threading.Lock()
        self._busy = 0

    @contextlib.contextmanager
    def turn(self) -> Iterator[bool]:
        """One unit of traffic; False (nothing to do) once stopping."""
        self._open.wait()
        with self._lock:
            self._busy += 1
        try:
            yield not self.stop.is_set()
        finally:
            with self._lock:
                self._busy -= 1

    def pause(self, timeout: float = 180) -> None:
        self._open.clear()
        deadline = time.monotonic() + timeout
        while self._busy and time.monotonic() < deadline:
            time.sleep(0.05)

    def resume(self) -> None:
        self._open.set()

    def sleep(self, seconds: float) -> None:
        self.stop.wait(seconds)


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    hostile: dict[str, int] = field(default_factory=dict)
    hostile_wrong: list[str] = field(default_factory=list)
    counting: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, seconds: float) -> None:
        if self.counting:
            with self.lock:
                self.latencies.append(seconds)

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)

    def sent(self, kind: str, wrong: str | None = None) -> None:
        with self.lock:
            self.hostile[kind] = self.hostile.get(kind, 0) + 1
            if wrong is not None:
                self.hostile_wrong.append(f"{kind}: {wrong}")


def well_formed(
    running: Running, index: int, load: Workload, gate: Gate, tally: Tally
) -> Callable[[], None]:
    call = running.calls()
    if running.name.startswith("serve"):
        session = call("session.open", {})["session"]
        requests = serve_plan(index, 500, load.names, load.files)
        check: Callable[[str, Any], str | None] = serve_failed
    else:
        session = None
        pages, uris = mcp_pages(call)
        requests = mcp_plan(index, 500, load, pages, uris)
        check = mcp_failed

    def loop() -> None:
        n = 0
        while True:
            with gate.turn() as go:
                if not go:
                    return
                method, params = requests[n % len(requests)]
                n += 1
                if session is not None and method in (
                    "skills.load",
                    "turn.prepare",
                    "skills.read_file",
                    "context.inspect",
                ):
                    params = {**params, "session": session}
                began = time.perf_counter()
                try:
                    problem = check(method, call(method, params))
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    problem = f"{method}: {exc!r}"
                if problem:
                    tally.error(problem)
                else:
                    tally.ok(time.perf_counter() - began)

    return loop


class Hostile:
    """The hostile traffic one server gets (module docstring), a loop per kind."""

    def __init__(
        self, running: Running, gate: Gate, tally: Tally, held: list[socket.socket]
    ) -> None:
        self.running, self.gate, self.tally, self.held = running, gate, tally, held
        self.client = running.calls()  # its own session, for the flood and bad bodies
        self.path = "/mcp" if running.name == "mcp-http" else "/rpc"
        self.rounds: dict[str, int] = {}
        """Rounds each loop finished, by the loop's name."""

    def each_ran(self) -> bool:
        """Whether every loop finished at least one round."""
        return len(self.rounds) == len(self.loops())

    def loops(self) -> list[Callable[[], None]]:
        if self.running.raw_line is not None:
            return [self.upstream_flood, self.bad_lines]
        return [self.upstream_flood, self.bad_bodies, self.never_closed, self.slow_clients]

    def _every(self, loop: str, seconds: float, one: Callable[[], None]) -> None:
        while True:
            with self.gate.turn() as go:
                if not go:
                    return
                one()
                with self.tally.lock:
                    self.rounds[loop] = self.rounds.get(loop, 0) + 1
            self.gate.sleep(seconds)

    def upstream_flood(self) -> None:
        """Every 5 s, a read of the upstream's 300 MB `notes.txt`: an error, "over"."""
        # By its qualified name on both surfaces: a local skill named `plain` cannot
        # take the read, and what is measured is the upstream's answer.
        arguments = {"skill": "up:plain", "path": "notes.txt"}
        if self.running.name.startswith("serve"):
            flood: Request = ("skills.read_file", arguments)
        else:
            flood = ("tools/call", {"name": "skill_read_file", "arguments": arguments})

        def one() -> None:
            try:
                text = json.dumps(self.client(*flood))
                wrong = None if "over" in text and "bytes" in text else text[:200]
            except Exception as exc:  # noqa: BLE001 - an error answer is what is wanted
                wrong = None if "over" in str(exc) else repr(exc)[:200]
            self.tally.sent("upstream-flood", wrong)

        self._every("upstream_flood", 5, one)

    def bad_lines(self) -> None:
        """stdio: a malformed or 100,000-deep line a second."""
        raw = self.running.raw_line
        assert raw is not None
        sent = [0]

        def one() -> None:
            raw(BAD_BODIES[sent[0] % len(BAD_BODIES)])
            sent[0] += 1
            self.tally.sent("bad-body")

        self._every("bad_lines", 1, one)

    def _post(self, body: bytes) -> bytes:
        port, token = self.running.port, self.running.token
        assert port is not None
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        session = self.running.shared[0].session if self.running.shared else None
        if session:  # past the session table's bound a body without one is refused first
            headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": PROTOCOL}
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            connection.request("POST", self.path, body, headers)
            return connection.getresponse().read()
        finally:
            connection.close()

    def bad_bodies(self) -> None:
        """HTTP: a malformed or 100,000-deep body a second; the answer must be -32700."""
        sent = [0]

        def one() -> None:
            try:
                body = self._post(BAD_BODIES[sent[0] % len(BAD_BODIES)])
                code = _last_message(body).get("error", {}).get("code")
                wrong = None if code == -32700 else body[:200].decode("utf-8", "replace")
            except Exception as exc:  # noqa: BLE001 - the answer is what is measured
                wrong = repr(exc)
            sent[0] += 1
            self.tally.sent("bad-body", wrong)

        self._every("bad_bodies", 1, one)

    def never_closed(self) -> None:
        """HTTP: two sessions a second that are never closed (once the table is full,
        each takes the least recently used idle one's place; refused only while every
        session is busy)."""

        def one() -> None:
            try:
                if self.running.name == "mcp-http":
                    status, _, _ = McpHttp(self.running.port or 0).post(_initialize(1))
                    wrong = None if status in (200, 503) else f"HTTP {status}"
                else:
                    self.client("session.open", {})
                    wrong = None
            except Exception as exc:  # noqa: BLE001 - refused while all are busy is right
                wrong = None if "session" in str(exc).lower() else repr(exc)
            self.tally.sent("session-never-closed", wrong)

        self._every("never_closed", 0.5, one)

    def slow_clients(self) -> None:
        """HTTP, every 2 s: a connection that sends nothing, one whose head drips two
        bytes every 2 s, one whose promised body never comes."""
        head = (
            f"POST {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{self.running.port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        ).encode()
        dripping: list[tuple[socket.socket, int]] = []

        def one() -> None:
            for kind in ("idle", "drip", "no-body"):
                try:
                    sock = socket.create_connection(("127.0.0.1", self.running.port or 0), 5)
                except OSError:
                    self.tally.sent(f"slow-{kind}")
                    continue
                self.held.append(sock)
                if kind == "drip":
                    dripping.append((sock, 0))
                elif kind == "no-body":
                    with contextlib.suppress(OSError):
                        sock.sendall(head)
                self.tally.sent(f"slow-{kind}")
            still = []
            for sock, sent in dripping:
                with contextlib.suppress(OSError):
                    sock.sendall(head[sent : sent + 2])
                    if sent + 2 < len(head):
                        still.append((sock, sent + 2))
            dripping[:] = still
            while len(self.held) > 300:  # this process's own files stay bounded
                with contextlib.suppress(OSError):
                    self.held.pop(0).close()

        self._every("slow_clients", 2, one)


def usage(pid: int) -> tuple[int, int]:
    """(RSS in KiB, open files) of `pid`."""
    return rss_kib(pid), len(list(Path(f"/proc/{pid}/fd").iterdir()))


def quiet_usage(pid: int, gate: Gate, held: list[socket.socket], settle: float) -> tuple[int, int]:
    """`usage` with the traffic paused and the hostile connections closed, once the
    open-file count has not moved for `settle` seconds (at most 30 s)."""
    gate.pause()
    while held:
        with contextlib.suppress(OSError):
            held.pop().close()
    last, since = -1, time.monotonic()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        files = usage(pid)[1]
        if files != last:
            last, since = files, time.monotonic()
        elif time.monotonic() - since >= settle:
            break
        time.sleep(min(0.25, settle / 4))
    return usage(pid)


def soak(
    name: str,
    work: Path,
    args: list[str],
    env: dict[str, str],
    load: Workload,
    options: argparse.Namespace,
) -> dict[str, Any]:
    running = start(name, work, args, env)
    gate, tally = Gate(), Tally()
    held: list[socket.socket] = []
    try:
        loops = [well_formed(running, i, load, gate, tally) for i in range(options.clients)]
        hostile = Hostile(running, gate, tally, held)
        loops += hostile.loops()
        if name == "mcp-http":
            for _ in range(options.sessions):  # the table full of sessions never closed
                McpHttp(running.port or 0).post(_initialize(1))
        threads = [threading.Thread(target=loop, daemon=True) for loop in loops]
        for thread in threads:
            thread.start()
        gate.sleep(options.warmup)
        rss0, files0 = quiet_usage(running.pid, gate, held, options.settle)
        tally.counting = True
        tally.errors.clear()
        began = time.monotonic()
        gate.resume()
        if options.requests is None:
            gate.sleep(options.seconds)
        else:
            deadline = began + options.seconds
            while time.monotonic() < deadline and not (
                len(tally.latencies) >= options.requests and hostile.each_ran()
            ):
                gate.sleep(0.02)
        rss1, files1 = quiet_usage(running.pid, gate, held, options.settle)
        wall = time.monotonic() - began
        gate.stop.set()
        gate.resume()
        for thread in threads:
            thread.join(timeout=180)
    finally:
        gate.stop.set()
        gate.resume()
        for sock in held:
            with contextlib.suppress(OSError):
                sock.close()
        running.close()
    stats = Stats.of(tally.latencies or [0.0])
    growth = (rss1 - rss0) / rss0
    log = (work / f"{name}.stderr").read_text(encoding="utf-8", errors="replace")
    return {
        "server": name,
        "seconds": round(wall, 1),
        "requests": len(tally.latencies),
        "errors": len(tally.errors),
        "first_errors": tally.errors[:5],
        "p50_ms": round(stats.median * 1000, 2),
        "p99_ms": round(stats.p99 * 1000, 2),
        "rss_start_kib": rss0,
        "rss_end_kib": rss1,
        "rss_growth": round(growth, 4),
        "files_start": files0,
        "files_end": files1,
        "hostile": dict(sorted(tally.hostile.items())),
        "hostile_wrong": len(tally.hostile_wrong),
        "first_hostile_wrong": tally.hostile_wrong[:5],
        "stderr_lines": len(log.splitlines()),
        "tracebacks": log.count("Traceback"),
        "ok": not tally.errors and growth < RSS_GROWTH_LIMIT and files1 - files0 <= FILES_SLACK,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="Measured seconds per server.")
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="Seconds before the start (default: a tenth of --seconds, 5 to 60).",
    )
    parser.add_argument(
        "--servers", default=",".join(SERVERS), help=f"Comma-separated, of {', '.join(SERVERS)}."
    )
    parser.add_argument("--clients", type=int, default=4, help="Concurrent well-formed clients.")
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument(
        "--sessions",
        type=int,
        default=None,
        help="Sessions that never close opened first on mcp-http (default: its MAX_SESSIONS).",
    )
    parser.add_argument(
        "--requests",
        type=int,
        default=None,
        help="End a server's run early, once this many well-formed requests were answered "
        "and every kind of hostile traffic was sent (--seconds stays the longest run).",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=2.0,
        help="Seconds the open-file count must stay still before RSS and files are read.",
    )
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    if options.requests is not None and options.requests < 1:
        parser.error(f"--requests must be 1 or more, not {options.requests}")
    if options.settle <= 0:
        parser.error(f"--settle must be over 0 seconds, not {options.settle}")
    servers = [s.strip() for s in options.servers.split(",") if s.strip()]
    unknown = [s for s in servers if s not in SERVERS]
    if unknown:
        parser.error(f"unknown server(s) {', '.join(unknown)}; choose from {', '.join(SERVERS)}")
    if options.sessions is None:
        from skillpack.mcp._http import MAX_SESSIONS

        options.sessions = MAX_SESSIONS
    if options.warmup is None:
        options.warmup = min(60.0, max(5.0, options.seconds / 10))
    results = []
    with work_dir(options.work_dir) as work:
        env = isolated_env(work)
        import os

        os.environ.update(env)
        corpus = ensure_corpus(work / "corpora", options.skills)
        project = write_project(work)
        roots = [str(r) for r in corpus.roots]
        load = workload(work, roots, project)
        args = ["--cwd", str(project), "--no-user", "--no-system"]
        for root in roots:
            args += ["--root", root]
        for name in servers:
            results.append(soak(name, work, args, env, load, options))
            if not options.json:
                print(f"{name}: done", file=sys.stderr, flush=True)
    data = {
        "seconds": options.seconds,
        "warmup": options.warmup,
        "clients": options.clients,
        "skills": options.skills,
        "results": results,
        "machine": machine_info(),
    }
    if options.json:
        print(json.dumps(data, indent=2))
    else:
        rows = [
            [
                r["server"],
                f"{r['requests']:,}",
                f"{r['p50_ms']:.1f} ms",
                f"{r['p99_ms']:.1f} ms",
                f"{r['rss_start_kib'] / 1024:.0f} -> {r['rss_end_kib'] / 1024:.0f} MiB",
                f"{r['rss_growth']:+.1%}",
                f"{r['files_start']} -> {r['files_end']}",
                r["errors"],
                sum(r["hostile"].values()),
                r["hostile_wrong"],
            ]
            for r in results
        ]
        print(
            f"{options.skills:,} skills, {options.clients} clients, {options.seconds:.0f} s "
            f"per server after {options.warmup:.0f} s warm-up"
        )
        print(
            format_table(
                [
                    "server",
                    "requests",
                    "p50",
                    "p99",
                    "RSS",
                    "growth",
                    "open files",
                    "errors",
                    "hostile",
                    "hostile wrong",
                ],
                rows,
            )
        )
        for r in results:
            for error in r["first_errors"] + r["first_hostile_wrong"]:
                print(f"{r['server']}: {error}")
        print("PASS" if all(r["ok"] for r in results) else "FAIL")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
