"""Install speed: 100 skills from a local site, verified, against plain httpx downloads.

    python bench/bench_install.py                  # 100 skills, 7 interleaved repetitions
    python bench/bench_install.py --skills 300 --repeat 5
    python bench/bench_install.py --json
    python bench/bench_install.py --check          # exit 1 when the target fails

A seeded site of N skills (half a lone SKILL.md, half with references and scripts,
so half are `.tar.gz` archives) is written with `skillpack publish` and served by a
keep-alive HTTP/1.1 static server on 127.0.0.1. Two whole processes are timed,
interleaved, after one untimed run of each:

- floor: `bench/install_floor.py` — httpx GETs the index and every artifact and
  writes each to a file (no verification);
- install: `skillpack install SITE --all --yes --json` into an empty user scope —
  artifact digests, unpacking, per-file and skill digests, strict validation, the
  audit, staging, the swap and the lock file.

Target: install ≤ 1.5× floor, median wall time.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    Timing,
    format_table,
    isolated_env,
    machine_info,
    ms,
    run_timed,
    skillpack_command,
    work_dir,
)

TARGET = 1.5

_WORDS = [
    "skill",
    "agent",
    "file",
    "review",
    "check",
    "build",
    "test",
    "deploy",
    "parse",
    "render",
    "search",
    "index",
    "cache",
    "folder",
    "script",
    "reference",
    "summary",
    "report",
    "table",
    "chart",
    "form",
    "data",
    "value",
    "field",
    "record",
    "step",
    "task",
    "rule",
    "note",
    "example",
    "output",
    "input",
    "source",
    "target",
    "update",
    "verify",
]

_SERVER = """
import functools, http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = 65536
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(
    ("127.0.0.1", 0), functools.partial(Handler, directory=sys.argv[1]))
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def _prose(rng: random.Random, words: int) -> str:
    lines, line = [], []
    for _ in range(words):
        line.append(rng.choice(_WORDS))
        if len(line) >= 12:
            lines.append(" ".join(line).capitalize() + ".")
            line = []
    return "\n".join(lines)


def write_sources(root: Path, count: int, seed: int) -> None:
    """`count` valid skills: even ones a lone SKILL.md, odd ones with 1-3 more files."""
    rng = random.Random(seed)
    for index in range(count):
        name = f"skill-{index:04d}"
        folder = root / name
        folder.mkdir(parents=True)
        description = f"{_prose(rng, 14).splitlines()[0]} Use when working on {name}."
        body = f"# {name}\n\n{_prose(rng, rng.randint(150, 900))}\n"
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8"
        )
        if index % 2:
            for ref in range(rng.randint(1, 2)):
                (folder / "references").mkdir(exist_ok=True)
                (folder / "references" / f"ref-{ref}.md").write_text(
                    _prose(rng, rng.randint(200, 1200)) + "\n", encoding="utf-8"
                )
            (folder / "scripts").mkdir()
            script = folder / "scripts" / "run.py"
            script.write_text("#!/usr/bin/env python3\nprint('run')\n", encoding="utf-8")
            script.chmod(0o755)


def measure(work: Path, count: int, repeat: int, seed: int) -> dict[str, Any]:
    from skillpack.install import publish

    sources, site = work / "sources", work / "site"
    for path in (sources, site):
        shutil.rmtree(path, ignore_errors=True)
    write_sources(sources, count, seed)
    report = publish(str(sources), str(site))
    artifacts = sum(
        (site / ".well-known" / "agent-skills" / s.url).stat().st_size for s in report.skills
    )
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(site)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}"
        return _compare(work, url, count, repeat, artifacts)
    finally:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()


def _compare(work: Path, url: str, count: int, repeat: int, artifacts: int) -> dict[str, Any]:
    floor_argv = [sys.executable, str(BENCH_DIR / "install_floor.py"), url]
    install_argv = [*skillpack_command(), "install", url, "--all", "--yes", "--json"]
    result = compare(work, floor_argv, install_argv, count, repeat)
    del result["floor_output"]
    return {"skills": count, "artifact_bytes": artifacts, **result}


