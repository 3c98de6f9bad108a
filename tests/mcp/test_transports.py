"""`skillpack mcp` as a real subprocess: over stdio and over streamable HTTP on 127.0.0.1,
driven by the official SDK client; the HTTP checks (Host, Origin, token) seen raw."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from skill_client import digest, list_skills, read_bytes, skill_md, write

SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write(
        tmp_path / "skills",
        {
            "alpha/SKILL.md": skill_md("alpha", enabled="on"),
            "alpha/references/guide.md": "# Guide\n",
            "beta/SKILL.md": skill_md("beta"),
        },
    )


async def exercise(client: Client) -> dict[str, Any]:
    """What every transport must do: tools, the extension, a read that verifies."""
    tools = await client.list_tools()
    search = await client.call_tool("skill_search", {"query": "alpha"})
    entries = await list_skills(client)
    alpha = next(e for e in entries if e["frontmatter"]["name"] == "alpha")
    for resource in alpha["resources"]:
        assert resource["digest"] == digest(await read_bytes(client, resource["uri"]))
    return {
        "tools": [t.name for t in tools.tools],
        "found": search.structured_content["data"]["results"][0]["name"],
        "skills": sorted(e["frontmatter"]["name"] for e in entries),
        "enabled": alpha["frontmatter"]["enabled"],
    }


EXPECTED = {
    "tools": [
        "skill_search",
        "skill_load",
        "use_skill",
        "skill_read_file",
        "skill_note_paths",
    ],
    "found": "alpha",
    "skills": ["alpha", "beta"],
    "enabled": "on",
}


def test_stdio_subprocess_serves_and_notifies_when_a_skill_appears(tree: Path) -> None:
    params = StdioServerParameters(
        command=SERVE[0],
        args=[*SERVE[1:], "--root", str(tree), "--no-user", "--no-system", "--cwd", str(tree)],
        env=dict(os.environ),
    )
    received: list[str] = []

    async def on_message(message: Any) -> None:
        received.append(type(message).__name__)

    async def main() -> tuple[dict[str, Any], list[str]]:
        async with Client(params, mode="legacy", message_handler=on_message) as client:
            seen = await exercise(client)
            write(tree, {"gamma/SKILL.md": skill_md("gamma")})  # the watcher sees it
            with anyio.fail_after(30):
                while "ResourceListChangedNotification" not in received:
                    await anyio.sleep(0.05)
            after = await list_skills(client)
            return seen, sorted(e["frontmatter"]["name"] for e in after)

    seen, after = anyio.run(main)
    assert seen == EXPECTED
    assert after == ["alpha", "beta", "gamma"]


def test_a_paths_skill_joins_skill_load_s_catalog_once_a_client_notes_a_matching_file(
    tree: Path,
) -> None:
    write(
        tree,
        {
            "sql-review/SKILL.md": "---\nname: sql-review\ndescription: Review SQL.\n"
            'paths: ["**/*.sql"]\n---\nCheck the migration.\n'
        },
    )
    params = StdioServerParameters(
        command=SERVE[0],
        args=[*SERVE[1:], "--root", str(tree), "--no-user", "--no-system", "--cwd", str(tree)],
        env=dict(os.environ),
    )
    received: list[str] = []

    async def on_message(message: Any) -> None:
        received.append(type(message).__name__)

    def catalog(tools: types.ListToolsResult) -> str:
        return next(t.description or "" for t in tools.tools if t.name == "skill_load")

    async def main() -> dict[str, Any]:
        async with Client(params, mode="legacy", message_handler=on_message) as client:
            before = catalog(await client.list_tools())
            unrelated = await client.call_tool("skill_note_paths", {"paths": [str(tree / "a.md")]})
            bad = await client.call_tool("skill_note_paths", {"paths": []})
            noted = await client.call_tool(
                "skill_note_paths", {"paths": [str(tree / "db" / "001.sql")]}
            )
            with anyio.fail_after(30):
                while "ToolListChangedNotification" not in received:
                    await anyio.sleep(0.05)
            after = catalog(await client.list_tools())
            loaded = await client.call_tool("skill_load", {"name": "sql-review"})
            return {
                "before": "sql-review" in before,
                "unrelated": unrelated.structured_content,
                "bad": (bad.structured_content or {}).get("error", {}).get("code"),
                "noted": noted.structured_content,
                "after": "sql-review" in after,
                "loaded": (loaded.structured_content or {}).get("ok"),
            }

    seen = anyio.run(main)
    assert seen == {
        "before": False,
        "unrelated": {"ok": True, "data": {"opened": [], "skills": 2}},
        "bad": "INVALID_PARAM",
        "noted": {
            "ok": True,
            "data": {
                "opened": [
                    {
                        "name": "sql-review",
                        "qualified_name": "extra:sql-review",
                        "description": "Review SQL.",
                    }
                ],
                "skills": 3,
            },
        },
        "after": True,
        "loaded": True,
    }


@pytest.fixture(params=["--token-file", "--token-file-out"])
def http_server(
    tree: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[str, str]]:
    """The server over HTTP, its token read from a file (`--token-file`) or generated
    and written by it (`--token-file-out`, private)."""
    flag: str = request.param
    token = "s3cret-token"
    token_file = tmp_path / "token"
    if flag == "--token-file":
        token_file.write_text(token + "\n", encoding="utf-8")
    errors = tmp_path / "server.err"
    with (
        errors.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            [
                *SERVE,
                "--transport",
                "http",
                "--port",
                "0",
                "--json",
                flag,
                str(token_file),
                "--root",
                str(tree),
                "--no-user",
                "--no-system",
                "--cwd",
                str(tree),
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        ) as process,
    ):
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line, errors.read_text(encoding="utf-8")
            info = json.loads(line)
            url = info["url"]
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            assert info["token_file"] == str(token_file)
            if flag == "--token-file-out":
                assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
                token = token_file.read_text(encoding="utf-8").strip()
                assert len(token) >= 32
            yield url, token
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_http_on_loopback_serves_a_client_with_the_token(http_server: tuple[str, str]) -> None:
    url, token = http_server

    async def main() -> dict[str, Any]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with (
            http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            assert client.server_capabilities.extensions == {
                "io.modelcontextprotocol/skills": {"directoryRead": True}
            }
            return await exercise(client)

    assert anyio.run(main) == EXPECTED


def post(url: str, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_http_refuses_foreign_hosts_origins_and_missing_or_wrong_tokens(
    http_server: tuple[str, str],
) -> None:
    url, token = http_server
    port = url.split(":")[2].split("/")[0]
    good = {"Authorization": f"Bearer {token}"}
    assert post(url, {**good, "Host": f"evil.example:{port}"}) == 421
    assert post(url, {**good, "Host": f"127.0.0.1.evil.example:{port}"}) == 421
    assert post(url, {**good, "Origin": "http://evil.example"}) == 403
    assert post(url, {**good, "Origin": f"http://127.0.0.1.evil.example:{port}"}) == 403
    assert post(url, {}) == 401
    assert post(url, {"Authorization": "Bearer wrong"}) == 401
    assert post(url, {"Authorization": token}) == 401
    assert post(url, {**good, "Origin": f"http://localhost:{port}"}) not in (401, 403, 421)


def test_a_read_error_over_stdio_is_a_json_rpc_error_and_serving_goes_on(tree: Path) -> None:
    params = StdioServerParameters(
        command=SERVE[0],
        args=[*SERVE[1:], "--root", str(tree), "--no-user", "--no-system"],
        env=dict(os.environ),
    )

    async def main() -> tuple[int, bytes]:
        from mcp.shared.exceptions import MCPError

        async with Client(params, mode="legacy") as client:
            try:
                await client.read_resource("skill://extra/alpha/../../etc/passwd")
            except MCPError as error:
                code = error.code
            return code, await read_bytes(client, "skill://extra/alpha/references/guide.md")

    code, data = anyio.run(main)
    assert (code, data) == (-32602, b"# Guide\n")
    assert types.LATEST_PROTOCOL_VERSION  # the SDK's types are the ones the client speaks


def test_a_deeply_nested_tool_argument_gets_the_invalid_param_result_with_its_id(
    tree: Path,
) -> None:
    """A `limit` nested 300 (past the SDK's parser), 1,000 and 100,000 arrays deep: the
    call is answered, by the tool's own check, and serving goes on."""
    with subprocess.Popen(
        [*SERVE, "--root", str(tree), "--no-user", "--no-system"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        lines = [
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
            '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        ]
        for request_id, depth in ((2, 300), (3, 1_000), (4, 100_000)):
            deep = "[" * depth + "3" + "]" * depth
            lines.append(
                f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": '
                f'{{"name": "skill_search", "arguments": {{"query": "alpha", "limit": {deep}}}}}}}'
            )
        lines.append('{"jsonrpc": "2.0", "id": 5, "method": "ping"}')
        process.stdin.write("".join(line + "\n" for line in lines).encode())
        process.stdin.flush()
        replies: dict[Any, Any] = {}
        while len(replies) < 5:
            reply = json.loads(process.stdout.readline())
            replies[reply.get("id")] = reply
        process.stdin.close()
        process.wait(timeout=30)

    for request_id in (2, 3, 4):
        result = replies[request_id]["result"]
        assert result["isError"] is True
        error = result["structuredContent"]["error"]
        assert error["code"] == "INVALID_PARAM"
        assert error["message"].startswith("`limit` of skill_search nests arrays or objects")
    assert replies[5]["result"] == {}


def test_raw_stdio_answers_malformed_lines_with_errors_and_keeps_serving(tree: Path) -> None:
    from skillpack.mcp._stdio import MAX_LINE_BYTES

    with subprocess.Popen(
        [*SERVE, "--root", str(tree), "--no-user", "--no-system"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdin is not None and process.stdout is not None

        def send(line: bytes) -> None:
            assert process.stdin is not None
            process.stdin.write(line + b"\n")
            process.stdin.flush()

        def reply() -> dict[str, Any]:
            assert process.stdout is not None
            return dict(json.loads(process.stdout.readline()))

        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode()
        )
        assert "extensions" in reply()["result"]["capabilities"]
        send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        send(b"this is not json")
        assert reply()["error"]["code"] == -32700
        for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000):
            send(deep)  # the parser's recursion limit, not the server's end
            assert reply()["error"]["code"] == -32700
        send(b'{"hello": "world"}')
        assert reply()["error"]["code"] == -32600
        send(
            b'{"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"p": "'
            + b"a" * MAX_LINE_BYTES
            + b'"}}'
        )
        assert reply()["error"]["code"] == -32600
        send(b'{"jsonrpc": "2.0", "id": 3, "method": "nope/nope", "params": {}}')
        assert reply() == {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32601, "message": "Method not found", "data": "nope/nope"},
        }
        send(
            b'{"jsonrpc": "2.0", "id": 4, "method": "resources/read", '
            b'"params": {"uri": "skill://extra/alpha/%2e%2e/beta/SKILL.md"}}'
        )
        assert reply()["error"]["code"] == -32602
        send(
            b'{"jsonrpc": "2.0", "id": 5, "method": "resources/read", '
            b'"params": {"uri": "skill://extra/alpha/references/guide.md"}}'
        )
        assert reply()["result"]["contents"][0]["text"] == "# Guide\n"
        process.stdin.close()
        assert process.wait(timeout=30) == 0
