"""A live catalog: what an `on_call` refresh costs, and how soon `watch` sees a new skill.

    python bench/bench_live.py                   # 1,000 and 10,000 skills
    python bench/bench_live.py --sizes 1000 --json
    python bench/bench_live.py --check           # exit 1 when a target fails

- `refresh (warm)`: `Session.refresh()` on an unchanged tree, what `refresh="on_call"`
  pays at most every `refresh_interval` before a tool call. The floor is one `os.stat`
  per folder and per SKILL.md of the tree (the least any staleness check must do),
  timed in the same run; the ratio is refresh / floor.
- `watch latency`: `refresh="watch"`, a new SKILL.md written into a root, time until
  the subscriber hears of it (debounce + re-discovery). Target: every one < 1 s
  (issue 10). In-process timings, on corpora from gen_corpus.py.
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


def measure(work: Path, size: int, runs: int, writes: int) -> dict[str, Any]:
    os.environ.update(isolated_env(work))
    from skillpack.runtime._session import Session

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

    session = Session.open(**options)  # type: ignore[arg-type]
    skills = len(session.catalog.skills)
    refresh = timed(session.refresh, runs)
    floor_stats = timed(floor, runs)
    session.close()

    changes: queue.Queue[Any] = queue.Queue()
    latencies: list[float] = []
    target = Path(roots[0]) / "bench-live"
    shutil.rmtree(target, ignore_errors=True)  # a reused corpus starts without them
    with Session.open(refresh="watch", **options) as watching:  # type: ignore[arg-type]
        watching.subscribe(changes.put)
        for i in range(writes):
            folder = target / f"live-skill-{i}"
            folder.mkdir(parents=True, exist_ok=True)
            name = folder.name
            start = time.perf_counter()
            (folder / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: Live {i}. Use when measuring.\n---\nBody.\n",
                encoding="utf-8",
            )
            deadline = start + 10.0
            while True:
                change = changes.get(timeout=max(0.0, deadline - time.perf_counter()))
                if any(s.name == name for s in change.added):
                    latencies.append(time.perf_counter() - start)
                    break
            time.sleep(0.3)  # let the next write start a new burst
    shutil.rmtree(target, ignore_errors=True)
    watch = Stats.of(latencies)
    return {
        "skills": skills,
        "refresh_ms": refresh.to_dict(),
        "floor_ms": floor_stats.to_dict(),
        "refresh_vs_floor": round(refresh.median / floor_stats.median, 2),
        "watch_latency_ms": watch.to_dict(),
        "watch_target_ms": WATCH_TARGET_S * 1000,
        "watch_pass": watch.max < WATCH_TARGET_S,
    }


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
            w = r["watch_latency_ms"]
            rows.append(
                [
                    f"watch latency, {r['skills']:,} skills",
                    ms(w["median"] / 1000),
                    f"max {ms(w['max'] / 1000)}",
                    "PASS" if r["watch_pass"] else "FAIL",
                ]
            )
        print(format_table(["what", "median", "detail", f"< {WATCH_TARGET_S:.0f} s"], rows))
    return 1 if options.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
