"""Measure skill search quality on the real-world corpus, against a plain baseline.

    python eval/search_eval.py [--corpus DIR] [--requests FILE] [--split FILE]
                               [--json] [--show] [--show-held-out]

Discovers every skill of the corpus (hidden folders such as `.curated/` are added
as extra roots, since discovery skips hidden folders below a root), then runs each
request of `search_requests.toml` through:

* skillpack: `SkillSearch` (rules, weighted FTS5 BM25 over name, description,
  when_to_use and the body's opening; each result marked strong or weak);
* baseline: FTS5 with its default `bm25()` over name + description only, every
  query word OR-ed, no stemming, no rules, no threshold (every result counts as
  strong: it has no other notion).

Both see the same candidates (model-invocable skills). Every number is reported
for the tuning half and the held-out half of `search_split.toml` apart (tune on
the first only; the second is the one that counts). For the requests with
expected skills: recall@1, recall@5 and MRR (reciprocal rank of the first correct
skill within the top 10, 0 when absent), the share whose first result is strong,
and how many get no result. For the requests no skill fits: the share with no
strong result ("no skill fits"), and how many get no result at all.
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

sys.path.insert(0, str(HERE))
from search_split import DEFAULT_SPLIT, HALVES, load_split, request_id  # noqa: E402

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
    half: str
    """"tune" or "held_out", from `search_split.toml`."""


def load_requests(path: Path, split_path: Path = DEFAULT_SPLIT) -> list[Request]:
    """The requests with their halves; refuses a request the split does not list."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    split = load_split(split_path)
    requests = []
    for item in data["request"]:
        half = split.get(request_id(item["query"]))
        if half is None:
            raise SystemExit(
                f"{path}: {item['query']!r} is in neither half of {split_path}; "
                "run `python eval/search_split.py` to draw the new requests' halves"
            )
        requests.append(
            Request(query=item["query"], expect=tuple(item.get("expect", ())), half=half)
        )
    return requests


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


Ranked = list[tuple[str, bool]]
"""A ranker's answer: SKILL.md paths under the corpus, best first, each with
whether it is a strong match."""


def score(requests: Sequence[Request], ranker: Callable[[str], Ranked]) -> dict[str, Any]:
    """Quality per half ("tune", "held_out") and over all requests.

    On the requests some skill fits: recall@1, recall@5, MRR, how many get no
    result, and the share whose first result is strong. On the no-fit requests:
    the share with no strong result (the answer "no skill fits"), and how many
    get no result at all.
    """
    answers = []
    timings = []
    for request in requests:
        started = time.perf_counter()
        ranked = ranker(request.query)
        timings.append(time.perf_counter() - started)
        answers.append(ranked)
    report: dict[str, Any] = {}
    for half in (*HALVES, "all"):
        chosen = [
            (request, ranked)
            for request, ranked in zip(requests, answers, strict=True)
            if half in ("all", request.half)
        ]
        report[half] = _metrics(chosen)
    report["median_ms"] = statistics.median(timings) * 1000
    report["max_ms"] = max(timings) * 1000
    return report


def _metrics(answers: Sequence[tuple[Request, Ranked]]) -> dict[str, Any]:
    fit = [(r, ranked) for r, ranked in answers if r.expect]
    nofit = [(r, ranked) for r, ranked in answers if not r.expect]
    ranks = [
        next((i + 1 for i, (p, _strong) in enumerate(ranked) if p in r.expect), None)
        for r, ranked in fit
    ]
    per_request = [
        {
            "query": r.query,
            "rank": rank,
            "strong": sum(1 for _p, strong in ranked if strong),
            "top": [p for p, _strong in ranked[:3]],
        }
        for (r, ranked), rank in zip([*fit, *nofit], [*ranks, *[None] * len(nofit)], strict=True)
    ]
    n_fit = max(len(fit), 1)
    n_nofit = max(len(nofit), 1)
    return {
        "fit_requests": len(fit),
        "nofit_requests": len(nofit),
        "recall_at_1": sum(1 for rank in ranks if rank == 1) / n_fit,
        "recall_at_5": sum(1 for rank in ranks if rank is not None and rank <= 5) / n_fit,
        "mrr": sum(1.0 / rank for rank in ranks if rank is not None) / n_fit,
        "fit_strong_first": sum(1 for _r, ranked in fit if ranked and ranked[0][1]) / n_fit,
        "fit_with_no_results": sum(1 for _r, ranked in fit if not ranked),
        "nofit_no_strong": sum(1 for _r, ranked in nofit if not any(s for _p, s in ranked))
        / n_nofit,
        "nofit_empty": sum(1 for _r, ranked in nofit if not ranked),
        "per_request": per_request,
    }


