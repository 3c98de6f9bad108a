"""`skillpack mcp` over stdio against the same work done in process, in one run.

    python bench/bench_mcp.py                   # 1,000 and 10,000 skills
    python bench/bench_mcp.py --sizes 1000 --calls 200
    python bench/bench_mcp.py --json
    python bench/bench_mcp.py --check           # exit 1 when the protocol adds > 2 ms p50
    python bench/bench_mcp.py --peers --real DIR --sizes 10000 --check
                                                # the first-listing targets

For each corpus (gen_corpus.py), one `skillpack mcp` subprocess is driven over stdio
by the official SDK client, and the server's own synchronous calls are timed in this
process on a session over the same roots (the floor: the library call a host would
make, without JSON-RPC, pipes or the client). In-process and stdio calls alternate in
blocks of ten, so both sides see the same stretch of machine load.

- `skills/list`: the first page, and a walk of every page (warm: measured after one
  walk on each side, so both have their digests and parsed frontmatter cached; the
  first walk over stdio is reported as the cold walk);
- `tools/call skill_search`: p50 and p99 over queries drawn from skill descriptions,
  against `SkillTools.call`;
- `resources/read`: p50 over files of random skills, against `ServedCatalog.read`.

Target: the protocol adds at most 2 ms p50 per call over stdio (first
page, search, read). Walks are reported as ratios. CPU time per call is reported beside
(this process's for in-process calls; the client's plus the server's, from /proc, for
stdio): on a loaded machine wall time also counts waiting for a CPU, CPU time does not.

Targets of `--peers`, each printed PASS/FAIL and, with `--check`, the exit
status: over stdio with the official client, the first `skills/list` page at most
30 ms on the real corpus and 0.4 s at 10,000 skills with a warm index, 2 s with a cold
one; start-up (spawn to the `initialize` result) at most 0.5 s at 10,000 skills.
skillpack's rows are the run with the median first page of `--repeat` runs (3; a cold
run starts from an empty index each time); each peer runs once (some take minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from _common import (
    Stats,
    ensure_corpus,
    format_table,
    isolated_env,
    machine_info,
    ms,
    skillpack_command,
    work_dir,
)

TARGET_S = 0.002
"""Most the protocol may add to one call's p50 over stdio."""


def workload(server: Any, rng: random.Random, calls: int) -> tuple[list[str], list[str]]:
    """Search queries (three words of a random skill's description) and file URIs."""
    view = server.view()
    skills = list(view.skills)
    queries = []
    for skill in rng.sample(skills, min(calls, len(skills))):
        words = [w.strip(".,;:()") for w in skill.description.split() if len(w) > 3]
        queries.append(" ".join(rng.sample(words, min(3, len(words)))) or skill.name)
    uris = []
    for skill in rng.sample(skills, min(calls, len(skills))):
        files = view.own_files(skill)
        uris.append(rng.choice(files)[0])
    return queries, uris


Local = Callable[[], Any]
Remote = Callable[[], Awaitable[Any]]


BLOCK = 10
"""Calls per block: in-process and stdio blocks alternate (see `paired`)."""


def server_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's `skillpack mcp` child,
    read from /proc (0.0 where there is none: the CPU columns then count the client)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        for pid in task.read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


@dataclass
class Sides:
    """Wall-time samples and total CPU seconds of both sides of one comparison."""

    local: list[float] = field(default_factory=list)
    remote: list[float] = field(default_factory=list)
    local_cpu: float = 0.0
    remote_cpu: float = 0.0


async def paired(pairs: list[tuple[Local, Remote]]) -> Sides:
    """In-process and stdio calls in alternating blocks of `BLOCK`: both sides see the
    same stretch of machine load, and the server is measured busy, as a client keeps
    it (one call at a time after a local one would time the OS waking the server
    process, which on a loaded machine costs more than the protocol). CPU time is
    summed too: the client's and the server's for stdio, this process's in process."""
    sides = Sides()
    for first in range(0, len(pairs), BLOCK):
        block = pairs[first : first + BLOCK]
        cpu = time.process_time()
        for run_local, _run_remote in block:
            start = time.perf_counter()
            run_local()
            sides.local.append(time.perf_counter() - start)
        sides.local_cpu += time.process_time() - cpu
        cpu, child = time.process_time(), server_cpu()
        for _run_local, run_remote in block:
            start = time.perf_counter()
            await run_remote()
            sides.remote.append(time.perf_counter() - start)
        sides.remote_cpu += time.process_time() - cpu + server_cpu() - child
    return sides


