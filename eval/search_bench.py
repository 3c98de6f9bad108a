"""Time skill search on a large corpus: index build against the discovery floor, and
warm query latency.

    python eval/search_bench.py CORPUS_DIR [--queries 1000] [--repeat 5] [--json]

CORPUS_DIR is any folder of skills, e.g. one written by
`python bench/gen_corpus.py OUT --skills 10000` (its `root-*` folders are used as
roots). With a warm OS file cache, each repetition measures back to back:

* floor: `python bench/floor.py ROOT...` as a whole process, the discovery floor
  of the catalog benchmark (`bench/bench_catalog.py`): scandir walk + read of
  every SKILL.md + libyaml parse, plus the interpreter start and `import yaml`;
* floor in process: the same walk, reads and parses inside this process, without
  that start-up (a stricter comparison, printed for information);
* build: the first `SkillSearch.search` against a fresh index file opened as
  skillpack opens its cache (`_index.connect`: WAL, no fsync); it reads the head
  of every body with `read_body_head` and fills FTS5.

Ratios are of medians over the repetitions, as in the catalog benchmark; the
median of the per-repetition ratios is printed too (robust to a machine whose
speed drifts between repetitions). Then:

* reopen: the first search of a new `SkillSearch` on the built file (no body read);
* queries: warm searches, median and p99, in wall time and in the thread's CPU
  time (which holds still on a machine that other processes keep busy). The query
  mix: words sampled from the corpus's own descriptions (3-8 words, the expensive
  case: common words), skill names, name prefixes, and the request texts of
  `search_requests.toml`.

Never touches the home directory: the index files live in a temp dir.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "bench"))
import floor  # noqa: E402 - bench/floor.py, the standalone discovery floor
from _common import run_timed  # noqa: E402 - bench/_common.py

try:
    from skillpack._model import Root
    from skillpack.discovery._discover import discover, read_body
    from skillpack.discovery._skill_files import read_body_head
    from skillpack.index._cache import connect
    from skillpack.index._search import SkillSearch
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(HERE.parent / "src"))
    from skillpack._model import Root
    from skillpack.discovery._discover import discover, read_body
    from skillpack.discovery._skill_files import read_body_head
    from skillpack.index._cache import connect
    from skillpack.index._search import SkillSearch


def _roots(corpus: Path) -> list[str]:
    roots = sorted(str(p) for p in corpus.glob("root-*") if p.is_dir())
    return roots or [str(corpus)]


def _floor_in_process(roots: list[str]) -> float:
    started = time.perf_counter()
    floor.scan(roots)
    return time.perf_counter() - started


def _floor_process(roots: list[str], cwd: str) -> float:
    argv = [sys.executable, str(HERE.parent / "bench" / "floor.py"), *roots]
    return run_timed(argv, env=dict(os.environ), cwd=cwd).seconds


def _build(catalog: Any, path: Path, *, keep: bool = False) -> float:
    """Seconds of a first search on a fresh index file at `path`. The file is then
    deleted unless `keep`: each build finds the disk as a single one would (the
    tens of MB an earlier build left to write back slowed later ones by a fifth)."""
    conn = connect(path)
    try:
        search = SkillSearch(conn, read_body=read_body, read_head=read_body_head)
        started = time.perf_counter()
        search.search(catalog, "warm up", limit=1)
        return time.perf_counter() - started
    finally:
        conn.close()
        if not keep:
            for leftover in path.parent.glob(path.name + "*"):
                leftover.unlink()


def _queries(catalog: Any, count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    skills = list(catalog.skills)
    requests = tomllib.loads((HERE / "search_requests.toml").read_text(encoding="utf-8"))
    texts = [r["query"] for r in requests["request"]]
    out: list[str] = []
    while len(out) < count:
        kind = rng.random()
        skill = rng.choice(skills)
        if kind < 0.6:
            words = re.findall(r"[^\W_]+", skill.description)
            if len(words) >= 3:
                k = rng.randint(3, min(8, len(words)))
                out.append(" ".join(rng.sample(words, k)))
        elif kind < 0.7:
            out.append(skill.name)
        elif kind < 0.8:
            out.append(skill.name[: rng.randint(2, max(2, len(skill.name) - 1))])
        else:
            out.append(rng.choice(texts))
    return out


def run(corpus: Path, n_queries: int, repeat: int = 5) -> dict[str, Any]:
    roots = _roots(corpus)
    catalog = discover(
        roots=[Root(path=r, scope="extra") for r in roots],
        use_cache=False,
        include_user=False,
        include_system=False,
    )
    if not catalog.skills:
        raise SystemExit(f"{corpus}: no skills found (expected root-*/ folders of SKILL.md)")
    with tempfile.TemporaryDirectory() as tmp:
        _floor_process(roots, tmp)  # untimed: warms the OS file cache
        floors, floors_in, builds = [], [], []
        for attempt in range(repeat):
            floors.append(_floor_process(roots, tmp))
            floors_in.append(_floor_in_process(roots))
            last = attempt == repeat - 1
            builds.append(_build(catalog, Path(tmp) / f"index-{attempt}.sqlite", keep=last))
        reads = 0

        def counting(skill: Any) -> str:
            nonlocal reads
            reads += 1
            return read_body(skill)

        def counting_head(skill: Any, max_chars: int) -> str:
            nonlocal reads
            reads += 1
            return read_body_head(skill, max_chars)

        conn = connect(Path(tmp) / f"index-{repeat - 1}.sqlite")
        search = SkillSearch(conn, read_body=counting, read_head=counting_head)
        started = time.perf_counter()
        search.search(catalog, "warm up", limit=1)
        reopen_s = time.perf_counter() - started

        queries = _queries(catalog, n_queries)
        timings = []
        cpu = []
        results = 0
        for query in queries:
            started = time.perf_counter()
            started_cpu = time.thread_time()
            found = search.search(catalog, query)
            cpu.append(time.thread_time() - started_cpu)
            timings.append(time.perf_counter() - started)
            results += len(found)
        conn.close()
    timings.sort()
    cpu.sort()
    median = statistics.median
    return {
        "corpus": str(corpus),
        "skills": len(catalog.skills),
        "repeat": repeat,
        "floor_s": median(floors),
        "floor_in_process_s": median(floors_in),
        "build_s": median(builds),
        "build_s_min": min(builds),
        "build_vs_floor": median(builds) / median(floors),
        "build_vs_floor_paired": median(b / f for b, f in zip(builds, floors, strict=True)),
        "build_vs_floor_in_process": median(builds) / median(floors_in),
        "floor_runs_s": [round(f, 4) for f in floors],
        "floor_in_process_runs_s": [round(f, 4) for f in floors_in],
        "build_runs_s": [round(b, 4) for b in builds],
        "reopen_first_search_s": reopen_s,
        "reopen_bodies_read": reads,
        "queries": len(queries),
        "mean_results": results / len(queries),
        "median_ms": statistics.median(timings) * 1000,
        "p99_ms": timings[int(len(timings) * 0.99) - 1] * 1000,
        "max_ms": timings[-1] * 1000,
        "cpu_median_ms": statistics.median(cpu) * 1000,
        "cpu_p99_ms": cpu[int(len(cpu) * 0.99) - 1] * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="floor/build repetitions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.corpus, args.queries, args.repeat)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:25} {value:.4g}" if isinstance(value, float) else f"{key:25} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
