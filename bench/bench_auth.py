"""What bearer-JWT checking costs a request, on both HTTP servers.

    python bench/bench_auth.py                      # 1,000 skills, 600 requests per server
    python bench/bench_auth.py --requests 2000 --json
    python bench/bench_auth.py --check              # exit 1 past 1 ms at the median

The same seeded requests (skill loads and searches) run with and without JWT auth in
one run, alternating request by request so that drift in the machine's load hits both
alike. With auth: RS256 tokens checked against a JWKS file, and one `[[auth.grant]]`
opening every skill, so both answer the same (the request still runs in a session
restricted to the caller's grant, the path a team server takes).

1. **In process** (judged): what a server does per request with auth, against the
   same request without it. `serve`: the bearer check, the caller's grant and
   `Dispatcher.handle(body, caller=)` against `Dispatcher.handle(body)`. `mcp`: the
   HTTP hook (`McpAuth.admit`: the check, the SDK's user, the grant) and the tool call
   in the conversation of the caller's grant, against the same call in a conversation
   without one. HTTP parsing and the SDK's transport are the same either way.
2. **Over HTTP** (shown): each server twice as subprocesses (without auth: `mcp`
   open on loopback, `serve` with its static token), one keep-alive client each. The
   MCP transport's own latency varies between a few and ~45 ms per request (with or
   without auth), so its difference of medians there is mostly that noise.

Each table shows the medians and p99 with and without auth, the difference of the
medians (what the target judges) and the median of the per-pair differences.

Target: JWT checking adds at most 1 ms per request at the median (in process).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import Stats, ensure_corpus, format_table, isolated_env, machine_info, work_dir

# The test suite's issuer (keys, JWKS, tokens), auth config and server start.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from auth_support import (  # noqa: E402
    AUDIENCE,
    ISSUER,
    Issuer,
    server_process,
    write_auth_config,
)

TARGET_MS = 1.0
EVERYONE = ("groups", "everyone", ["*"])
"""The one grant of the bench: every skill, for a token whose `groups` hold "everyone"."""


def keys_and_token(folder: Path) -> tuple[Path, str]:
    """A JWKS file with a fresh issuer's keys, and a token it signed (RS256, valid for
    an hour) that `EVERYONE` opens."""
    issuer = Issuer()
    jwks = issuer.write_jwks(folder / "jwks.json")
    now = int(time.time())
    return jwks, issuer.token(sub="bench", groups=["everyone"], exp=now + 3600)


def write_project(folder: Path, jwks: Path | None) -> Path:
    """A project folder; with `jwks`, its config turns JWT auth on with `EVERYONE`."""
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    if jwks is not None:
        write_auth_config(folder, jwks=str(jwks), grants=[EVERYONE])
    return folder


class Connection:
    """One keep-alive HTTP connection posting JSON, timing each round trip."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        rest = url.split("//", 1)[1]
        hostport, _, path = rest.partition("/")
        host, port = hostport.rsplit(":", 1)
        self.path = "/" + path
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)
        self.headers = {"Content-Type": "application/json", **headers}

    def post(self, body: dict[str, Any]) -> tuple[float, dict[str, str], bytes]:
        data = json.dumps(body).encode()
        start = time.perf_counter()
        self.conn.request("POST", self.path, body=data, headers=self.headers)
        response = self.conn.getresponse()
        payload = response.read()
        elapsed = time.perf_counter() - start
        if response.status >= 400:
            raise SystemExit(f"HTTP {response.status}: {payload[:300]!r}")
        return elapsed, dict(response.getheaders()), payload


def mcp_connection(url: str, token: str | None) -> Connection:
    """A connection to `skillpack mcp` with its session initialized."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn = Connection(url, headers)
    _t, reply, _body = conn.post(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
    )
    session = next(v for k, v in reply.items() if k.lower() == "mcp-session-id")
    conn.headers["Mcp-Session-Id"] = session
    conn.headers["Mcp-Protocol-Version"] = "2025-06-18"
    conn.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return conn


def plan(names: list[str], count: int, seed: int = 7) -> list[tuple[str, dict[str, Any]]]:
    """Seeded requests: loads and searches (a tool's name, its arguments)."""
    rng = random.Random(seed)
    requests: list[tuple[str, dict[str, Any]]] = []
    for _ in range(count):
        name = rng.choice(names)
        if rng.random() < 0.5:
            requests.append(("load", {"name": name}))
        else:
            requests.append(("search", {"query": " ".join(name.split("-")[:2]), "limit": 5}))
    return requests


def mcp_body(i: int, kind: str, args: dict[str, Any]) -> dict[str, Any]:
    tool = "skill_load" if kind == "load" else "skill_search"
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    }


def rpc_body(i: int, kind: str, args: dict[str, Any]) -> dict[str, Any]:
    method = "skills.load" if kind == "load" else "skills.search"
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": args}