async def compare(
    command: list[str],
    env: dict[str, str],
    server: Any,
    tools: Any,
    queries: list[str],
    uris: list[str],
    walks: int,
) -> tuple[dict[str, Sides], float, int]:
    import mcp.types as types
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters
    from pydantic import TypeAdapter

    from skillpack.mcp._server import _decode_cursor

    raw = TypeAdapter(dict[str, Any])

    class ListSkills(types.Request[types.PaginatedRequestParams, Literal["skills/list"]]):
        method: Literal["skills/list"] = "skills/list"

    def local_walk() -> int:
        cursor, count = 0, 0
        while True:
            page = server.skills_page(cursor)
            count += len(page["skills"])
            if "nextCursor" not in page:
                return count
            cursor = _decode_cursor(page["nextCursor"])

    view = server.view()
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with Client(params, mode="legacy") as client:

        async def page(cursor: str | None) -> dict[str, Any]:
            request = ListSkills(params=types.PaginatedRequestParams(cursor=cursor))
            return await client.session.send_request(request, raw)

        async def walk() -> int:
            cursor, count = None, 0
            while True:
                result = await page(cursor)
                count += len(result["skills"])
                cursor = result.get("nextCursor")
                if cursor is None:
                    return count

        await client.list_tools()
        start = time.perf_counter()
        listed = await walk()  # cold: the server computes every digest and frontmatter
        cold = time.perf_counter() - start
        local_walk()  # warm the in-process side alike
        await client.call_tool("skill_search", {"query": queries[0]})  # builds the index
        tools.call("skill_search", {"query": queries[0]})

        async def search(query: str) -> None:
            result = await client.call_tool("skill_search", {"query": query})
            assert result.structured_content and result.structured_content["ok"]

        results = {
            "first page": await paired([(lambda: server.skills_page(0), lambda: page(None))] * 20),
            "walk": await paired([(local_walk, walk)] * walks),
            "skill_search": await paired(
                [
                    (lambda q=q: tools.call("skill_search", {"query": q}), lambda q=q: search(q))
                    for q in queries
                ]
            ),
            "resources/read": await paired(
                [(lambda u=u: view.read(u), lambda u=u: client.read_resource(u)) for u in uris]
            ),
        }
        return results, cold, listed


def measure(work: Path, sizes: list[int], calls: int) -> dict[str, Any]:
    import anyio

    env = isolated_env(work)
    os.environ.update(env)
    from skillpack.mcp._server import SkillServer
    from skillpack.runtime._session import Session
    from skillpack.runtime._tools import SkillTools

    results: dict[str, Any] = {
        "sizes": {},
        "machine": {**machine_info(), "loadavg": os.getloadavg()},
        "target_ms": 2.0,
    }
    for size in sizes:
        corpus = ensure_corpus(work / "corpora", size)
        roots = [str(r) for r in corpus.roots]
        session = Session.open(cwd=str(work), roots=roots, include_user=False, include_system=False)
        server = SkillServer(session, cwd=str(work))
        tools = SkillTools(session)
        queries, uris = workload(server, random.Random(size), calls)
        command = [*skillpack_command(), "mcp", "--no-user", "--no-system", "--cwd", str(work)]
        for root in roots:
            command += ["--root", root]
        # The server gets an index file of its own: two processes searching one SQLite
        # file in lockstep would time their locking, not the protocol.
        server_env = {**env, "SKILLPACK_CACHE_DIR": str(work / f"cache-server-{size}")}
        pairs, cold, listed = anyio.run(
            compare, command, server_env, server, tools, queries, uris, 3 if size <= 1000 else 2
        )
        session.close()
        rows = {}
        for what, sides in pairs.items():
            local, remote = Stats.of(sides.local), Stats.of(sides.remote)
            added = remote.median - local.median
            calls_made = len(sides.local)
            rows[what] = {
                "in_process_ms": local.to_dict(),
                "stdio_ms": remote.to_dict(),
                "added_p50_ms": round(added * 1000, 3),
                "ratio_p50": round(remote.median / local.median, 2),
                "cpu_in_process_ms": round(sides.local_cpu / calls_made * 1000, 3),
                "cpu_stdio_ms": round(sides.remote_cpu / calls_made * 1000, 3),
                "pass": what == "walk" or added <= TARGET_S,
            }
        results["sizes"][str(size)] = {
            "skills_listed": listed,
            "cold_walk_ms": round(cold * 1000, 1),
            "calls": rows,
        }
    return results


