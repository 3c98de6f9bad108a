"""Selection and rendering speed: resolve a 100 KB message, render 10,000 skills.

    python bench/bench_select.py                 # both, medians over many runs
    python bench/bench_select.py --json
    python bench/bench_select.py --check         # exit 1 when a target fails

Targets (issue "selecting and injecting skills"): resolving a 100 KB message
against a 1,000-skill catalog < 5 ms median; rendering 10,000 skills under the
default budget < 50 ms median. In-process timings (the work a host does per turn),
on corpora from gen_corpus.py.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import ensure_corpus, format_table, isolated_env, machine_info, ms, timed

RESOLVE_TARGET_S = 0.005
RENDER_TARGET_S = 0.050


def build_message(catalog: Any, size: int, seed: int) -> str:
    """~`size` chars of realistic text: skill bodies (code fences, `$VARS`, amounts)
    with a few real mentions, a near miss and an unknown id sprinkled in."""
    from skillpack.discovery._discover import read_body

    rng = random.Random(seed)
    skills = list(catalog.skills)
    parts: list[str] = []
    total = 0
    while total < size:
        body = read_body(rng.choice(skills))[:4000]
        parts.append(body)
        total += len(body)
    names = [s.name for s in rng.sample(skills, 3)]
    parts.insert(len(parts) // 3, f"Please use ${names[0]} for this and check $nope first.")
    parts.insert(len(parts) // 2, f"Costs were $1,000 and $9.99; echo $PATH; ${names[1]}x too.")
    return "\n\n".join(parts)[:size]


def measure(work: Path, runs: int) -> dict[str, Any]:
    import os

    os.environ.update(isolated_env(work))
    from skillpack._model import Root
    from skillpack.discovery._discover import discover
    from skillpack.render._catalog import render_catalog
    from skillpack.select._resolve import resolve_message

    small = ensure_corpus(work / "corpora", 1000)
    large = ensure_corpus(work / "corpora", 10_000)
    catalog_1k = discover(
        roots=[Root(path=str(r), scope="extra") for r in small.roots], use_cache=False
    )
    catalog_10k = discover(
        roots=[Root(path=str(r), scope="extra") for r in large.roots], use_cache=False
    )
    message = build_message(catalog_1k, 100_000, seed=0)
    resolution = resolve_message(message, catalog_1k)
    resolve = timed(lambda: resolve_message(message, catalog_1k), runs)
    skills_10k = [s for s in catalog_10k.skills if s.model_invocable]
    renders = {
        fmt: timed(lambda fmt=fmt: render_catalog(skills_10k, format=fmt), max(20, runs // 4))
        for fmt in ("xml", "markdown", "json")
    }
    # The default mode gives 10,000 skills the deferred stub; `full` names what fits.
    renders["xml, mode full"] = timed(
        lambda: render_catalog(skills_10k, format="xml", mode="full"), max(20, runs // 4)
    )
    report = render_catalog(skills_10k).report
    return {
        "resolve": {
            "catalog_skills": len(catalog_1k.skills),
            "message_chars": len(message),
            "activations": len(resolution.activations),
            "diagnostics": [d.kind for d in resolution.diagnostics],
            "stats_ms": resolve.to_dict(),
            "target_ms": RESOLVE_TARGET_S * 1000,
            "pass": resolve.median < RESOLVE_TARGET_S,
        },
        "render": {
            "skills": len(skills_10k),
            "budget_chars": report.budget_chars,
            "shown": report.shown,
            "omitted": len(report.omitted),
            "deferred": report.deferred,
            "formats": {
                fmt: {"stats_ms": s.to_dict(), "pass": s.median < RENDER_TARGET_S}
                for fmt, s in renders.items()
            },
            "target_ms": RENDER_TARGET_S * 1000,
        },
        "machine": machine_info(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    options = parser.parse_args(argv)
    if options.work_dir is not None:
        options.work_dir.mkdir(parents=True, exist_ok=True)
        results = measure(options.work_dir, options.runs)
    else:
        with tempfile.TemporaryDirectory(prefix="skillpack-bench-") as tmp:
            results = measure(Path(tmp), options.runs)
    ok = results["resolve"]["pass"] and all(
        f["pass"] for f in results["render"]["formats"].values()
    )
    if options.json:
        print(json.dumps(results, indent=2))
    else:
        r = results["resolve"]
        rows = [
            [
                f"resolve {r['message_chars']:,} chars vs {r['catalog_skills']:,} skills",
                ms(r["stats_ms"]["median"] / 1000),
                ms(r["stats_ms"]["p99"] / 1000),
                f"< {r['target_ms']:.0f} ms",
                "PASS" if r["pass"] else "FAIL",
            ]
        ]
        for fmt, f in results["render"]["formats"].items():
            rows.append(
                [
                    f"render {results['render']['skills']:,} skills ({fmt})",
                    ms(f["stats_ms"]["median"] / 1000),
                    ms(f["stats_ms"]["p99"] / 1000),
                    f"< {results['render']['target_ms']:.0f} ms",
                    "PASS" if f["pass"] else "FAIL",
                ]
            )
        print(format_table(["what", "median", "p99", "target", "verdict"], rows))
        print(
            f"resolve found {r['activations']} activation(s), diagnostics {r['diagnostics']}; "
            f"render showed {results['render']['shown']:,} entries in "
            f"{results['render']['budget_chars']:,} chars, omitted "
            f"{results['render']['omitted']:,} (reported"
            f"{'; the deferred stub' if results['render']['deferred'] else ''})"
        )
    return 1 if options.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
