"""The HTTP transport's guards: the token, Host and Origin checks, the size limit read
from Content-Length, clients that leave mid-request, the token file's mode, a full
session table."""

from __future__ import annotations

import http.client
import json
import os
import socket
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import pytest
from rpc_support import SERVER_ARGS, write_project

from conftest import QUICK_DEADLINES, QUICKLY_S, isolated_env
from skillpack.rpc import Client, RpcError
from skillpack.rpc._client import serve_command
from skillpack.rpc._codes import RPC_CODES
from skillpack.rpc._frame import MAX_MESSAGE_BYTES

ALLOWED_ORIGIN = "http://localhost:5173"
LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "skills.list"}).encode()


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    info: dict[str, Any]
    token: str

    @property
    def port(self) -> int:
        return int(self.info["url"].rsplit(":", 1)[1])

    def request(
        self,
        method: str = "POST",
        path: str = "/rpc",
        body: bytes | None = LIST,
        headers: dict[str, str] | None = None,
        *,
        token: str | None = "default",
    ) -> tuple[int, dict[str, str], bytes]:
        sent = {"Content-Type": "application/json"}
        if token is not None:
            sent["Authorization"] = f"Bearer {self.token if token == 'default' else token}"
        sent.update(headers or {})
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()


def start(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> Served:
    """`serve` over HTTP on a free port with `flags`, once it has printed its address."""
    project = write_project(tmp_path)
    process = subprocess.Popen(
        [
            *serve_command(),
            *flags,
            "--port",
            "0",
            "--json",
            "--cwd",
            str(project),
            "--allow-origin",
            ALLOWED_ORIGIN,
            *SERVER_ARGS,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    stdout = cast(IO[bytes], process.stdout)
    info = json.loads(stdout.readline())
    token = Path(info["token_file"]).read_text(encoding="utf-8").strip()
    return Served(process=process, info=info, token=token)


def stop(served: Served) -> str:
    """Stop the server; what it wrote on stderr."""
    served.process.terminate()
    served.process.wait(timeout=30)
    cast(IO[bytes], served.process.stdout).close()
    stderr = cast(IO[bytes], served.process.stderr)
    try:
        return stderr.read().decode("utf-8")
    finally:
        stderr.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the tests that change nothing it serves (one start, not twenty)."""
    base = tmp_path_factory.mktemp("served")
    yield from serve(base, home=base / "home")


@pytest.fixture
def own_served(tmp_path: Path) -> Iterator[Served]:
    """A server of the test's own: for a test that stops it or changes its skills."""
    yield from serve(tmp_path)


@pytest.fixture(scope="module")
def quick_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the tests of the deadlines (they change nothing it serves)."""
    base = tmp_path_factory.mktemp("quick-served")
    yield from serve(base, deadlines=QUICK_DEADLINES, home=base / "home")


def serve(tmp_path: Path, *, deadlines: str = "", home: Path | None = None) -> Iterator[Served]:
    """A server of a project under `tmp_path` writing its token into a private file; in
    `home` (`conftest.isolated_env`) for a fixture wider than one test, else in the
    test's own isolated home."""
    env = dict(os.environ) if home is None else isolated_env(home)
    env["SKILLPACK_HTTP_DEADLINES"] = deadlines
    token_file = tmp_path / "private" / "token"
    token_file.parent.mkdir()
    server = start(tmp_path, "--transport", "http", "--token-file-out", str(token_file), env=env)
    yield server
    stop(server)


def test_a_token_read_from_token_file_is_required_and_the_file_kept(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("my-own-token-0123456789\n", encoding="utf-8")
    server = start(tmp_path, "--transport", "http", "--token-file", str(token_file))
    try:
        assert server.token == "my-own-token-0123456789"
        assert server.info["token_file"] == str(token_file)
        assert server.request()[0] == 200
        assert server.request(token="other")[0] == 401
    finally:
        stderr = stop(server)
    assert token_file.read_text(encoding="utf-8") == "my-own-token-0123456789\n"
    assert "deprecated" not in stderr


def test_the_old_spellings_still_serve_and_say_they_are_deprecated(tmp_path: Path) -> None:
    token_file = tmp_path / "written"  # serve --token-file used to write the token
    server = start(tmp_path, "--http", "--token-file", str(token_file))
    try:
        assert server.request()[0] == 200
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    finally:
        stderr = stop(server)
    assert "deprecated: serve --http; write --transport http" in stderr
    assert "write --token-file-out for this" in stderr
    assert not token_file.exists()


def test_the_token_file_is_private_printed_at_start_and_removed_at_the_end(
    own_served: Served,
) -> None:
    served = own_served
    path = Path(served.info["token_file"])
    assert path.name == "token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(served.token) >= 32
    assert served.info["rpc"] == served.info["url"] + "/rpc"
    served.process.terminate()
    assert served.process.wait(timeout=30) == 0
    assert not path.exists()


def test_the_default_token_file_lives_in_a_private_folder(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = write_project(tmp_path)
    with Client.spawn_http("--cwd", str(project), *SERVER_ARGS) as client:
        assert client.skills_list()["data"][0]["cwd"] == str(project)
        files = list((isolated_home / ".config" / "skillpack" / "serve").iterdir())
        assert len(files) == 1
        assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
        assert stat.S_IMODE(files[0].parent.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("token", "method", "path"),
    [
        (None, "POST", "/rpc"),
        ("wrong", "POST", "/rpc"),
        ("", "POST", "/rpc"),
        (None, "GET", "/events"),
        ("wrong", "GET", "/events"),
    ],
)
def test_a_missing_or_wrong_token_is_401(
    served: Served, token: str | None, method: str, path: str
) -> None:
    status, headers, body = served.request(method, path, token=token)
    assert status == 401
    assert headers["WWW-Authenticate"].startswith("Bearer")
    assert "token" in json.loads(body)["error"]["message"]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example:80"}, 421),
        ({"Host": "attacker.test"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
    ],
)
def test_foreign_hosts_are_421_and_foreign_origins_403(
    served: Served, headers: dict[str, str], status: int
) -> None:
    """The same answers as `skillpack mcp --transport http` (the shared guard)."""
    got, _, body = served.request(headers=headers)
    assert got == status
    assert "error" in json.loads(body)


def test_an_allowed_origin_gets_its_cors_header(served: Served) -> None:
    status, headers, body = served.request(headers={"Origin": ALLOWED_ORIGIN})
    assert status == 200
    assert headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN
    assert json.loads(body)["result"]["data"][0]["skills"]
    status, headers, _ = served.request("OPTIONS", headers={"Origin": ALLOWED_ORIGIN}, body=None)
    assert status == 204
    assert "Authorization" in headers["Access-Control-Allow-Headers"]


def test_a_body_over_four_mib_is_refused_from_its_content_length_alone(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(
            (
                f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                f"Authorization: Bearer {served.token}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {MAX_MESSAGE_BYTES + 1}\r\n\r\n"
            ).encode()
        )
        # Not one byte of the body was sent: the answer comes from the header alone.
        answer = sock.makefile("rb").read()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert json.loads(body)["error"]["code"] == -32012


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "status"),
    [
        ("POST", "/other", {}, LIST, 404),
        ("GET", "/", {}, None, 404),
        ("POST", "/rpc", {"Content-Type": "text/plain"}, LIST, 415),
        ("POST", "/rpc", {"Content-Length": "-5"}, None, 400),
    ],
)
def test_other_requests_get_a_plain_status(
    served: Served,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None,
    status: int,
) -> None:
    assert served.request(method, path, body, headers)[0] == status


def test_garbage_over_http_gets_json_rpc_errors_and_the_server_keeps_serving(
    served: Served,
) -> None:
    status, _, body = served.request(body=b"{not json")
    assert status == 200 and json.loads(body)["error"]["code"] == -32700
    status, _, body = served.request(body=b'{"jsonrpc": "2.0", "method": "skills.list"}')
    assert status == 204 and body == b""
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(b"\x00\xff garbage that is not HTTP\r\n\r\n")
        sock.makefile("rb").read()
    assert served.request()[0] == 200


@pytest.mark.parametrize(
    "body",
    [b'{"a":' * 100_000 + b"1" + b"}" * 100_000, b"[" * 100_000 + b"]" * 100_000],
    ids=["object", "array"],
)
def test_a_deeply_nested_body_is_a_parse_error(served: Served, body: bytes) -> None:
    status, _, reply = served.request(body=body)
    assert status == 200 and json.loads(reply)["error"]["code"] == -32700
    assert served.request()[0] == 200


def test_connections_without_the_token_cannot_take_the_slots(served: Served) -> None:
    """Idle connections, and connections refused by the guard, never hold one of the
    128 slots: a client with the token gets in at once."""
    idle = [socket.create_connection(("127.0.0.1", served.port), timeout=30) for _ in range(200)]
    try:
        for _ in range(20):
            assert served.request(token="wrong")[0] == 401
        assert served.request()[0] == 200
    finally:
        for sock in idle:
            sock.close()


def test_a_connection_that_sends_no_request_head_is_closed(quick_served: Served) -> None:
    with socket.create_connection(("127.0.0.1", quick_served.port), timeout=QUICKLY_S) as sock:
        sock.sendall(b"POST /rpc HTTP/1.1\r\n")
        # Closed by the server (its head deadline), before this socket's own timeout.
        assert sock.recv(1024) == b""


def test_a_request_whose_body_never_comes_is_closed(quick_served: Served) -> None:
    served = quick_served
    with socket.create_connection(("127.0.0.1", served.port), timeout=QUICKLY_S) as sock:
        sock.sendall(
            (
                f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                f"Authorization: Bearer {served.token}\r\n"
                "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            ).encode()
        )
        # Closed by the server (its body deadline after the head): the admitted
        # connection's own read timeout (IDLE_SECONDS, 120 s) is past this socket's.
        assert sock.recv(1024) == b""
    assert served.request()[0] == 200


def test_a_request_head_drip_fed_byte_by_byte_is_closed(
    quick_served: Served, drip_until_closed: Callable[[int, str], float]
) -> None:
    # Each byte comes within the server's per-read timeout; the head's own deadline
    # closes it.
    assert drip_until_closed(quick_served.port, "/rpc") < QUICKLY_S


def test_a_client_leaving_mid_request_does_not_disturb_the_others(served: Served) -> None:
    failures: list[str] = []
    stop = threading.Event()

    def steady() -> None:
        while not stop.is_set():
            status, _, body = served.request()
            if status != 200 or "result" not in json.loads(body):
                failures.append(f"{status} {body[:200]!r}")

    worker = threading.Thread(target=steady)
    worker.start()
    try:
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
                sock.sendall(
                    (
                        f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                        f"Authorization: Bearer {served.token}\r\n"
                        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                        '{"jsonrpc": "2.0", "id": 1, "meth'
                    ).encode()
                )
    finally:
        stop.set()
        worker.join()
    assert failures == []
    assert served.request()[0] == 200
    assert served.process.poll() is None


def test_events_streams_skills_changed_to_every_listener(
    own_served: Served, tmp_path: Path
) -> None:
    served = own_served
    clients = [Client.http(served.info["url"], token=served.token) for _ in range(2)]
    try:
        for client in clients:
            client.listen()
        clients[0].skills_list()
        project = tmp_path / "project"
        os.remove(project / ".agents" / "skills" / "alpha" / "SKILL.md")
        for client in clients:
            note = client.wait_for(
                lambda n: [s["name"] for s in n["params"]["removed"]] == ["alpha"], timeout=20
            )
            assert note is not None
    finally:
        for client in clients:
            client.close()


def test_a_full_session_table_admits_a_new_client_in_the_least_recently_used_idle_place(
    tmp_path: Path,
) -> None:
    """Clients that never close their sessions fill the table (`--max-sessions 3`): a
    new client is admitted, the session idle the longest makes room (its id then
    answers session-not-found), one in use keeps its place, and the server says so
    once, however many clients come after."""
    token_file = tmp_path / "private" / "token"
    token_file.parent.mkdir()
    server = start(
        tmp_path,
        "--transport",
        "http",
        "--max-sessions",
        "3",
        "--token-file-out",
        str(token_file),
    )
    try:
        with Client.http(server.info["url"], token=server.token) as client:
            abandoned = [client.session_open()["session"] for _ in range(2)]
            used = client.session_open()["session"]
            client.turn_prepare(used, "hello")  # now `used` is the most recently used

            newcomer = client.session_open()["session"]  # a fourth: `abandoned[0]` goes

            assert client.turn_prepare(newcomer, "hello") and client.turn_prepare(used, "hi")
            with pytest.raises(RpcError) as gone:
                client.turn_prepare(abandoned[0], "hello")
            assert gone.value.code == RPC_CODES["session-not-found"]
            assert client.turn_prepare(abandoned[1], "hello")
            for _ in range(500):  # a flood: every new client admitted
                client.session_open()
            with pytest.raises(RpcError):
                client.turn_prepare(newcomer, "hello")
    finally:
        stderr = stop(server)
    assert stderr.count("3 sessions are open (the most it keeps") == 1, stderr
    assert "least recently used idle session" in stderr
    assert "Traceback" not in stderr