def compare(
    work: Path, floor_argv: list[str], install_argv: list[str], count: int, repeat: int
) -> dict[str, Any]:
    """Time the floor (`floor_argv` + an output folder) against an install of `count`
    skills, interleaved, after one untimed sanity run of each."""
    floor_out = work / "floor-out"
    floor_argv = [*floor_argv, str(floor_out)]
    env = isolated_env(work / "env")
    home = Path(env["SKILLPACK_HOME"])

    def fresh() -> None:
        shutil.rmtree(floor_out, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(env["SKILLPACK_CACHE_DIR"], ignore_errors=True)

    fresh()
    check = run_timed(install_argv, env=env, cwd=work, stdout=subprocess.PIPE)
    outcome = json.loads(check.stdout)
    installed = len(outcome["installed"])
    if not outcome["ok"] or installed != count:
        raise SystemExit(f"sanity check failed: {installed} of {count} installed; {outcome}")
    fresh()
    floor_check = run_timed(floor_argv, env=env, cwd=work, stdout=subprocess.PIPE)
    floor_runs, install_runs = [], []
    for _ in range(repeat):
        fresh()
        floor_runs.append(run_timed(floor_argv, env=env, cwd=work))
        fresh()
        install_runs.append(run_timed(install_argv, env=env, cwd=work))
    floor, install = Timing.of(floor_runs), Timing.of(install_runs)
    ratio = install.wall.median / floor.wall.median
    return {
        "repeat": repeat,
        "floor": {"wall": floor.wall.to_dict(), "cpu": floor.cpu.to_dict()},
        "install": {"wall": install.wall.to_dict(), "cpu": install.cpu.to_dict()},
        "ratio": round(ratio, 3),
        "target": TARGET,
        "pass": ratio <= TARGET,
        "sanity": f"{installed} skills installed and recorded",
        "machine": machine_info(),
        "floor_output": floor_check.stdout.strip(),
    }


def print_result(result: dict[str, Any], floor_label: str, install_label: str) -> None:
    """The table of both medians (the caller prints its summary line)."""
    floor, install = result["floor"]["wall"], result["install"]["wall"]
    print(
        format_table(
            ["measure", "median", "min", "cpu median"],
            [
                [
                    floor_label,
                    ms(floor["median"] / 1000),
                    ms(floor["min"] / 1000),
                    ms(result["floor"]["cpu"]["median"] / 1000),
                ],
                [
                    install_label,
                    ms(install["median"] / 1000),
                    ms(install["min"] / 1000),
                    ms(result["install"]["cpu"]["median"] / 1000),
                ],
            ],
        )
    )


def bench_main(
    doc: str,
    measure: Callable[[Path, int, int, int], dict[str, Any]],
    *,
    seed: int,
    prefix: str,
    labels: tuple[str, str],
    what: Callable[[dict[str, Any]], str],
) -> int:
    """The command line both install benchmarks share; `what` says what was installed."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args()
    with work_dir(args.work_dir or Path(tempfile.mkdtemp(prefix=prefix))) as work:
        result = measure(work, args.skills, args.repeat, args.seed)
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_result(result, *labels)
        verdict = "PASS" if result["pass"] else "FAIL"
        print(
            f"\n{what(result)}: install / floor = {result['ratio']:.2f}x (target <= {TARGET}x) "
            f"{verdict}; {result['sanity']}"
        )
    return 1 if args.check and not result["pass"] else 0


def main() -> int:
    return bench_main(
        __doc__,
        measure,
        seed=16,
        prefix="spb-install-",
        labels=("floor (httpx downloads)", "skillpack install"),
        what=lambda r: f"{r['skills']} skills, {r['artifact_bytes']} artifact bytes",
    )


if __name__ == "__main__":
    raise SystemExit(main())
