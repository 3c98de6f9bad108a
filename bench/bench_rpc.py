"""The app server under load: 32 clients x 500 mixed requests over HTTP and over stdio.

    python bench/bench_rpc.py                      # 1,000 skills, 32 clients x 500 requests
    python bench/bench_rpc.py --clients 8 --requests 100 --json
    python bench/bench_rpc.py --check              # exit 1 on an error or RSS growth > 10%

Each client opens a session, then sends a fixed, seeded mix of requests (search, load,
turn, read_file, context.inspect, list) and closes it. The same request sequences run
three ways in one run: in process (the `Methods` table the server dispatches to, from as
many threads: the floor), over stdio (one `skillpack serve`, every client thread
sharing its pipe, replies matched by id) and over HTTP (one `skillpack serve --transport http`, a
keep-alive connection per client). Latencies are per request, measured by the client.
The server's RSS is read from /proc after a warm-up pass and again after the run.

Targets: zero errors; RSS after the run within 10% of before. The tables also
show p50/p99 and the overhead over the in-process call: one client sending the requests
in a row (the cost a call pays for the transport), and 32 at once (where latency is
mostly queueing for the CPU, so throughput is the comparison that means something).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import (
    Stats,
    ensure_corpus,
    format_table,
    isolated_env,
    machine_info,
    ms,
    work_dir,
)

RSS_GROWTH_LIMIT = 0.10
MIX = (
    ("skills.search", 30),
    ("skills.load", 25),
    ("turn.prepare", 20),
    ("skills.read_file", 10),
    ("context.inspect", 10),
    ("skills.list", 5),
)
QUERIES = ("deploy", "review code", "pdf forms", "database migration", "testing", "docs")

Request = tuple[str, dict[str, Any]]


def search_query(rng: random.Random, names: list[str]) -> str:
    """A search as users type one: two words of a skill's name, or a stock phrase."""
    words = rng.choice(names).split("-")[:2]
    return " ".join(words) if rng.random() < 0.7 else rng.choice(QUERIES)


def plan(seed: int, count: int, names: list[str], files: list[tuple[str, str]]) -> list[Request]:
    """`count` seeded requests (session-bound ones get the session id filled in later)."""
    rng = random.Random(seed)
    methods = [m for m, weight in MIX for _ in range(weight)]
    requests: list[Request] = []
    for _ in range(count):
        method = rng.choice(methods)
        if method == "skills.search":
            requests.append((method, {"query": search_query(rng, names), "limit": 8}))
        elif method == "skills.load":
            requests.append((method, {"name": rng.choice(names)}))
        elif method == "turn.prepare":
            requests.append((method, {"text": f"${rng.choice(names)} please do the task"}))
        elif method == "skills.read_file":
            skill, path = rng.choice(files)
            requests.append((method, {"skill": skill, "path": path}))
        elif method == "context.inspect":
            requests.append((method, {"context_window": 200_000}))
        else:
            requests.append((method, {}))
    return requests


def failed(method: str, result: Any) -> str | None:
    """Why `result` is not the success the request should get, or None."""
    if method in ("skills.search", "skills.load", "skills.read_file"):
        return None if result.get("ok") else f"{method}: {result.get('error')}"
    if method == "turn.prepare" and not result.get("activations"):
        return f"{method}: no activation ({result.get('diagnostics')})"
    if method == "skills.list" and not result["data"][0]["skills"]:
        return f"{method}: empty"
    return None


Call = Callable[[str, dict[str, Any]], Any]


def run_clients(call: Call, plans: list[list[Request]]) -> tuple[list[float], list[str], float]:
    """Every plan on its own thread against `call`; latencies, errors, wall seconds."""
    latencies: list[list[float]] = [[] for _ in plans]
    errors: list[str] = []
    start = threading.Barrier(len(plans) + 1)

    def client(index: int) -> None:
        own = latencies[index]
        start.wait()
        try:
            session = call("session.open", {})["session"]
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors.append(f"session.open: {exc!r}")
            return
        for method, params in plans[index]:
            if method in ("skills.load", "turn.prepare", "skills.read_file", "context.inspect"):
                params = {**params, "session": session}
            began = time.perf_counter()
            try:
                result = call(method, params)
                own.append(time.perf_counter() - began)
                problem = failed(method, result)
            except Exception as exc:  # noqa: BLE001 - counted and reported
                problem = f"{method}: {exc!r}"
            if problem:
                errors.append(problem)
        call("session.close", {"session": session})

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(plans))]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    return [x for own in latencies for x in own], errors, wall


def warm_up(call: Call, plans: list[list[Request]]) -> None:
    """Untimed: every client's first requests at once, then the serial plan once, so the
    index, the caches and the page cache are as warm for every path measured after."""
    run_clients(call, [p[:20] for p in plans])
    run_clients(call, plans[:1])


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def summary(latencies: list[float], errors: list[str], wall: float) -> dict[str, Any]:
    stats = Stats.of(latencies or [0.0])
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "first_errors": errors[:5],
        "p50_ms": round(stats.median * 1000, 3),
        "p99_ms": round(stats.p99 * 1000, 3),
        "wall_s": round(wall, 3),
        "throughput_rps": round(len(latencies) / wall, 1) if wall else 0.0,
    }


