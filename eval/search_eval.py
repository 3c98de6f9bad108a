"""Measure skill search quality on the real-world corpus, against a plain baseline.

    python eval/search_eval.py [--corpus DIR] [--requests FILE] [--json] [--show]

Discovers every skill of the corpus (hidden folders such as `.curated/` are added
as extra roots, since discovery skips hidden folders below a root), then runs each
request of `search_requests.toml` through:

* skillpack: `SkillSearch` (rules, weighted FTS5 BM25 over name, description,
  when_to_use and the body's opening, relevance threshold);
* baseline: FTS5 with its default `bm25()` over name + description only, every
  query word OR-ed, no stemming, no rules, no threshold.

Both see the same candidates (model-invocable skills). Reported for the requests
with expected skills: recall@1, recall@5 and MRR (reciprocal rank of the first
correct skill within the top 10, 0 when absent). For the requests no skill fits:
how many return nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parents[1] / "shared" / "corpus" / "real-skills"
DEFAULT_REQUESTS = HERE / "search_requests.toml"
TOP = 10
"""Results asked of each ranker; MRR counts a correct skill only within these."""

try:
    from skillpack._model import Catalog, Root, Skill
    from skillpack.discovery._discover import discover, read_body
    from skillpack.index._search import SkillSearch
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(HERE.parent / "src"))
    from skillpack._model import Catalog, Root, Skill
    from skillpack.discovery._discover import discover, read_body
    from skillpack.index._search import SkillSearch


@dataclass(frozen=True, kw_only=True, slots=True)
class Request:
    query: str
    expect: tuple[str, ...]


def load_requests(path: Path) -> list[Request]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return [
        Request(query=item["query"], expect=tuple(item.get("expect", ())))
        for item in data["request"]
    ]


def corpus_roots(corpus: Path) -> list[Root]:
    """The corpus itself plus every hidden folder holding a SKILL.md below it."""
    roots = [Root(path=str(corpus), scope="extra")]
    for folder, dirs, _files in os.walk(corpus):
        dirs.sort()
        hidden = folder != str(corpus) and os.path.basename(folder).startswith(".")
        if hidden and any("SKILL.md" in f for _, _, f in os.walk(folder)):
            roots.append(Root(path=folder, scope="extra"))
    return roots


def load_corpus(corpus: Path) -> Catalog:
    return discover(roots=corpus_roots(corpus), use_cache=False, max_depth=10)


def relpath(skill: Skill, corpus: Path) -> str:
    return os.path.relpath(skill.real_path or skill.path, os.path.realpath(corpus))


class Baseline:
    """Plain BM25 over name + description: FTS5 defaults, no stemming, no rules."""

    def __init__(self, skills: Sequence[Skill]) -> None:
        self._skills = list(skills)
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute("CREATE VIRTUAL TABLE doc USING fts5(name, description)")
        self._conn.executemany(
            "INSERT INTO doc(rowid, name, description) VALUES (?, ?, ?)",
            [(i, s.name, s.description) for i, s in enumerate(self._skills)],
        )

    def search(self, query: str, limit: int) -> list[Skill]:
        words = dict.fromkeys(re.findall(r"[^\W_]+", query.lower()))
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self._conn.execute(
            "SELECT rowid FROM doc WHERE doc MATCH ? ORDER BY bm25(doc) LIMIT ?",
            (match, limit),
        ).fetchall()
        return [self._skills[rowid] for (rowid,) in rows]


def score(
    requests: Sequence[Request],
    ranker: Callable[[str], list[str]],
) -> dict[str, Any]:
    """recall@1, recall@5, MRR on fit requests; empty answers on no-fit requests."""
    fit = [r for r in requests if r.expect]
    nofit = [r for r in requests if not r.expect]
    hits1 = hits5 = 0
    rr_sum = 0.0
    empty_on_fit = 0
    per_request = []
    timings = []
    for request in requests:
        started = time.perf_counter()
        ranked = ranker(request.query)
        timings.append(time.perf_counter() - started)
        rank = next((i + 1 for i, p in enumerate(ranked) if p in request.expect), None)
        per_request.append({"query": request.query, "rank": rank, "top": ranked[:3]})
        if not request.expect:
            continue
        if not ranked:
            empty_on_fit += 1
        if rank == 1:
            hits1 += 1
        if rank is not None and rank <= 5:
            hits5 += 1
        if rank is not None:
            rr_sum += 1.0 / rank
    nofit_empty = sum(
        1 for r, p in zip(requests, per_request, strict=True) if not r.expect and not p["top"]
    )
    return {
        "fit_requests": len(fit),
        "recall_at_1": hits1 / len(fit),
        "recall_at_5": hits5 / len(fit),
        "mrr": rr_sum / len(fit),
        "fit_with_no_results": empty_on_fit,
        "nofit_requests": len(nofit),
        "nofit_empty": nofit_empty,
        "median_ms": statistics.median(timings) * 1000,
        "max_ms": max(timings) * 1000,
        "per_request": per_request,
    }


def run(corpus: Path = DEFAULT_CORPUS, requests_path: Path = DEFAULT_REQUESTS) -> dict[str, Any]:
    """Run both rankers over the requests; raise if a request names an unknown skill."""
    requests = load_requests(requests_path)
    catalog = load_corpus(corpus)
    candidates = [s for s in catalog.skills if s.model_invocable]
    known = {relpath(s, corpus) for s in candidates}
    for request in requests:
        missing = [p for p in request.expect if p not in known]
        if missing:
            raise SystemExit(f"{requests_path}: {request.query!r} expects unknown {missing}")

    search = SkillSearch(sqlite3.connect(":memory:"), read_body=read_body)
    started = time.perf_counter()
    search.search(catalog, "warm up the index", limit=1)
    build_s = time.perf_counter() - started

    def ours(query: str) -> list[str]:
        results = search.search(catalog, query, limit=TOP)
        return [relpath(r.skill, corpus) for r in results]

    baseline = Baseline(candidates)

    def theirs(query: str) -> list[str]:
        return [relpath(s, corpus) for s in baseline.search(query, TOP)]

    return {
        "corpus": str(corpus),
        "skills": len(catalog.skills),
        "model_invocable": len(candidates),
        "index_build_s": build_s,
        "skillpack": score(requests, ours),
        "baseline": score(requests, theirs),
    }


def _table(report: dict[str, Any]) -> str:
    rows = [
        ("recall@1", "recall_at_1", "{:.3f}"),
        ("recall@5", "recall_at_5", "{:.3f}"),
        ("MRR", "mrr", "{:.3f}"),
        ("fit requests with no results", "fit_with_no_results", "{}"),
        ("no-fit requests returning nothing", "nofit_empty", "{}"),
        ("median search ms", "median_ms", "{:.2f}"),
        ("max search ms", "max_ms", "{:.2f}"),
    ]
    ours, base = report["skillpack"], report["baseline"]
    lines = [
        f"corpus: {report['corpus']} ({report['skills']} skills, "
        f"{report['model_invocable']} model-invocable)",
        f"requests: {ours['fit_requests']} with expected skills, "
        f"{ours['nofit_requests']} that no skill fits",
        f"skillpack index build: {report['index_build_s'] * 1000:.0f} ms",
        "",
        f"{'':36}{'skillpack':>12}{'baseline':>12}",
    ]
    for label, key, fmt in rows:
        suffix = f" / {ours['nofit_requests']}" if key == "nofit_empty" else ""
        lines.append(
            f"{label:36}{fmt.format(ours[key]) + suffix:>12}{fmt.format(base[key]) + suffix:>12}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--requests", type=Path, default=DEFAULT_REQUESTS)
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    parser.add_argument("--show", action="store_true", help="print each request's rank")
    args = parser.parse_args(argv)
    report = run(args.corpus, args.requests)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    if args.show:
        for ours, base in zip(
            report["skillpack"]["per_request"], report["baseline"]["per_request"], strict=True
        ):
            print(f"{ours['rank']!s:>5} {base['rank']!s:>5}  {ours['query'][:70]}")
            if ours["rank"] != 1:
                print(f"{'':12}ours: {[p.split('/')[-2] for p in ours['top']]}")
        print()
    print(_table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
