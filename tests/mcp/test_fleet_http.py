"""`skillpack mcp --transport http` as a replica behind a balancer: `/healthz` and
`/readyz` outside the token, `--allowed-host` beside loopback, `--stateless`."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from skill_client import skill_md, write

SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]
TOKEN = "fleet-token"


def initialize(version: str = "2025-06-18") -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "fleet", "version": "1"},
        },
    }


@dataclass(frozen=True, kw_only=True)
class Replica:
    port: int
    stderr: Path

    def request(
        self,
        method: str,
        path: str,
        *,
        host: str | None = None,
        body: object = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            sent = {"Host": host or f"127.0.0.1:{self.port}", **(headers or {})}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                sent |= {
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2025-06-18",
                }
            conn.request(method, path, body=data, headers=sent)
            answer = conn.getresponse()
            return answer.status, dict(answer.getheaders()), answer.read()
        finally:
            conn.close()


def start(tmp_path: Path, *extra: str, token: bool = False) -> Iterator[Replica]:
    tree = write(tmp_path / "skills", {"alpha/SKILL.md": skill_md("alpha")})
    args = [*extra]
    if token:
        (tmp_path / "token").write_text(TOKEN + "\n", encoding="utf-8")
        args += ["--token-file", str(tmp_path / "token")]
    stderr_path = tmp_path / "server.err"
    with (
        stderr_path.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            [
                *SERVE,
                *("--transport", "http", "--port", "0", "--json", "--root", str(tree)),
                *("--no-user", "--no-system", *args),
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        ) as process,
    ):
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line, stderr_path.read_text(encoding="utf-8")
            port = int(json.loads(line)["url"].split(":")[2].split("/")[0])
            yield Replica(port=port, stderr=stderr_path)
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def replica(tmp_path: Path) -> Iterator[Replica]:
    yield from start(tmp_path, "--allowed-host", "lb.example:8080", "--stateless", token=True)


def test_healthz_and_readyz_answer_without_the_token(replica: Replica) -> None:
    status, headers, body = replica.request("GET", "/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert headers["content-type"] == "application/json"
    status, _headers, body = replica.request("GET", "/readyz?verbose=1")
    assert status == 200, body
    assert json.loads(body) == {"status": "ready", "checks": {"catalog": "ok", "index": "ok"}}
    # /mcp itself still wants the token.
    status, _headers, _body = replica.request("POST", "/mcp", body=initialize())
    assert status == 401


def test_health_checks_still_pass_the_host_guard(replica: Replica) -> None:
    assert replica.request("GET", "/healthz", host="evil.example")[0] == 421
    assert replica.request("GET", "/healthz", host="lb.example:8080")[0] == 200
    assert replica.request("GET", "/healthz", host="lb.example:9999")[0] == 421
    assert replica.request("POST", "/healthz", body={})[0] == 405


def test_an_allowed_host_reaches_mcp_and_other_names_stay_refused(replica: Replica) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    status, _h, body = replica.request(
        "POST", "/mcp", host="lb.example:8080", body=initialize(), headers=auth
    )
    assert status == 200, body
    status, _h, body = replica.request(
        "POST", "/mcp", host="rebound.example:8080", body=initialize(), headers=auth
    )
    assert status == 421
    assert b"--allowed-host" in body


def test_a_stateless_replica_answers_a_call_with_no_session(replica: Replica) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    status, headers, _body = replica.request("POST", "/mcp", body=initialize(), headers=auth)
    assert status == 200
    assert "mcp-session-id" not in {k.lower() for k in headers}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    status, _headers, body = replica.request("POST", "/mcp", body=call, headers=auth)
    assert status == 200, body
    text = body.decode()
    payload = json.loads(text.split("data: ", 1)[1] if text.startswith("event") else text)
    assert "skill_load" in {tool["name"] for tool in payload["result"]["tools"]}


def test_a_stateful_server_keeps_its_sessions(tmp_path: Path) -> None:
    for replica in start(tmp_path):
        status, headers, _body = replica.request("POST", "/mcp", body=initialize())
        assert status == 200
        assert "mcp-session-id" in {k.lower() for k in headers}


def test_allowed_host_and_stateless_are_refused_over_stdio(tmp_path: Path) -> None:
    for flag in (["--allowed-host", "lb"], ["--stateless"]):
        done = subprocess.run(
            [*SERVE, "--no-user", "--no-system", "--root", str(tmp_path), *flag],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode != 0
        assert "HTTP" in done.stderr or "http" in done.stderr


def test_a_malformed_allowed_host_is_refused_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [*SERVE, "--transport", "http", "--port", "0", "--no-user", "--no-system"]
        + ["--root", str(tmp_path), "--allowed-host", "lb:http"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "is not HOST or HOST:PORT" in done.stderr


def test_the_docs_page_shows_the_haproxy_config_the_fleet_tests_run() -> None:
    from fleet_support import HAPROXY_CFG

    page = (HAPROXY_CFG.parents[1] / "fleet.md").read_text(encoding="utf-8")
    assert "```text\n" + HAPROXY_CFG.read_text(encoding="utf-8") + "```" in page


def test_an_allowed_host_does_not_open_a_non_loopback_server_without_a_token(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [*SERVE, "--transport", "http", "--host", "0.0.0.0", "--port", "0"]
        + ["--no-user", "--no-system", "--root", str(tmp_path), "--allowed-host", "lb"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "--token-file" in done.stderr


def test_the_guarded_app_answers_health_before_the_token_in_process(tmp_path: Path) -> None:
    import asyncio

    from skill_client import open_session

    from skillpack._httpguard import HostGuard
    from skillpack.mcp._fleet import server_health
    from skillpack.mcp._http import GuardedApp
    from skillpack.mcp._server import SkillServer

    tree = write(tmp_path / "skills", {"alpha/SKILL.md": skill_md("alpha")})
    session = open_session(tree)
    server = SkillServer(session)
    building = server.prepare()
    health = server_health(server, building)
    building.join(30)
    assert health.readiness() == {"catalog": "ok", "index": "ok"}

    async def inner(_scope: Any, _receive: Any, _send: Any) -> None:
        raise AssertionError("health never reaches the app")

    app = GuardedApp(
        inner, guard=HostGuard("127.0.0.1", token="t", forwarded=["lb"]), health=health
    )

    async def ask(method: str, path: str, host: str) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": method,
            "path": path,
            "headers": [(b"host", host.encode())],
        }
        await app(scope, None, send)
        return sent[0]["status"], sent[1]["body"]

    assert asyncio.run(ask("GET", "/readyz", "lb:443"))[0] == 200
    assert asyncio.run(ask("GET", "/healthz", "127.0.0.1:1"))[0] == 200
    assert asyncio.run(ask("GET", "/healthz", "evil"))[0] == 421
    assert asyncio.run(ask("DELETE", "/healthz", "lb"))[0] == 405
    server.close()
    session.close()


def test_allowed_hosts_come_from_the_config_then_the_flags(tmp_path: Path) -> None:
    from skillpack._errors import UsageError
    from skillpack.cli._fleet_opts import server_allowed_hosts, server_config
    from skillpack.cli._options import CatalogOptions

    (tmp_path / ".skillpack").mkdir()
    (tmp_path / ".skillpack" / "config.toml").write_text(
        '[server]\nallowed_hosts = ["lb.internal:8080"]\n', encoding="utf-8"
    )
    flags = CatalogOptions(
        roots=(), cwd=str(tmp_path), no_user=True, no_system=False, no_cache=False
    )
    config = server_config(flags)
    hosts = server_allowed_hosts(("proxy",), config=config, transport="http")
    assert hosts == ("lb.internal:8080", "proxy")
    assert server_allowed_hosts((), config=config, transport="stdio") == ()
    with pytest.raises(UsageError, match="is not HOST or HOST:PORT"):
        server_allowed_hosts(("a b",), config=config, transport="http")
    with pytest.raises(UsageError, match="HTTP"):
        server_allowed_hosts(("lb",), config=config, transport="stdio")
