"""Catalog benchmark: `skillpack list` against the discovery floor, cold and warm.

    python bench/bench_catalog.py [--sizes 1000,10000] [--repeat 5] [--corpus DIR]
                                  [--work-dir DIR] [--json] [--check]

For each corpus size (generated with bench/gen_corpus.py into a temp dir, or the
one `--corpus DIR`), in the same run and interleaved repetition by repetition:

- floor: `python bench/floor.py ROOT...` (scandir walk + read + libyaml parse);
- cold:  `skillpack list --root ROOT... --no-user --no-system --json` with a fresh,
         empty SKILLPACK_CACHE_DIR each time (so it also builds its index);
- warm:  the same command with the cache dir of an earlier run (tree unchanged);
- start-up: `skillpack list --no-user --no-system --json` with no root at all: the
         fixed cost every run pays (interpreter, imports, config, index, output)
         whatever the catalog's size, stated on its own so a small corpus's ratios
         can be read as start-up plus per-skill work;

then `python -X importtime -c "import skillpack"` (cumulative µs of the `skillpack`
line). Every number is whole-process wall time (spawn to exit). Targets (docs/design.md
"Rules: performance"):
cold ≤ 1.25× floor, warm ≤ 0.30× floor, import ≤ 60 ms; the two ratios are judged on a
corpus of 10,000 skills or more (`TARGET_MIN_SKILLS`).

The environment points HOME, SKILLPACK_HOME, the XDG dirs and the admin dir into the
work dir, and commands run from an empty directory, so nothing outside the corpus
is discovered and the real home is never touched.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    CommandFailed,
    Corpus,
    RunResult,
    Stats,
    Timing,
    ensure_corpus,
    format_table,
    import_time_us,
    isolated_env,
    load_corpus,
    machine_info,
    ms,
    run_timed,
    skillpack_command,
    work_dir,
)

COLD_MAX_RATIO = 1.25
WARM_MAX_RATIO = 0.30
IMPORT_MAX_MS = 60.0
TARGET_MIN_SKILLS = 10_000
"""The ratio targets are set at 10,000 skills. A smaller corpus's rows are
printed, not judged: there the fixed start-up is most of a run (its own line says
how much), so its ratio says little about the per-skill work."""
FLOOR_SCRIPT = BENCH_DIR / "floor.py"


def _log(message: str, *, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def _listed(stdout: str) -> tuple[int, int]:
    """(skills listed, error problems) from `skillpack list --json` output."""
    data = json.loads(stdout)
    problems = data.get("problems", [])
    errors = sum(1 for p in problems if p.get("severity") == "error")
    return len(data["skills"]), errors


def measure_corpus(
    corpus: Corpus,
    *,
    work: Path,
    repeat: int,
    skillpack: list[str],
    quiet: bool,
) -> dict[str, Any]:
    """Time floor, cold and warm over one corpus; return stats, ratios and sanity counts."""
    label = corpus.dir.name
    env = isolated_env(work / "env")
    cwd = work / "cwd"  # empty: the repo scope (cwd up to a .git) finds nothing
    cwd.mkdir(exist_ok=True)
    roots = [str(r) for r in corpus.roots]
    floor_argv = [sys.executable, str(FLOOR_SCRIPT), *roots]
    list_argv = [
        *skillpack,
        "list",
        *[arg for root in roots for arg in ("--root", root)],
        "--no-user",
        "--no-system",
        "--json",
    ]
    startup_argv = [*skillpack, "list", "--no-user", "--no-system", "--json"]
    startup_env = {**env, "SKILLPACK_CACHE_DIR": str(work / "cache-startup")}
    warm_cache = work / f"cache-warm-{label}"
    shutil.rmtree(warm_cache, ignore_errors=True)
    warm_env = {**env, "SKILLPACK_CACHE_DIR": str(warm_cache)}

    # Untimed first runs: fill the OS page cache, build the warm index, and keep the
    # outputs for the sanity check.
    _log(f"[{label}] warm-up and sanity runs", quiet=quiet)
    floor_counts = json.loads(
        run_timed(floor_argv, env=env, cwd=cwd, stdout=subprocess.PIPE).stdout
    )
    first = run_timed(list_argv, env=warm_env, cwd=cwd, stdout=subprocess.PIPE)
    again = run_timed(list_argv, env=warm_env, cwd=cwd, stdout=subprocess.PIPE)
    run_timed(startup_argv, env=startup_env, cwd=cwd, stdout=subprocess.PIPE)
    listed_cold, errors_cold = _listed(first.stdout)
    listed_warm, errors_warm = _listed(again.stdout)

    floor_runs: list[RunResult] = []
    cold_runs: list[RunResult] = []
    warm_runs: list[RunResult] = []
    startup_runs: list[RunResult] = []
    for i in range(repeat):
        _log(f"[{label}] repetition {i + 1}/{repeat}", quiet=quiet)
        floor_runs.append(run_timed(floor_argv, env=env, cwd=cwd))
        cold_cache = work / f"cache-cold-{label}-{i}"
        shutil.rmtree(cold_cache, ignore_errors=True)
        cold_cache.mkdir()
        cold_env = {**env, "SKILLPACK_CACHE_DIR": str(cold_cache)}
        cold_runs.append(run_timed(list_argv, env=cold_env, cwd=cwd))
        shutil.rmtree(cold_cache)
        warm_runs.append(run_timed(list_argv, env=warm_env, cwd=cwd))
        startup_runs.append(run_timed(startup_argv, env=startup_env, cwd=cwd))

    floor, cold, warm = Timing.of(floor_runs), Timing.of(cold_runs), Timing.of(warm_runs)
    startup = Timing.of(startup_runs)
    broken = corpus.summary.get("broken_total")
    expected = floor_counts["found"] - broken if isinstance(broken, int) else floor_counts["valid"]
    cold_ratio = cold.wall.median / floor.wall.median
    warm_ratio = warm.wall.median / floor.wall.median
    n_skills = corpus.summary.get("n_skills", floor_counts["found"])
    return {
        "corpus": str(corpus.dir),
        "n_skills": n_skills,
        "roots": len(roots),
        "floor": floor,
        "cold": cold,
        "warm": warm,
        "startup": startup,
        "ratios": {
            "cold": round(cold_ratio, 3),
            "warm": round(warm_ratio, 3),
            "startup": round(startup.wall.median / floor.wall.median, 3),
        },
        "warm_less_startup_ms": round((warm.wall.median - startup.wall.median) * 1000, 3),
        "cpu_ratios": {
            "cold": round(cold.cpu.median / floor.cpu.median, 3),
            "warm": round(warm.cpu.median / floor.cpu.median, 3),
        },
        "targets": {
            "cold": target(n_skills, cold_ratio, COLD_MAX_RATIO),
            "warm": target(n_skills, warm_ratio, WARM_MAX_RATIO),
        },
        "sanity": {
            "floor_found": floor_counts["found"],
            "floor_parsed": floor_counts["parsed"],
            "floor_valid": floor_counts["valid"],
            "generator_broken": broken,
            "expected_listed": expected,
            "listed_cold": listed_cold,
            "listed_warm": listed_warm,
            "error_problems_cold": errors_cold,
            "error_problems_warm": errors_warm,
            "ok": listed_cold == listed_warm == expected,
        },
    }


def measure_import(*, work: Path, runs: int) -> dict[str, Any]:
    """Median cumulative `import skillpack` time over `runs` (after one untimed run)."""
    env = isolated_env(work / "env")
    cwd = work / "cwd"
    cwd.mkdir(exist_ok=True)
    import_time_us("skillpack", python=sys.executable, env=env, cwd=cwd)  # byte-compile
    samples = [
        import_time_us("skillpack", python=sys.executable, env=env, cwd=cwd) for _ in range(runs)
    ]
    stats = Stats.of([s / 1e6 for s in samples])
    return {
        "stats": stats,
        "samples_us": samples,
        "target_ms": IMPORT_MAX_MS,
        "pass": stats.median * 1000 <= IMPORT_MAX_MS,
    }


def target(n_skills: int, ratio: float, max_ratio: float) -> dict[str, Any]:
    """One ratio target of a corpus: whether it applies (`TARGET_MIN_SKILLS`) and
    whether the ratio meets it."""
    return {
        "max_ratio": max_ratio,
        "pass": ratio <= max_ratio,
        "applies": n_skills >= TARGET_MIN_SKILLS,
    }


def targets_pass(results: list[dict[str, Any]], imported: dict[str, Any]) -> bool:
    """Whether `--check` passes: the import target and every ratio target that applies."""
    return imported["pass"] and all(
        t["pass"] for res in results for t in res["targets"].values() if t["applies"]
    )


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def render_text(results: list[dict[str, Any]], imported: dict[str, Any]) -> str:
    """The human report: one table per corpus, the sanity line, the import line."""
    out: list[str] = []
    for res in results:
        san = res["sanity"]
        out.append(f"corpus: {res['n_skills']} skills in {res['roots']} root(s) at {res['corpus']}")
        rows = []
        for label, key in (
            ("floor (scandir + libyaml)", "floor"),
            ("skillpack list, cold", "cold"),
            ("skillpack list, warm", "warm"),
            ("start-up (list, no root)", "startup"),
        ):
            timing: Timing = res[key]
            if key == "floor":
                ratio, cpu_ratio, target, verdict = "1.00x", "1.00x", "", ""
            elif key == "startup":
                ratio = f"{res['ratios'][key]:.2f}x"
                cpu_ratio = f"{timing.cpu.median / res['floor'].cpu.median:.2f}x"
                target, verdict = "", ""
            else:
                limit = res["targets"][key]["max_ratio"]
                ratio = f"{res['ratios'][key]:.2f}x"
                cpu_ratio = f"{res['cpu_ratios'][key]:.2f}x"
                target = f"<= {limit:.2f}x"
                judged = res["targets"][key]
                verdict = _verdict(judged["pass"]) if judged["applies"] else "n/a"
            rows.append(
                (
                    label,
                    ms(timing.wall.median),
                    ms(timing.wall.min),
                    ratio,
                    target,
                    verdict,
                    ms(timing.cpu.median),
                    cpu_ratio,
                )
            )
        headers = ("measure", "median", "min", "vs floor", "target", "result", "cpu", "cpu vs")
        out.append(format_table(headers, rows))
        out.append(
            f"warm less start-up: {res['warm_less_startup_ms']:.1f} ms for the catalog itself"
            " (medians; start-up is paid by every run, whatever the catalog's size)"
        )
        if not all(t["applies"] for t in res["targets"].values()):
            out.append(
                f"targets: judged at {TARGET_MIN_SKILLS:,} skills and more (n/a here: start-up"
                f" is {res['ratios']['startup']:.2f}x the floor on its own)"
            )
        out.append(
            f"sanity: floor found {san['floor_found']} SKILL.md (parsed {san['floor_parsed']},"
            f" valid {san['floor_valid']}), generator broken"
            f" {'unknown' if san['generator_broken'] is None else san['generator_broken']},"
            f" expected {san['expected_listed']}; skillpack listed {san['listed_cold']} cold /"
            f" {san['listed_warm']} warm ({san['error_problems_cold']} error problems)"
            f" -> {'OK' if san['ok'] else 'MISMATCH'}"
        )
        out.append("")
    stats = imported["stats"]
    out.append(
        f"import skillpack: {stats.median * 1000:.1f} ms cumulative (median of"
        f" {len(stats.samples)}, min {stats.min * 1000:.1f} ms), target <= "
        f"{IMPORT_MAX_MS:.0f} ms -> {_verdict(imported['pass'])}"
    )
    return "\n".join(out)


_TIMED = ("floor", "cold", "warm", "startup")


def to_json(
    results: list[dict[str, Any]], imported: dict[str, Any], *, repeat: int
) -> dict[str, Any]:
    """Machine-readable results; times in milliseconds."""
    corpora = []
    for res in results:
        corpora.append(
            {
                **{k: v for k, v in res.items() if k not in _TIMED},
                **{f"{key}_ms": res[key].wall.to_dict() for key in _TIMED},
                **{f"{key}_cpu_ms": res[key].cpu.to_dict() for key in _TIMED},
            }
        )
    all_pass = targets_pass(results, imported)
    return {
        "machine": machine_info(),
        "repeat": repeat,
        "corpora": corpora,
        "import": {
            "median_ms": round(imported["stats"].median * 1000, 3),
            "samples_us": imported["samples_us"],
            "target_ms": imported["target_ms"],
            "pass": imported["pass"],
        },
        "all_targets_pass": all_pass,
        "sanity_ok": all(res["sanity"]["ok"] for res in results),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="corpus sizes (1000,10000)")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per measure (5)")
    parser.add_argument("--import-runs", type=int, default=9, help="import timings (9)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (0)")
    parser.add_argument("--corpus", type=Path, help="use this corpus instead of generating")
    parser.add_argument(
        "--work-dir", type=Path, help="keep corpora and caches here (default: a temp dir)"
    )
    parser.add_argument("--skillpack", help="command to run instead of the venv's skillpack")
    parser.add_argument("--json", action="store_true", help="print JSON results")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target fails")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    skillpack = shlex.split(args.skillpack) if args.skillpack else skillpack_command()

    try:
        with work_dir(args.work_dir) as work:
            if args.corpus is not None:
                corpora = [load_corpus(args.corpus)]
            else:
                corpora = []
                for n in sizes:
                    _log(f"generating corpus of {n} skills", quiet=args.quiet)
                    corpora.append(ensure_corpus(work / "corpora", n, seed=args.seed))
            results = [
                measure_corpus(
                    c, work=work, repeat=args.repeat, skillpack=skillpack, quiet=args.quiet
                )
                for c in corpora
            ]
            _log("timing import skillpack", quiet=args.quiet)
            imported = measure_import(work=work, runs=args.import_runs)
    except CommandFailed as exc:
        print(f"bench_catalog: {exc}", file=sys.stderr)
        return 2

    report = to_json(results, imported, repeat=args.repeat)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render_text(results, imported))
    if not report["sanity_ok"]:
        return 1
    return 1 if args.check and not report["all_targets_pass"] else 0


if __name__ == "__main__":
    sys.exit(main())
