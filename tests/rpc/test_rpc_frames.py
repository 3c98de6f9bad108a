"""Bad input over stdio, byte for byte: garbage, truncated frames, oversized lines,
batches and interleaved requests; the server answers each and keeps serving."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import pytest
from rpc_support import SERVER_ARGS, write_project

from skillpack.rpc._client import serve_command
from skillpack.rpc._frame import MAX_MESSAGE_BYTES


class RawServer:
    """`skillpack serve --transport stdio` driven line by line."""

    def __init__(self, project: Path) -> None:
        self.process = subprocess.Popen(
            [*serve_command(), "--transport", "stdio", "--cwd", str(project), *SERVER_ARGS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.stdin = cast(IO[bytes], self.process.stdin)
        self.stdout = cast(IO[bytes], self.process.stdout)

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def reply(self) -> Any:
        line = self.stdout.readline()
        assert line, "the server closed its output"
        return json.loads(line)

    def ask(self, request_id: int, method: str = "skills.list", **params: Any) -> Any:
        self.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            ).encode()
            + b"\n"
        )
        return self.reply()

    def close(self) -> tuple[int, str]:
        self.stdin.close()
        code = self.process.wait(timeout=30)
        self.stdout.close()
        stderr = cast(IO[bytes], self.process.stderr)
        err = stderr.read().decode()
        stderr.close()
        return code, err


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    raw = RawServer(write_project(tmp_path))
    yield raw
    if raw.process.poll() is None:
        raw.close()


BAD_FRAMES = [
    (b"garbage\n", -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "skills.li\n', -32700),  # truncated
    (b"\xff\xfe\x00 not utf-8\n", -32700),
    (b"[]\n", -32600),
    (b"42\n", -32600),
    (b'{"jsonrpc": "1.0", "id": 7, "method": "skills.list"}\n', -32600),
    (b'{"jsonrpc": "2.0", "id": 8, "method": 5}\n', -32600),
    (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "skills.list"}\n', -32600),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "skills.list", "params": [1]}\n', -32602),
    (b'{"jsonrpc": "2.0", "id": 10, "method": "no.such"}\n', -32601),
]


@pytest.mark.parametrize(("frame", "code"), BAD_FRAMES)
def test_each_bad_frame_gets_its_error_and_the_server_still_answers(
    server: RawServer, frame: bytes, code: int
) -> None:
    server.send(frame)
    reply = server.reply()
    assert reply["error"]["code"] == code
    assert reply["jsonrpc"] == "2.0"
    assert server.ask(99)["result"]["data"][0]["skills"][0]["name"] == "alpha"


@pytest.mark.parametrize("depth", [300, 1_000, 100_000])
def test_a_deeply_nested_tool_argument_gets_the_invalid_param_envelope_with_its_id(
    server: RawServer, depth: int
) -> None:
    deep = b"[" * depth + b"3" + b"]" * depth
    server.send(
        b'{"jsonrpc": "2.0", "id": 5, "method": "skills.search", "params": '
        b'{"query": "alpha", "limit": ' + deep + b"}}\n"
    )
    reply = server.reply()
    assert reply["id"] == 5
    error = reply["result"]["error"]
    assert reply["result"]["ok"] is False and error["code"] == "INVALID_PARAM"
    assert error["message"].startswith("`limit` of skill_search nests arrays or objects")
    assert server.ask(99)["result"]["data"][0]["skills"][0]["name"] == "alpha"


def test_a_line_over_four_mib_is_refused_without_stopping_the_server(server: RawServer) -> None:
    chunk = b"x" * (1024 * 1024)

    def flood() -> None:
        server.send(b'{"jsonrpc": "2.0", "id": 1, "method": "turn.prepare", "params": "')
        for _ in range(6):
            server.send(chunk)
        server.send(b'"}\n')

    writer = threading.Thread(target=flood)
    writer.start()
    reply = server.reply()
    writer.join()
    assert reply["error"]["code"] == -32012
    assert str(MAX_MESSAGE_BYTES) in reply["error"]["message"]
    assert server.ask(2)["id"] == 2


def test_notifications_get_no_reply_and_batches_get_one_array(server: RawServer) -> None:
    server.send(b'{"jsonrpc": "2.0", "method": "skills.list"}\n')
    server.send(b'{"jsonrpc": "2.0", "method": "no.such"}\n')
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "skills.list"},
        {"jsonrpc": "2.0", "method": "skills.list"},
        {"jsonrpc": "2.0", "id": 2, "method": "no.such"},
        "not a request",
    ]
    server.send(json.dumps(batch).encode() + b"\n")
    replies = server.reply()
    assert isinstance(replies, list)
    assert [r.get("id") for r in replies] == [1, 2, None]
    assert [r["error"]["code"] for r in replies[1:]] == [-32601, -32600]
    assert server.ask(3)["id"] == 3


def test_interleaved_requests_are_answered_out_of_order_by_id(server: RawServer) -> None:
    lines = []
    for i in range(40):
        method = ("skills.list", "skills.search", "rpc.discover", "context.inspect")[i % 4]
        params = {"query": "beta"} if method == "skills.search" else {}
        lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
        if i % 7 == 3:
            lines.append("garbage " * i)
    server.send(("\n".join(lines) + "\n").encode())
    replies = [server.reply() for _ in range(len(lines))]
    answered = sorted(r["id"] for r in replies if r["id"] is not None)
    assert answered == list(range(40))
    assert all("result" in r for r in replies if r["id"] is not None)
    assert sum(1 for r in replies if r["id"] is None) == len(lines) - 40


def test_end_of_input_stops_the_server_cleanly(server: RawServer) -> None:
    server.ask(1)
    code, err = server.close()
    assert code == 0
    assert "Traceback" not in err
