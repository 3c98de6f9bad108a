"""A live catalog: what an `on_call` refresh costs, and how soon `watch` sees a new skill.

    python bench/bench_live.py                   # 1,000 and 10,000 skills
    python bench/bench_live.py --sizes 1000 --json
    python bench/bench_live.py --check           # exit 1 when a target fails
    python bench/bench_live.py --writes 0        # refresh and auto check only, no watch

- `refresh (warm)`: `Session.refresh()` on an unchanged tree, what `refresh="on_call"`
  pays at most every `refresh_interval` before a tool call. The floor is one `os.stat`
  per folder and per SKILL.md of the tree (the least any staleness check must do),
  timed in the same run; the ratio is refresh / floor.
- `auto check`: `ensure_fresh(session)` (what a tool call does first) of a default
  (`refresh="auto"`) session on an unchanged tree: the `stat` check a default session
  pays before a tool call (at most every `refresh_interval`), against the same floor
  and the warm refresh it spares.
- `watch`: `refresh="watch"`, a new SKILL.md written into a root; `latency` is the time
  until the subscriber hears of it (debounce + re-discovery), `refresh` the discovery
  the event caused. Writes alternate between the incremental path (only the roots the
  events touch are scanned: `discover_roots`) and a full re-discovery of every root (the
  watcher's path before it), in one session, so both see the same machine load; the
  ratio is full / incremental. Target: every incremental latency < 1 s.
  The load average is printed with the numbers: other work on the machine shows there.
  In-process timings, on corpora from gen_corpus.py (1,000 skills per root).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    Stats,
    ensure_corpus,
    format_table,
    isolated_env,
    machine_info,
    ms,
    timed,
    work_dir,
)

WATCH_TARGET_S = 1.0


def _stat_floor(roots: list[Path]) -> list[str]:
    """Every folder and SKILL.md under `roots`: what the floor `stat`s."""
    paths: list[str] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
            paths.append(folder)
            paths.extend(os.path.join(folder, f) for f in files if f == "SKILL.md")
    return paths


class _Modes:
    """Which path each watch refresh takes, and what each one cost.

    The bench wraps `WorkspaceSource.open` (behind every re-discovery of a session) so
    that one watching session measures both paths: `full` drops the events' paths, as
    the watcher did before refreshes were incremental.
    """

    def __init__(self) -> None:
        self.full = False
        self.loads: list[tuple[float, int, int]] = []
        """(seconds, roots scanned, skills in them) of each load, in order."""

    def install(self) -> None:
        from skillpack.discovery import _discover
        from skillpack.runtime._workspace import WorkspaceSource

        modes = self
        open_ = WorkspaceSource.open
        discover_roots = _discover.discover_roots
        scanned: list[tuple[int, int]] = []

        def counting(*args: Any, **kwargs: Any) -> Any:
            run = discover_roots(*args, **kwargs)
            fresh = set(run.rescanned)
            skills = sum(len(scan.skills) for scan in run.scans if scan.root in fresh)
            scanned.append((len(fresh), skills))
            return run

        def timed_open(source: Any, touched: Any = None) -> Any:
            start = time.perf_counter()
            result = open_(source, None if modes.full else touched)
            modes.loads.append((time.perf_counter() - start, *scanned[-1]))
            return result

        _discover.discover_roots = counting  # type: ignore[assignment]
        WorkspaceSource.open = timed_open  # type: ignore[method-assign]


def _watch(
    session: Any, modes: _Modes, target: Path, writes: int
) -> dict[str, dict[str, list[Any]]]:
    """Write `writes` new skills per mode, alternating; latencies and refreshes per mode."""
    changes: queue.Queue[Any] = queue.Queue()
    # On the watcher thread, right after the load that made the change: its cost.
    session.subscribe(lambda change: changes.put((change, modes.loads[-1])))
    out: dict[str, dict[str, list[Any]]] = {
        mode: {"latency": [], "refresh": [], "roots": [], "skills": []}
        for mode in ("incremental", "full")
    }
    deadline = time.perf_counter() + 30.0
    while len(modes.loads) < 2 and time.perf_counter() < deadline:
        # The session's own discovery, then the watcher's catch-up: from now on,
        # changes come as events.
        time.sleep(0.01)
    for i in range(2 * writes + 1):
        mode = "full" if i % 2 else "incremental"
        modes.full = mode == "full"
        folder = target / f"live-skill-{i}"
        folder.mkdir(parents=True, exist_ok=True)
        name = folder.name
        start = time.perf_counter()
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Live {i}. Use when measuring.\n---\nBody.\n",
            encoding="utf-8",
        )
        deadline = start + 30.0
        while True:
            change, cost = changes.get(timeout=max(0.0, deadline - time.perf_counter()))
            if any(s.name == name for s in change.added):
                latency = time.perf_counter() - start
                break
        seconds, roots, skills = cost
        if not i:  # the first new skill of the session
            out["first"] = {"latency": [latency], "refresh": [seconds]}
        else:
            record = out[mode]
            record["latency"].append(latency)
            record["refresh"].append(seconds)
            record["roots"].append(roots)
            record["skills"].append(skills)
        time.sleep(0.3)  # let the next write start a new burst
    return out


def measure(work: Path, size: int, runs: int, writes: int) -> dict[str, Any]:
    os.environ.update(isolated_env(work))
    from skillpack.runtime._session import Session, ensure_fresh

    corpus = ensure_corpus(work / "corpora", size)
    roots = [str(r) for r in corpus.roots]
    cwd = work / "cwd"
    cwd.mkdir(exist_ok=True)
    options = dict(cwd=str(cwd), roots=roots, include_user=False, include_system=False)
    paths = _stat_floor(list(corpus.roots))
    stat_ = os.stat

    def floor() -> None:
        for path in paths:
            stat_(path)

    load_before = os.getloadavg()
    session = Session.open(refresh_interval=0, **options)  # type: ignore[arg-type]
    skills = len(session.catalog.skills)
    refresh = timed(session.refresh, runs)
    floor_stats = timed(floor, runs)
    auto = timed(lambda: ensure_fresh(session), runs)
    session.close()
    result: dict[str, Any] = {
        "skills": skills,
        "roots": len(roots),
        "refresh_ms": refresh.to_dict(),
        "floor_ms": floor_stats.to_dict(),
        "refresh_vs_floor": round(refresh.median / floor_stats.median, 2),
        "auto_check_ms": auto.to_dict(),
        "auto_vs_floor": round(auto.median / floor_stats.median, 2),
        "auto_vs_refresh": round(auto.median / refresh.median, 2),
        "watch_target_ms": WATCH_TARGET_S * 1000,
        "load_average": {"before": load_before, "after": os.getloadavg()},
    }
    if not writes:
        result["watch_pass"] = True
        return result

    modes = _Modes()
    modes.install()
    target = Path(roots[0]) / "bench-live"
    shutil.rmtree(target, ignore_errors=True)  # a reused corpus starts without them
    try:
        with Session.open(refresh="watch", **options) as watching:  # type: ignore[arg-type]
            watched = _watch(watching, modes, target, writes)
    finally:
        shutil.rmtree(target, ignore_errors=True)
    result["load_average"]["after"] = os.getloadavg()
    first = watched.pop("first")
    result["watch_first_ms"] = {
        "latency": round(first["latency"][0] * 1000, 3),
        "refresh": round(first["refresh"][0] * 1000, 3),
    }
    for mode, record in watched.items():
        result[f"watch_{mode}"] = {
            "latency_ms": Stats.of(record["latency"]).to_dict(),
            "refresh_ms": Stats.of(record["refresh"]).to_dict(),
            "roots_scanned": max(record["roots"]),
            "skills_scanned": max(record["skills"]),
        }
    inc, full = result["watch_incremental"], result["watch_full"]
    result["refresh_full_vs_incremental"] = round(
        full["refresh_ms"]["median"] / inc["refresh_ms"]["median"], 2
    )
    result["watch_pass"] = inc["latency_ms"]["max"] < WATCH_TARGET_S * 1000
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--writes", type=int, default=10)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    options = parser.parse_args(argv)
    results = []
    with work_dir(options.work_dir) as work:
        for size in options.sizes:
            results.append(measure(work / f"live-{size}", size, options.runs, options.writes))
    ok = all(r["watch_pass"] for r in results)
    if options.json:
        print(json.dumps({"results": results, "machine": machine_info()}, indent=2))
    else:
        rows = []
        for r in results:
            rows.append(
                [
                    f"refresh (warm), {r['skills']:,} skills",
                    ms(r["refresh_ms"]["median"] / 1000),
                    f"{r['refresh_vs_floor']:.2f}x stat floor "
                    f"({ms(r['floor_ms']['median'] / 1000)})",
                    "",
                ]
            )
            rows.append(
                [
                    f"auto check (unchanged), {r['skills']:,} skills",
                    ms(r["auto_check_ms"]["median"] / 1000),
                    f"{r['auto_vs_floor']:.2f}x stat floor, "
                    f"{r['auto_vs_refresh']:.2f}x warm refresh",
                    "",
                ]
            )
            if "watch_incremental" not in r:
                continue
            for mode in ("incremental", "full"):
                w = r[f"watch_{mode}"]
                scanned = (
                    f"{w['roots_scanned']} of {r['roots']} roots, "
                    f"{w['skills_scanned']:,} skills scanned"
                )
                rows.append(
                    [
                        f"watch refresh, {mode}",
                        ms(w["refresh_ms"]["median"] / 1000),
                        f"max {ms(w['refresh_ms']['max'] / 1000)}; {scanned}",
                        "",
                    ]
                )
                rows.append(
                    [
                        f"watch latency, {mode}",
                        ms(w["latency_ms"]["median"] / 1000),
                        f"max {ms(w['latency_ms']['max'] / 1000)}",
                        ("PASS" if r["watch_pass"] else "FAIL") if mode == "incremental" else "",
                    ]
                )
            first = r["watch_first_ms"]
            rows.append(
                [
                    "watch latency, first new skill",
                    ms(first["latency"] / 1000),
                    f"its refresh {ms(first['refresh'] / 1000)} (incremental)",
                    "",
                ]
            )
            load = ["/".join(f"{x:.1f}" for x in r["load_average"][k]) for k in ("before", "after")]
            rows.append(
                [
                    f"  full / incremental refresh, {r['skills']:,} skills",
                    f"{r['refresh_full_vs_incremental']:.1f}x",
                    f"load average {load[0]} -> {load[1]} ({os.cpu_count()} CPUs)",
                    "",
                ]
            )
        print(format_table(["what", "median", "detail", f"< {WATCH_TARGET_S:.0f} s"], rows))
    return 1 if options.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
