"""Requests per second through HAProxy to one stateless `skillpack mcp` replica and to
two, in one run.

    python bench/bench_fleet.py                  # 8 clients, 6 s per setup
    python bench/bench_fleet.py --clients 16 --seconds 10 --json

Both setups use the balancer config the docs show (`docs/fleet/haproxy.cfg`); with one
replica both of its server entries point at that replica, so the balancer's own work
is the same. Each client repeats `tools/call skill_search` (a stateless request: any
replica answers it) on a keep-alive-less connection through the balancer for the
given time, after a warm-up; errors are counted. The ratio two/one is what a second
replica buys on this machine: on a machine with fewer free cores than replicas it
stays near 1, since the replicas then share the same CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mcp"))

from fleet_support import call, fleet, haproxy_missing  # noqa: E402


def write_skills(root: Path, count: int) -> None:
    for index in range(count):
        folder = root / f"skill-{index:03d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{index:03d}\ndescription: Handles topic {index} reports. "
            f"Use it for topic {index}.\n---\n# Skill {index}\n\nDo topic {index}.\n",
            encoding="utf-8",
        )


def load(served: object, *, clients: int, seconds: float) -> dict[str, float]:
    done = 0
    errors = 0
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(number: int) -> None:
        nonlocal done, errors
        request = call("skill_search", {"query": f"topic {number} reports"})
        while time.monotonic() < stop:
            try:
                status, _replica, payload = served.post(request)  # type: ignore[attr-defined]
                ok = status == 200 and isinstance(payload, dict) and "result" in payload
            except Exception:  # noqa: BLE001 - counted
                ok = False
            with lock:
                done += 1
                errors += not ok

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return {"requests": done, "errors": errors, "seconds": elapsed, "rps": done / elapsed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    missing = haproxy_missing()
    if missing is not None:
        print(f"skipped: {missing}", file=sys.stderr)
        return 2
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        os.environ.setdefault("SKILLPACK_CACHE_DIR", str(base / "cache"))
        write_skills(base / "shared", args.skills)
        for replicas in (1, 2):
            work = base / f"run-{replicas}"
            work.mkdir()
            with fleet(base / "shared", work, replicas=replicas) as served:
                load(served, clients=args.clients, seconds=1.0)  # warm-up
                results[str(replicas)] = load(served, clients=args.clients, seconds=args.seconds)
    ratio = results["2"]["rps"] / results["1"]["rps"]
    if args.json:
        print(json.dumps({"results": results, "ratio": ratio, "cpus": os.cpu_count()}))
        return 0
    print(f"{'replicas':>8} {'requests':>9} {'errors':>7} {'req/s':>8}")
    for replicas, row in results.items():
        print(f"{replicas:>8} {row['requests']:9.0f} {row['errors']:7.0f} {row['rps']:8.1f}")
    print(f"two replicas / one: {ratio:.2f}x ({os.cpu_count()} CPUs, {args.clients} clients)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