def compare(
    floor: Connection,
    auth: Connection,
    requests: list[tuple[str, dict[str, Any]]],
    body: Any,
) -> tuple[Stats, Stats]:
    """The same requests to both, alternating, after a warm-up pass of 50 each."""
    for i, (kind, args) in enumerate(requests[:50]):
        floor.post(body(i, kind, args))
        auth.post(body(i, kind, args))
    plain: list[float] = []
    checked: list[float] = []
    for i, (kind, args) in enumerate(requests):
        order = (floor, auth) if i % 2 == 0 else (auth, floor)
        for conn in order:
            elapsed, _headers, _payload = conn.post(body(i, kind, args))
            (plain if conn is floor else checked).append(elapsed)
    return Stats.of(plain), Stats.of(checked)


def in_process(
    corpus_roots: Sequence[Path], jwks: Path, token: str, requests: list[tuple[str, dict[str, Any]]]
) -> dict[str, tuple[Stats, Stats]]:
    """(without, with auth) per server, the work each request does in the server."""
    import anyio

    from skillpack._auth import AuthSettings, BearerAuth, JwtVerifier
    from skillpack.discovery._options import DiscoveryOptions
    from skillpack.mcp._auth import McpAuth
    from skillpack.mcp._server import SkillServer
    from skillpack.rpc._live import Discovery
    from skillpack.rpc._server import ServeOptions, running
    from skillpack.runtime._session import Session
    from skillpack.select._grants import Grant, grant_for

    verifier = JwtVerifier(AuthSettings(jwks=str(jwks), issuer=ISSUER, audience=AUDIENCE))
    verifier.keys.load()
    claim, value, skills = EVERYONE
    grants = [Grant(claim=claim, value=value, skills=tuple(skills))]
    header = f"Bearer {token}"
    results: dict[str, tuple[Stats, Stats]] = {}
    roots = tuple(str(r) for r in corpus_roots)

    # serve: the dispatcher, with and without a caller
    options = ServeOptions(
        discovery=Discovery(
            cwd=roots[0],
            options=DiscoveryOptions(extra_roots=roots, include_user=False, include_system=False),
            refresh="manual",
        )
    )
    bearer = BearerAuth(verifier, endpoint="/rpc")
    from skillpack._auth import Caller

    with running(options) as (dispatcher, _hub):
        bodies = [json.dumps(rpc_body(i, k, a)).encode() for i, (k, a) in enumerate(requests)]

        def plain(body: bytes) -> None:
            dispatcher.handle(body)

        def checked(body: bytes) -> None:
            principal = bearer.principal(header)
            caller = Caller(principal=principal, grant=grant_for(grants, principal.claims))
            dispatcher.handle(body, caller=caller)

        results["serve"] = alternate(plain, checked, bodies)

    # mcp: the HTTP hook, then the tool call in the grant's conversation
    session = Session.open(roots=list(roots), include_user=False, include_system=False)
    server = SkillServer(session)
    hook = McpAuth(BearerAuth(verifier, endpoint="/mcp"), grants)
    headers = {b"authorization": header, b"host": "127.0.0.1:8765"}

    class Connection:
        """What the SDK hands a handler as its client connection (`state` only)."""

        def __init__(self) -> None:
            self.state: dict[str, Any] = {}

    floor_connection, auth_connection = Connection(), Connection()

    async def ignore(_message: Any) -> None:
        return None

    def tool(kind: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("skill_load" if kind == "load" else "skill_search"), args

    async def mcp_plain(request: tuple[str, dict[str, Any]]) -> None:
        conversation = server.conversation(floor_connection)  # type: ignore[arg-type]
        conversation.tools.call(*tool(*request))

    async def mcp_checked(request: tuple[str, dict[str, Any]]) -> None:
        scope: dict[str, Any] = {"type": "http", "path": "/mcp", "method": "POST"}
        await hook.admit(scope, headers, ignore)
        grant = scope["skillpack.caller"].grant
        conversation = server.conversation(auth_connection, grant)  # type: ignore[arg-type]
        conversation.tools.call(*tool(*request))

    async def both() -> tuple[Stats, Stats]:
        for item in requests[:50]:
            await mcp_plain(item)
            await mcp_checked(item)
        floor: list[float] = []
        auth: list[float] = []
        for i, item in enumerate(requests):
            pairs = ((mcp_plain, floor), (mcp_checked, auth))
            for run, samples in pairs[:: 1 if i % 2 == 0 else -1]:
                begin = time.perf_counter()
                await run(item)
                samples.append(time.perf_counter() - begin)
        return Stats.of(floor), Stats.of(auth)

    try:
        results["mcp"] = anyio.run(both)
    finally:
        server.close()
        session.close()
    return results


def alternate(plain: Any, checked: Any, items: Sequence[Any]) -> tuple[Stats, Stats]:
    """Each item through both, alternating which goes first, after 50 warm-up pairs."""
    for item in items[:50]:
        plain(item)
        checked(item)
    floor: list[float] = []
    auth: list[float] = []
    for i, item in enumerate(items):
        for run, samples in ((plain, floor), (checked, auth))[:: 1 if i % 2 == 0 else -1]:
            start = time.perf_counter()
            run(item)
            samples.append(time.perf_counter() - start)
    return Stats.of(floor), Stats.of(auth)


def row(name: str, plain: Stats, auth: Stats) -> tuple[list[str], dict[str, Any]]:
    added = (auth.median - plain.median) * 1000
    paired = statistics.median(b - a for a, b in zip(plain.samples, auth.samples, strict=True))
    result = {
        "without_auth": {k: v for k, v in plain.to_dict().items() if k != "samples"},
        "with_jwt": {k: v for k, v in auth.to_dict().items() if k != "samples"},
        "added_median_ms": round(added, 3),
        "paired_median_ms": round(paired * 1000, 3),
        "ratio": round(auth.median / plain.median, 3),
    }
    cells = [
        name,
        f"{plain.median * 1000:.3f}",
        f"{auth.median * 1000:.3f}",
        f"{added:+.3f}",
        f"{paired * 1000:+.3f}",
        f"{auth.median / plain.median:.3f}x",
        f"{plain.p99 * 1000:.3f}",
        f"{auth.p99 * 1000:.3f}",
    ]
    return cells, result


HEADERS = [
    "server",
    "p50 no auth ms",
    "p50 JWT ms",
    "added ms",
    "paired ms",
    "ratio",
    "p99 no auth ms",
    "p99 JWT ms",
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target fails")
    args = parser.parse_args(argv)
    command = [sys.executable, "-c", "from skillpack.cli import main; main()"]
    results: dict[str, Any] = {"machine": machine_info(), "requests": args.requests}
    with work_dir(args.work_dir) as base:
        corpus = ensure_corpus(base, args.skills)
        names = sorted(p.parent.name for root in corpus.roots for p in root.rglob("SKILL.md"))[
            : args.skills
        ]
        requests = plan(names, args.requests)
        jwks, token = keys_and_token(base)
        roots = [flag for root in corpus.roots for flag in ("--root", str(root))]
        common = [*roots, "--no-system", "--no-user", "--json"]
        plain_project = write_project(base / "plain", None)
        auth_project = write_project(base / "auth", jwks)
        env = isolated_env(base / "env")
        local_rows = []
        results["in_process"] = {}
        for name, (plain_stats, auth_stats) in in_process(
            corpus.roots, jwks, token, requests
        ).items():
            cells, results["in_process"][name] = row(name, plain_stats, auth_stats)
            local_rows.append(cells)
        http_rows = []
        results["http"] = {}
        for name in ("mcp", "serve"):
            if name == "mcp":
                start = [*command, "mcp", "--transport", "http", "--port", "0", *common]
            else:
                start = [*command, "serve", "--transport", "http", "--port", "0", *common]
            with (
                server_process(
                    [*start, "--cwd", str(plain_project)],
                    env=env,
                    stderr_path=base / f"{name}-plain.log",
                ) as plain_info,
                server_process(
                    [*start, "--cwd", str(auth_project)],
                    env=env,
                    stderr_path=base / f"{name}-auth.log",
                ) as auth_info,
            ):
                if name == "mcp":
                    floor = mcp_connection(plain_info["url"], None)
                    checked = mcp_connection(auth_info["url"], token)
                    body = mcp_body
                else:
                    static = Path(plain_info["token_file"]).read_text("utf-8").strip()
                    floor = Connection(plain_info["rpc"], {"Authorization": f"Bearer {static}"})
                    checked = Connection(auth_info["rpc"], {"Authorization": f"Bearer {token}"})
                    body = rpc_body
                plain_stats, auth_stats = compare(floor, checked, requests, body)
            cells, results["http"][name] = row(name, plain_stats, auth_stats)
            http_rows.append(cells)
    failed = [cells[0] for cells in local_rows if float(cells[3]) > TARGET_MS]
    results["target_ms"] = TARGET_MS
    results["passed"] = not failed
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{args.requests} requests per server ({args.skills} skills), alternating")
        print("\nIn process (the work auth adds to a request; judged):")
        print(format_table(HEADERS, local_rows))
        print("\nOver HTTP (one keep-alive client per server; MCP's transport is noisy):")
        print(format_table(HEADERS, http_rows))
        verdict = "met" if not failed else f"missed by {', '.join(failed)}"
        print(f"\ntarget: JWT checking adds <= {TARGET_MS} ms at the median: {verdict}")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
