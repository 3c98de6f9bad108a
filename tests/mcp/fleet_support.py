"""Two stateless `skillpack mcp` replicas behind a real HAProxy, configured by the
file the docs show (`docs/fleet/haproxy.cfg`). Used by the fleet tests and
`bench/bench_fleet.py`."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HAPROXY_CFG = Path(__file__).resolve().parents[2] / "docs" / "fleet" / "haproxy.cfg"
LB_HOST = "lb.internal"
SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]


def haproxy_missing() -> str | None:
    """Why the fleet cannot run here (None: it can)."""
    if shutil.which("haproxy") is None:
        return "haproxy is not installed (Debian: apt-get install haproxy; .ci/run does)"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, kw_only=True)
class Fleet:
    port: int
    """The balancer's port on 127.0.0.1."""

    def post(self, body: Any) -> tuple[int, str, Any]:
        """POST one JSON-RPC message to /mcp through the balancer: (status, the replica
        that answered, the JSON answer or None)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(
                "POST",
                "/mcp",
                body=json.dumps(body).encode(),
                headers={
                    "Host": f"{LB_HOST}:{self.port}",
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2025-06-18",
                },
            )
            answer = conn.getresponse()
            text = answer.read().decode()
            replica = answer.getheader("X-Replica") or ""
        finally:
            conn.close()
        payload = None
        if text.startswith("event") or text.startswith("data"):
            data = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
            payload = json.loads(data[-1]) if data else None
        elif text.strip():
            payload = json.loads(text)
        return answer.status, replica, payload

    def get(self, path: str) -> tuple[int, str, Any]:
        """GET `path` (`/readyz`) through the balancer: (status, the replica, its JSON)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", path, headers={"Host": f"{LB_HOST}:{self.port}"})
            answer = conn.getresponse()
            text = answer.read().decode()
            replica = answer.getheader("X-Replica") or ""
        finally:
            conn.close()
        return answer.status, replica, json.loads(text) if text.strip() else None


def initialize(client: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def call(tool: str, arguments: dict[str, Any], request_id: int = 2) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


LIST_TOOLS = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}


def start_replica(root: Path, log: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    with log.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [
                *SERVE,
                *("--transport", "http", "--port", "0", "--json", "--root", str(root)),
                *("--no-user", "--no-system", "--stateless", "--allowed-host", LB_HOST),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise RuntimeError(log.read_text(encoding="utf-8"))
    port = int(json.loads(line)["url"].split(":")[2].split("/")[0])
    return process, port


@contextlib.contextmanager
def fleet(
    root: Path, workdir: Path, *, replicas: int = 2, extra: Sequence[str] = ()
) -> Iterator[Fleet]:
    """`replicas` (1 or 2) replicas serving `root` behind HAProxy, all healthy."""
    processes: list[subprocess.Popen[str]] = []
    try:
        ports = []
        for index in range(replicas):
            process, port = start_replica(root, workdir / f"replica-{index}.err", *extra)
            processes.append(process)
            ports.append(port)
        lb_port = free_port()
        environ = {
            **os.environ,
            "LB_BIND": f"127.0.0.1:{lb_port}",
            "REPLICA_A": f"127.0.0.1:{ports[0]}",
            "REPLICA_B": f"127.0.0.1:{ports[-1]}",  # one replica: both entries are it
        }
        with (workdir / "haproxy.err").open("w", encoding="utf-8") as log:
            haproxy = subprocess.Popen(
                ["haproxy", "-db", "-f", str(HAPROXY_CFG)],
                env=environ,
                stdout=subprocess.DEVNULL,
                stderr=log,
                text=True,
            )
        processes.append(haproxy)
        served = Fleet(port=lb_port)
        wait_healthy(served, expected=2, seconds=30)
        yield served
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()


def wait_healthy(served: Fleet, *, expected: int, seconds: float) -> None:
    """Until both server entries answer through the balancer."""
    deadline = time.monotonic() + seconds
    seen: set[str] = set()
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
            status, replica, _payload = served.post(initialize("probe"))
            if status == 200:
                seen.add(replica)
                if len(seen) >= expected:
                    return
        time.sleep(0.1)
    raise TimeoutError(f"the balancer did not reach {expected} replicas: saw {sorted(seen)}")


def listed(payload: Any) -> str:
    """skill_load's description in a tools/list answer (the skills it lists)."""
    tools = payload["result"]["tools"]
    return str(next(t["description"] for t in tools if t["name"] == "skill_load"))
