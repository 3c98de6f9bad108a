"""`skillpack serve --transport http` as a replica behind a balancer: `/healthz` and `/readyz`
without the token, `--allowed-host` beside loopback, `--stateless`."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import pytest
from rpc_support import SERVER_ARGS, write_project

from skillpack.install._oci_publish import publish_oci
from skillpack.rpc._client import serve_command
from skillpack.rpc._codes import RPC_CODES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "install"))
from install_support import write_skill  # noqa: E402
from oci_support import needs_registry, run_registry  # noqa: E402


@dataclass
class Replica:
    process: subprocess.Popen[bytes]
    port: int
    token: str

    def request(
        self, method: str, path: str, *, host: str | None = None, body: Any = None
    ) -> tuple[int, bytes]:
        headers = {"Host": host or f"127.0.0.1:{self.port}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers |= {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"}
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()


@pytest.fixture(params=[("--transport", "http"), ("--http",)], ids=["transport", "old-alias"])
def replica(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Replica]:
    """A stateless replica behind `lb.example`, started with `--transport http` or with
    serve's deprecated `--http` (the fleet flags work with both spellings)."""
    transport: tuple[str, ...] = request.param
    project = write_project(tmp_path)
    process = subprocess.Popen(
        [
            *serve_command(),
            *transport,
            *("--port", "0", "--json", "--cwd", str(project)),
            *("--token-file-out", str(tmp_path / "token")),
            *("--allowed-host", "lb.example", "--stateless", *SERVER_ARGS),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout = cast(IO[bytes], process.stdout)
    info = json.loads(stdout.readline())
    token = Path(info["token_file"]).read_text(encoding="utf-8").strip()
    yield Replica(process=process, port=int(info["url"].rsplit(":", 1)[1]), token=token)
    process.terminate()
    process.wait(timeout=30)
    stdout.close()
    cast(IO[bytes], process.stderr).close()


def test_healthz_and_readyz_need_no_token_and_readyz_waits_for_the_catalog(
    replica: Replica,
) -> None:
    assert replica.request("GET", "/healthz") == (200, b'{"status": "ok"}')
    deadline = time.monotonic() + 30
    while True:
        status, body = replica.request("GET", "/readyz")
        if status == 200 or time.monotonic() > deadline:
            break
        assert json.loads(body)["checks"]["catalog"] == "the catalog is being built"
        time.sleep(0.1)
    assert (status, json.loads(body)["status"]) == (200, "ready")


def test_health_and_rpc_pass_an_allowed_host_and_refuse_others(replica: Replica) -> None:
    assert replica.request("GET", "/healthz", host="lb.example:80")[0] == 200
    assert replica.request("GET", "/readyz", host="evil.example")[0] == 421
    listing = {"jsonrpc": "2.0", "id": 1, "method": "skills.list"}
    status, body = replica.request("POST", "/rpc", host="lb.example", body=listing)
    assert status == 200, body
    listed = json.loads(body)["result"]
    assert {s["name"] for s in listed["data"][0]["skills"]} == {"alpha", "beta"}
    assert listed["data"][0]["version"]
    status, body = replica.request("POST", "/rpc", host="evil.example", body=listing)
    assert status == 421 and b"--allowed-host" in body


def test_a_stateless_server_refuses_sessions_with_its_own_code(replica: Replica) -> None:
    call = {"jsonrpc": "2.0", "id": 2, "method": "session.open", "params": {}}
    status, body = replica.request("POST", "/rpc", body=call)
    error = json.loads(body)["error"]
    assert status == 200
    assert error["code"] == RPC_CODES["stateless"]
    assert "--stateless" in error["message"]


def test_readiness_waits_for_the_servers_own_workspace_and_stateless_refuses_sessions(
    tmp_path: Path,
) -> None:
    from skillpack.discovery._options import DiscoveryOptions
    from skillpack.rpc._codes import RpcFailure
    from skillpack.rpc._fleet import SESSION_METHODS, make_stateless, server_health
    from skillpack.rpc._live import Discovery, Live
    from skillpack.rpc._methods import Methods

    project = write_project(tmp_path)
    discovery = Discovery(
        cwd=str(project),
        options=DiscoveryOptions(include_user=False, include_system=False),
        refresh="manual",
    )
    live = Live(discovery, notify=lambda *_a, **_k: None)
    try:
        health = server_health(live)
        deadline = time.monotonic() + 30
        while health.readiness()["catalog"] != "ok" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert health.answer("/readyz")[0] == 200
        methods = Methods(live)
        make_stateless(methods)
        for name in SESSION_METHODS:
            with pytest.raises(RpcFailure) as refused:
                methods.table[name]({})
            assert refused.value.code == RPC_CODES["stateless"]
        assert methods.table["skills.list"]({})  # the rest still answers
    finally:
        live.close()
    broken = Live(
        Discovery(cwd=str(tmp_path / "gone"), refresh="manual"), notify=lambda *_a, **_k: None
    )
    health = server_health(broken)
    deadline = time.monotonic() + 30
    while health.readiness()["catalog"] == "the catalog is being built":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    status, body = health.answer("/readyz")
    assert status == 503
    assert "cannot be built" in json.loads(body)["checks"]["catalog"]


@needs_registry
def test_serve_from_an_oci_tag_lists_its_skills_and_follows_the_tag(tmp_path: Path) -> None:
    project = write_project(tmp_path, names=("alpha",))
    source = tmp_path / "published"
    write_skill(source, "beta")
    write_skill(source, "gamma")
    with run_registry(tmp_path / "registry") as registry:
        repo = f"{registry.host}/team/skills"
        publish_oci(str(source), repo, tags=["stable"])
        process = subprocess.Popen(
            [
                *serve_command(),
                *("--transport", "http", "--port", "0", "--json", "--cwd", str(project)),
                *("--token-file-out", str(tmp_path / "token"), *SERVER_ARGS),
                *("--from", f"oci://{repo}:stable", "--poll", "1"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        stdout = cast(IO[bytes], process.stdout)
        try:
            info = json.loads(stdout.readline())
            token = Path(info["token_file"]).read_text(encoding="utf-8").strip()
            replica = Replica(process=process, port=int(info["url"].rsplit(":", 1)[1]), token=token)
            listing = {"jsonrpc": "2.0", "id": 1, "method": "skills.list"}

            def names() -> set[str]:
                status, body = replica.request("POST", "/rpc", body=listing)
                assert status == 200, body
                return {s["name"] for s in json.loads(body)["result"]["data"][0]["skills"]}

            assert names() == {"alpha", "beta", "gamma"}
            write_skill(source, "delta")
            moved = publish_oci(str(source), repo, tags=["stable"]).artifacts[-1].digest
            deadline = time.monotonic() + 10
            while "delta" not in names():
                assert time.monotonic() < deadline, "serve did not follow the tag"
                time.sleep(0.1)
            status, body = replica.request("GET", "/readyz")
            detail = json.loads(body)["source"]
            assert status == 200 and detail["digest"] == moved and detail["state"] == "fresh"
        finally:
            process.terminate()
            process.wait(timeout=30)
            stdout.close()
            cast(IO[bytes], process.stderr).close()