def _median_run(runs: list[Any]) -> Any:
    """The run whose first page is the median of `runs` (a failed run counts as slowest)."""
    ranked = sorted(runs, key=lambda r: (r.first_page_s is None, r.first_page_s or 0.0))
    return ranked[(len(ranked) - 1) // 2]


def measure_peers(
    work: Path,
    sizes: list[int],
    real: Path | None,
    peers_dir: Path,
    timeout: float,
    repeat: int = 3,
) -> dict[str, Any]:
    """The first listing of skillpack (cold and warm index; the median of `repeat` runs
    each) and each installed peer, per corpus: `real` as it is, and each size generated
    in one root (mcp_peers.py)."""
    import shutil

    import anyio
    from mcp_peers import PEERS, FirstListing, first_listing, peer_command, quiet

    env = isolated_env(work)
    corpora: list[tuple[str, list[str]]] = []
    if real is not None:
        corpora.append((f"real ({real.name})", [str(real)]))
    for size in sizes:
        corpus = ensure_corpus(work / "corpora", size, per_root=size)
        corpora.append((f"{size:,} skills, one root", [str(r) for r in corpus.roots]))
    results: dict[str, Any] = {"machine": machine_info(), "corpora": {}}
    for label, roots in corpora:
        cache = work / f"cache-{len(results['corpora'])}"
        shutil.rmtree(cache, ignore_errors=True)
        # Bounds high enough for any root: skillpack serves what the peers walk.
        command = [*skillpack_command(), "mcp", "--no-user", "--no-system", "--cwd", str(work)]
        command += ["--max-dirs", "1000000", "--max-depth", "64"]
        for root in roots:
            command += ["--root", root]
        own = {**env, "SKILLPACK_CACHE_DIR": str(cache)}
        cold = []
        for _ in range(repeat):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(anyio.run(first_listing, command, own, timeout))
        warm = [anyio.run(first_listing, command, own, timeout) for _ in range(repeat)]
        row: dict[str, FirstListing] = {
            "skillpack (cold index)": _median_run(cold),
            "skillpack (warm index)": _median_run(warm),
        }
        for name in PEERS:
            peer = peer_command(name, peers_dir, roots, work)
            if peer is None:
                row[name] = FirstListing(failed=f"not installed in {peers_dir} (--install-peers)")
            else:
                log = work / f"{name}.stderr"
                row[name] = anyio.run(first_listing, quiet(peer, log), env, timeout)
        results["corpora"][label] = {name: r.to_dict() for name, r in row.items()}
    results["loadavg"] = os.getloadavg()
    return results


PEER_TARGETS_MS: tuple[tuple[str, str, str, float], ...] = (
    ("real", "skillpack (warm index)", "first_page_ms", 30.0),
    ("10,000", "skillpack (warm index)", "first_page_ms", 400.0),
    ("10,000", "skillpack (cold index)", "first_page_ms", 2000.0),
    ("10,000", "skillpack (cold index)", "start_ms", 500.0),
    ("10,000", "skillpack (warm index)", "start_ms", 500.0),
)
"""The targets: (corpus label prefix, server row, measure, most ms)."""
_MEASURES = {"first_page_ms": "first page", "start_ms": "start-up"}


def peer_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each of `PEER_TARGETS_MS` that the run measured, with its value and PASS/FAIL
    (a row that failed or was not measured fails)."""
    checks = []
    for prefix, server, measure, most in PEER_TARGETS_MS:
        for label, servers in results["corpora"].items():
            if not label.startswith(prefix) or server not in servers:
                continue
            value = servers[server][measure]
            checks.append(
                {
                    "target": f"{label}, {server}: {_MEASURES[measure]}",
                    "ms": value,
                    "most_ms": most,
                    "pass": value is not None and value <= most,
                }
            )
    return checks


def print_peers(results: dict[str, Any]) -> None:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"

    rows = []
    for label, servers in results["corpora"].items():
        for name, r in servers.items():
            rows.append(
                [
                    label,
                    name,
                    cell(r["start_ms"]),
                    cell(r["first_page_ms"]),
                    "-" if r["served"] is None else f"{r['served']:,}",
                    cell(r["walk_ms"]),
                    "-" if r["left_out"] is None else str(r["left_out"]),
                    r["failed"] or "",
                ]
            )
    headers = ["corpus", "server", "start-up", "first page", "served", "walk", "left out"]
    print(format_table([*headers, "failed"], rows))
    load = ", ".join(f"{x:.1f}" for x in results["loadavg"])
    print(f"load average at the end: {load} on {results['machine']['nproc']} CPUs")
    checks = results.get("targets", [])
    if checks:
        print()
        print(
            format_table(
                ["target", "measured", "most", "result"],
                [
                    [
                        c["target"],
                        "-" if c["ms"] is None else f"{c['ms']:,.0f} ms",
                        f"{c['most_ms']:,.0f} ms",
                        "PASS" if c["pass"] else "FAIL",
                    ]
                    for c in checks
                ],
            )
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10_000])
    parser.add_argument("--calls", type=int, default=300, help="searches and reads per size")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument(
        "--peers", action="store_true", help="first listing beside the peers (mcp_peers.py)"
    )
    parser.add_argument("--real", type=Path, default=None, help="--peers: a real skills folder")
    parser.add_argument("--peers-dir", type=Path, default=None, help="the peers' virtualenvs")
    parser.add_argument("--install-peers", action="store_true", help="pip-install them first")
    parser.add_argument("--timeout", type=float, default=300.0, help="--peers: per server")
    parser.add_argument(
        "--repeat", type=int, default=3, help="--peers: skillpack's runs per row (median)"
    )
    options = parser.parse_args(argv)
    if options.peers or options.install_peers:
        from mcp_peers import default_peers_dir, install_peers

        peers_dir = options.peers_dir or default_peers_dir()
        if options.install_peers:
            print(json.dumps(install_peers(peers_dir), indent=2))
        if not options.peers:
            return 0
        with work_dir(options.work_dir) as work:
            found = measure_peers(
                work,
                options.sizes,
                options.real,
                peers_dir,
                options.timeout,
                max(1, options.repeat),
            )
        found["targets"] = peer_targets(found)
        if options.json:
            print(json.dumps(found, indent=2))
        else:
            print_peers(found)
        passed = all(check["pass"] for check in found["targets"])
        return 1 if options.check and not passed else 0
    with work_dir(options.work_dir) as work:
        results = measure(work, options.sizes, options.calls)
    ok = all(row["pass"] for size in results["sizes"].values() for row in size["calls"].values())
    if options.json:
        print(json.dumps(results, indent=2))
        return 1 if options.check and not ok else 0
    table = []
    for size, data in results["sizes"].items():
        for what, row in data["calls"].items():
            table.append(
                [
                    f"{int(size):,} skills",
                    what,
                    ms(row["in_process_ms"]["median"] / 1000),
                    ms(row["stdio_ms"]["median"] / 1000),
                    ms(row["stdio_ms"]["p99"] / 1000),
                    f"{row['added_p50_ms']:+.2f} ms",
                    f"{row['ratio_p50']:.2f}x",
                    f"{row['cpu_in_process_ms']:.2f} / {row['cpu_stdio_ms']:.2f} ms",
                    "-" if what == "walk" else ("PASS" if row["pass"] else "FAIL"),
                ]
            )
    print(
        format_table(
            [
                "corpus",
                "call",
                "in-process p50",
                "stdio p50",
                "stdio p99",
                "added p50",
                "ratio",
                "CPU/call in-proc / stdio",
                "<= 2 ms",
            ],
            table,
        )
    )
    for size, data in results["sizes"].items():
        print(
            f"{int(size):,} skills: {data['skills_listed']:,} listed; first walk over stdio "
            f"(cold: digests and frontmatter computed) {data['cold_walk_ms']:,.0f} ms"
        )
    load = ", ".join(f"{x:.1f}" for x in results["machine"]["loadavg"])
    print(f"load average at the end: {load} on {results['machine']['nproc']} CPUs")
    return 1 if options.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