def run(
    corpus: Path = DEFAULT_CORPUS,
    requests_path: Path = DEFAULT_REQUESTS,
    split_path: Path = DEFAULT_SPLIT,
) -> dict[str, Any]:
    """Run both rankers over the requests; raise if a request names an unknown skill."""
    requests = load_requests(requests_path, split_path)
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

    def ours(query: str) -> Ranked:
        results = search.search(catalog, query, limit=TOP)
        return [(relpath(r.skill, corpus), r.match == "strong") for r in results]

    baseline = Baseline(candidates)

    def theirs(query: str) -> Ranked:
        # No notion of a weak match: every result it returns is an answer.
        return [(relpath(s, corpus), True) for s in baseline.search(query, TOP)]

    return {
        "corpus": str(corpus),
        "skills": len(catalog.skills),
        "model_invocable": len(candidates),
        "index_build_s": build_s,
        "skillpack": score(requests, ours),
        "baseline": score(requests, theirs),
    }


_ROWS = (
    ("recall@1", "recall_at_1", "{:.3f}"),
    ("recall@5", "recall_at_5", "{:.3f}"),
    ("MRR", "mrr", "{:.3f}"),
    ("fit: strong first result", "fit_strong_first", "{:.3f}"),
    ("fit: no result at all", "fit_with_no_results", "{}"),
    ("no-fit: no strong result", "nofit_no_strong", "{:.3f}"),
    ("no-fit: no result at all", "nofit_empty", "{}"),
)


def _table(report: dict[str, Any]) -> str:
    ours, base = report["skillpack"], report["baseline"]
    lines = [
        f"corpus: {report['corpus']} ({report['skills']} skills, "
        f"{report['model_invocable']} model-invocable)",
        *(
            f"{label}: {ours[half]['fit_requests']} requests some skill fits, "
            f"{ours[half]['nofit_requests']} that none does"
            for half, label in (("tune", "tuning half"), ("held_out", "held-out half"))
        ),
        f"skillpack index build: {report['index_build_s'] * 1000:.0f} ms; search median "
        f"{ours['median_ms']:.2f} ms, max {ours['max_ms']:.2f} ms",
        "",
        f"{'':28}{'skillpack':>20}{'baseline':>20}",
        f"{'':28}{'tune':>10}{'held-out':>10}{'tune':>10}{'held-out':>10}",
    ]
    for label, key, fmt in _ROWS:
        cells = [fmt.format(side[half][key]) for side in (ours, base) for half in HALVES]
        lines.append(f"{label:28}" + "".join(f"{cell:>10}" for cell in cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--requests", type=Path, default=DEFAULT_REQUESTS)
    parser.add_argument("--split", type=Path, default=DEFAULT_SPLIT)
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    parser.add_argument(
        "--show", action="store_true", help="print each request of the tuning half, ranked"
    )
    parser.add_argument(
        "--show-held-out",
        action="store_true",
        help="print the held-out half's requests too (not while tuning)",
    )
    args = parser.parse_args(argv)
    report = run(args.corpus, args.requests, args.split)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    halves = [h for h, wanted in (("tune", args.show), ("held_out", args.show_held_out)) if wanted]
    for half in halves:
        print(f"-- {half}: rank (skillpack, baseline), strong results, query")
        for ours, base in zip(
            report["skillpack"][half]["per_request"],
            report["baseline"][half]["per_request"],
            strict=True,
        ):
            print(
                f"{ours['rank']!s:>5} {base['rank']!s:>5} {ours['strong']:>3}  {ours['query'][:70]}"
            )
            if ours["rank"] != 1 and (ours["rank"] is not None or ours["top"]):
                print(f"{'':16}ours: {[p.split('/')[-2] for p in ours['top']]}")
        print()
    print(_table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
