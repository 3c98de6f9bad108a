"""Does the right skill reach the model at the turn? Suggestions and the catalog, measured.

    python eval/suggest_eval.py [--corpus DIR] [--work-dir DIR] [--json] [--check]

For each request of `suggest_requests.toml`, at three catalog sizes (40 skills, the
real corpus, 4,000 skills: the real corpus plus skills from `bench/gen_corpus.py`),
a `Session` over that catalog renders its catalog as every surface does
(`Session.render_catalog`, the default budget) and prepares the request as a user
turn (`Session.prepare_turn`). Reported per half of `suggest_split.toml` (tune the
gate on `tune` only; `held_out` is the number that counts):

* visible: of the requests some skill fits, the share whose right skill the model
  sees at the turn: in the catalog with its description (the render report lists
  it neither as name-only nor as omitted), or among the turn's suggestions; and
  each way apart (`catalog`, `suggested`);
* quiet: of the requests no skill fits, the share with no suggestion;
* recall@1, recall@5 and MRR (within the top 10) of the search ranking the
  suggestions are picked from.

The 40-skill catalog is 40 skills drawn from those the requests expect,
so that enough requests have their skill in it; a request counts at a size only
when one of its expected skills is in that catalog. `--check` exits 1 when a
held-out number misses its target (visible >= 0.95, quiet >= 0.85).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parents[1] / "shared" / "corpus" / "real-skills"
DEFAULT_REQUESTS = HERE / "suggest_requests.toml"
DEFAULT_SPLIT = HERE / "suggest_split.toml"
SMALL = 40
LARGE = 4000
SEED = 38
TOP = 10
TARGETS = {"visible": 0.95, "quiet": 0.85}
"""Held-out targets."""

sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "bench"))
# The request file's form, its split and the corpus paths are the search eval's.
from search_eval import Request  # noqa: E402
from search_eval import load_requests as load_split_requests  # noqa: E402
from search_eval import relpath as rel  # noqa: E402
from search_split import HALVES  # noqa: E402

from skillpack._model import Catalog, Root, Skill  # noqa: E402
from skillpack.config._schema import Config  # noqa: E402
from skillpack.discovery._discover import discover, read_body  # noqa: E402
from skillpack.index._search import SkillSearch  # noqa: E402
from skillpack.render._catalog import CatalogReport  # noqa: E402
from skillpack.runtime._session import Session  # noqa: E402


def load_requests(path: Path = DEFAULT_REQUESTS, split_path: Path = DEFAULT_SPLIT) -> list[Request]:
    """The suggestion requests with their halves (`search_eval.load_requests`)."""
    return load_split_requests(path, split_path)


def model_skills(catalog: Catalog) -> list[Skill]:
    return [s for s in catalog.skills if s.model_invocable and s.shadowed_by is None]


def catalogs(corpus: Path, requests: Sequence[Request], work: Path) -> dict[str, Catalog]:
    """The three catalogs, by label, each of model-visible skills only."""
    from _common import ensure_corpus

    skills = list(real_catalog(corpus).skills)
    by_rel = {rel(s, corpus): s for s in skills}
    unknown = sorted({e for r in requests for e in r.expect} - by_rel.keys())
    if unknown:
        raise SystemExit(f"expected skills not in the corpus (or not model-visible): {unknown}")
    expected = sorted({e for r in requests for e in r.expect})
    small = [by_rel[e] for e in random.Random(SEED).sample(expected, SMALL)]
    filler = ensure_corpus(work / "corpora", LARGE)
    generated = discover(
        roots=[Root(path=str(root), scope="extra") for root in filler.roots], use_cache=False
    )
    extra = model_skills(generated)[: LARGE - len(skills)]
    roots = (Root(path=str(corpus), scope="extra"),)
    return {
        str(SMALL): Catalog(skills=tuple(small), roots=roots),
        str(len(skills)): Catalog(skills=tuple(skills), roots=roots),
        str(len(skills) + len(extra)): Catalog(
            skills=tuple(skills) + tuple(extra), roots=roots + generated.roots
        ),
    }


def real_catalog(corpus: Path) -> Catalog:
    """The corpus's model-visible skills, discovered as `--root` discovers them."""
    real = discover(roots=[Root(path=str(corpus), scope="extra")], use_cache=False)
    return Catalog(skills=tuple(model_skills(real)), roots=real.roots)