def measure(work: Path, n_skills: int, clients: int, per_client: int) -> dict[str, Any]:
    env = isolated_env(work)
    os.environ.update(env)
    from skillpack.discovery import DiscoveryOptions
    from skillpack.discovery._skill_files import list_skill_files
    from skillpack.rpc import Client
    from skillpack.rpc._live import Discovery, Live
    from skillpack.rpc._methods import Methods
    from skillpack.rpc._params import check_params
    from skillpack.rpc._schema import METHODS

    corpus = ensure_corpus(work / "corpora", n_skills)
    project = work / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    roots = [str(r) for r in corpus.roots]
    discovery = Discovery(
        cwd=str(project),
        options=DiscoveryOptions(extra_roots=roots, include_user=False, include_system=False),
    )

    # In process: the Methods table the server dispatches to (the floor).
    live = Live(discovery, notify=lambda method, params: None)
    methods = Methods(live)
    catalog = live.workspace().live.catalog
    names = [s.name for s in catalog.skills if s.model_invocable and s.shadowed_by is None]
    files = []
    for skill in catalog.skills:
        listed, _ = list_skill_files(skill)
        files.extend((skill.name, f) for f in listed if f.startswith("references/"))
    plans = [plan(seed, per_client, names, files) for seed in range(clients)]

    def in_process(method: str, params: dict[str, Any]) -> Any:
        result = methods.table[method](check_params(METHODS[method].params, params))
        # A cached listing comes pre-encoded; a host in process would read it as data too.
        return json.loads(result) if isinstance(result, bytes) else result

    warm_up(in_process, plans)
    serial: dict[str, Any] = {"in_process": summary(*run_clients(in_process, plans[:1]))}
    results: dict[str, Any] = {"in_process": summary(*run_clients(in_process, plans))}
    live.close()

    args = ["--cwd", str(project), "--no-user", "--no-system"]
    for root in roots:
        args += ["--root", root]
    command = [sys.executable, "-c", "from skillpack.cli import main; main()", "serve"]
    for transport in ("stdio", "http"):
        if transport == "stdio":
            client = Client.stdio(*args, command=command, env=env, timeout=120)
            pid = client._transport.process.pid  # type: ignore[attr-defined]
        else:
            client = Client.spawn_http(*args, command=command, env=env, timeout=120)
            pid = client._transport.process.pid  # type: ignore[attr-defined]
        with client:
            warm_up(client.call, plans)
            serial[transport] = summary(*run_clients(client.call, plans[:1]))
            before = rss_kib(pid)
            outcome = summary(*run_clients(client.call, plans))
            after = rss_kib(pid)
        growth = (after - before) / before
        outcome.update(
            rss_before_kib=before,
            rss_after_kib=after,
            rss_growth=round(growth, 4),
            rss_ok=growth <= RSS_GROWTH_LIMIT,
        )
        results[transport] = outcome
    for table in (serial, results):
        floor = table["in_process"]
        for outcome in table.values():
            outcome["overhead_p50"] = round(outcome["p50_ms"] / (floor["p50_ms"] or 1e-9), 2)
            outcome["overhead_p50_ms"] = round(outcome["p50_ms"] - floor["p50_ms"], 3)
            rate = floor["throughput_rps"] or 1e-9
            outcome["throughput_vs_in_process"] = round(outcome["throughput_rps"] / rate, 2)
    return {
        "skills": len(catalog.skills),
        "clients": clients,
        "requests_per_client": per_client,
        "mix": dict(MIX),
        "results": results,
        "serial": serial,
        "machine": machine_info(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=500, help="Requests per client.")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    options = parser.parse_args(argv)
    with work_dir(options.work_dir) as work:
        data = measure(work, options.skills, options.clients, options.requests)
    results = data["results"]
    ok = all(r["errors"] == 0 for t in (results, data["serial"]) for r in t.values()) and all(
        results[t]["rss_ok"] for t in ("stdio", "http")
    )
    if options.json:
        print(json.dumps(data, indent=2))
    else:
        print(f"{data['skills']:,} skills, mix {data['mix']}")
        for title, table in (
            (f"one client, {data['requests_per_client']} requests in a row", data["serial"]),
            (
                f"{data['clients']} clients x {data['requests_per_client']} requests at once",
                results,
            ),
        ):
            rows = [
                [
                    name,
                    f"{r['requests']:,}",
                    r["errors"],
                    ms(r["p50_ms"] / 1000),
                    ms(r["p99_ms"] / 1000),
                    f"{r['throughput_rps']:,.0f}/s",
                    f"{r['overhead_p50']:.2f}x (+{r['overhead_p50_ms']:.2f} ms)",
                    f"{r['throughput_vs_in_process']:.2f}x",
                    (
                        f"{r['rss_before_kib'] / 1024:.0f} -> {r['rss_after_kib'] / 1024:.0f} MiB "
                        f"({r['rss_growth']:+.1%})"
                    )
                    if "rss_growth" in r
                    else "-",
                ]
                for name, r in table.items()
            ]
            print(f"\n{title}:")
            print(
                format_table(
                    [
                        "transport",
                        "requests",
                        "errors",
                        "p50",
                        "p99",
                        "throughput",
                        "p50 vs in-process",
                        "throughput vs in-process",
                        "server RSS",
                    ],
                    rows,
                )
            )
        for table in (data["serial"], results):
            for name, r in table.items():
                for error in r["first_errors"]:
                    print(f"{name} error: {error}")
        print("PASS" if ok else "FAIL")
    return 1 if options.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