def measure(catalog: Catalog, requests: Sequence[Request], corpus: Path) -> dict[str, Any]:
    """Per half: visibility, quiet share, ranking quality and turn latency."""
    present = {rel(s, corpus) for s in catalog.skills}
    session = Session(catalog, config=Config())
    report = session.render_catalog().report
    described = described_paths(catalog, report, corpus)
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=read_body)
    per_half: dict[str, dict[str, Any]] = {}
    for half in HALVES:
        fits: list[dict[str, Any]] = []
        quiet: list[bool] = []
        times: list[float] = []
        for request in (r for r in requests if r.half == half):
            expect = set(request.expect) & present
            if request.expect and not expect:
                continue  # its skill is not in this catalog
            start = time.perf_counter()
            turn = session.prepare_turn(request.query)
            times.append(time.perf_counter() - start)
            suggested = {rel_path(s.path, corpus) for s in turn.suggestions}
            if not request.expect:
                quiet.append(not turn.suggestions)
                continue
            ranking = [
                rel(r.skill, corpus) for r in search.search(catalog, request.query, limit=TOP)
            ]
            rank = next((i + 1 for i, path in enumerate(ranking) if path in expect), None)
            fits.append(
                {
                    "query": request.query,
                    "catalog": bool(expect & described),
                    "suggested": bool(expect & suggested),
                    "rank": rank,
                }
            )
        n = len(fits)
        per_half[half] = {
            "fit_requests": n,
            "no_fit_requests": len(quiet),
            "visible": share(f["catalog"] or f["suggested"] for f in fits),
            "catalog": share(f["catalog"] for f in fits),
            "suggested": share(f["suggested"] for f in fits),
            "quiet": share(quiet),
            "recall@1": share(f["rank"] == 1 for f in fits),
            "recall@5": share(f["rank"] is not None and f["rank"] <= 5 for f in fits),
            "mrr": sum(1 / f["rank"] for f in fits if f["rank"]) / n if n else 0.0,
            "turn_ms_median": statistics.median(times) * 1000 if times else 0.0,
            "missed": [f["query"] for f in fits if not (f["catalog"] or f["suggested"])]
            if half == "tune"
            else [],
        }
    session.close()
    return {
        "skills": len(catalog.skills),
        "catalog_shown": report.shown,
        "catalog_described": len(described),
        "catalog_chars": report.used_chars,
        "halves": per_half,
    }


def described_paths(catalog: Catalog, report: CatalogReport, corpus: Path) -> set[str]:
    """The skills (corpus paths) the rendered catalog lists with their description:
    the render report names neither as name-only nor as omitted."""
    hidden = set(report.names_only) | set(report.omitted)
    return {rel(s, corpus) for s in catalog.skills if s.name not in hidden}


def rendered_descriptions(catalog: Catalog, corpus: Path) -> set[str]:
    """`described_paths` of `catalog` rendered as every surface does (default budget)."""
    session = Session(catalog, config=Config())
    try:
        return described_paths(catalog, session.render_catalog().report, corpus)
    finally:
        session.close()


def rel_path(path: str, corpus: Path) -> str:
    return os.path.relpath(os.path.realpath(path), os.path.realpath(corpus))


def share(values: Any) -> float:
    items = list(values)
    return sum(1 for v in items if v) / len(items) if items else 0.0


def table(results: dict[str, dict[str, Any]]) -> str:
    head = (
        "skills  half      fit  no-fit  visible  catalog  suggested  quiet  "
        "r@1    r@5    MRR    turn ms"
    )
    lines = [head, "-" * len(head)]
    for label, result in results.items():
        for half in HALVES:
            h = result["halves"][half]
            lines.append(
                f"{label:>6}  {half:<8} {h['fit_requests']:>4}  {h['no_fit_requests']:>6}  "
                f"{h['visible']:>7.3f}  {h['catalog']:>7.3f}  {h['suggested']:>9.3f}  "
                f"{h['quiet']:>5.3f}  {h['recall@1']:.3f}  {h['recall@5']:.3f}  "
                f"{h['mrr']:.3f}  {h['turn_ms_median']:>7.2f}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--work-dir", type=Path, default=None, help="keep generated skills here")
    parser.add_argument("--json", action="store_true", help="print the full report")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        raise SystemExit(f"{args.corpus}: no such corpus; pass --corpus DIR")
    requests = load_requests()
    with tempfile.TemporaryDirectory(prefix="skillpack-suggest-") as tmp:
        # The turns' search index goes to a throwaway home, never the user's.
        os.environ["SKILLPACK_HOME"] = str(Path(tmp) / "home")
        work = args.work_dir or Path(tmp)
        results = {
            label: measure(catalog, requests, args.corpus)
            for label, catalog in catalogs(args.corpus, requests, work).items()
        }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(table(results))
    if args.check:
        missed = [
            f"{label} {metric} {result['halves']['held_out'][metric]:.3f} < {target}"
            for label, result in results.items()
            for metric, target in TARGETS.items()
            if result["halves"]["held_out"][metric] < target
        ]
        for line in missed:
            print(f"target missed: {line}", file=sys.stderr)
        return 1 if missed else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
