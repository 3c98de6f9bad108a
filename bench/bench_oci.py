"""OCI install speed: 100 skills from a local registry, verified, against plain blob downloads.

    python bench/bench_oci.py                  # 100 skills, 7 interleaved repetitions
    python bench/bench_oci.py --skills 300 --repeat 5
    python bench/bench_oci.py --json
    python bench/bench_oci.py --check          # exit 1 when the target fails

The seeded skills of `bench_install.py` are pushed with `skillpack publish --oci`
(one agentskills artifact per skill plus the collection index over them) to the CNCF
distribution server (`docker-registry`, Debian package) on 127.0.0.1. Two whole
processes are timed, interleaved, after one untimed run of each:

- floor: `bench/oci_floor.py` — httpx GETs the collection index, every manifest and
  every layer blob it names, and writes each to a file (no verification);
- install: `skillpack install oci://HOST/REPO:TAG --all --yes --json` into an empty
  user scope — digests of every manifest and blob, format recognition, unpacking,
  strict validation, the audit, staging, the swap and the lock file.

Target (issue 24): install ≤ 1.5× floor, median wall time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
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
from bench_install import write_sources

TARGET = 1.5
REPO = "bench/skills"
TAG = "1"


def _registry(work: Path) -> tuple[subprocess.Popen[bytes], str]:
    import socket
    import time
    import urllib.request

    binary = shutil.which("docker-registry")
    if binary is None:
        raise SystemExit("docker-registry is not installed (apt-get install docker-registry)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config = {
        "version": 0.1,
        "log": {"level": "error", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(work / "registry")}},
        "http": {"addr": f"127.0.0.1:{port}", "secret": "bench"},
    }
    (work / "registry.yml").write_text(json.dumps(config), encoding="utf-8")
    process = subprocess.Popen(
        [binary, "serve", str(work / "registry.yml")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    host = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen(f"http://{host}/v2/", timeout=1).close()
            return process, host
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise SystemExit("docker-registry did not start") from None
            time.sleep(0.05)


def measure(work: Path, count: int, repeat: int, seed: int) -> dict[str, Any]:
    from skillpack.install._oci_publish import publish_oci

    sources = work / "sources"
    shutil.rmtree(sources, ignore_errors=True)
    write_sources(sources, count, seed)
    process, host = _registry(work)
    try:
        report = publish_oci(str(sources), f"{host}/{REPO}", tags=[TAG])
        layers = len(report.artifacts) - 1
        return _compare(work, host, count, repeat, layers)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _compare(work: Path, host: str, count: int, repeat: int, pushed: int) -> dict[str, Any]:
    floor_out = work / "floor-out"
    floor_argv = [sys.executable, str(BENCH_DIR / "oci_floor.py"), host, REPO, TAG, str(floor_out)]
    install_argv = [
        *skillpack_command(),
        "install",
        f"oci://{host}/{REPO}:{TAG}",
        "--all",
        "--yes",
        "--json",
    ]
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
    downloaded = int(floor_check.stdout.strip())
    floor_runs, install_runs = [], []
    for _ in range(repeat):
        fresh()
        floor_runs.append(run_timed(floor_argv, env=env, cwd=work))
        fresh()
        install_runs.append(run_timed(install_argv, env=env, cwd=work))
    floor, install = Timing.of(floor_runs), Timing.of(install_runs)
    ratio = install.wall.median / floor.wall.median
    return {
        "skills": count,
        "artifacts": pushed,
        "floor_downloads": downloaded,
        "repeat": repeat,
        "floor": {"wall": floor.wall.to_dict(), "cpu": floor.cpu.to_dict()},
        "install": {"wall": install.wall.to_dict(), "cpu": install.cpu.to_dict()},
        "ratio": round(ratio, 3),
        "target": TARGET,
        "pass": ratio <= TARGET,
        "sanity": f"{installed} skills installed and recorded",
        "machine": machine_info(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args()
    with work_dir(args.work_dir or Path(tempfile.mkdtemp(prefix="spb-oci-"))) as work:
        result = measure(work, args.skills, args.repeat, args.seed)
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        floor, install = result["floor"]["wall"], result["install"]["wall"]
        print(
            format_table(
                ["measure", "median", "min", "cpu median"],
                [
                    [
                        "floor (httpx blob downloads)",
                        ms(floor["median"] / 1000),
                        ms(floor["min"] / 1000),
                        ms(result["floor"]["cpu"]["median"] / 1000),
                    ],
                    [
                        "skillpack install oci://",
                        ms(install["median"] / 1000),
                        ms(install["min"] / 1000),
                        ms(result["install"]["cpu"]["median"] / 1000),
                    ],
                ],
            )
        )
        verdict = "PASS" if result["pass"] else "FAIL"
        print(
            f"\n{result['skills']} skills ({result['floor_downloads']} documents and blobs "
            f"for the floor): install / floor = {result['ratio']:.2f}x (target <= {TARGET}x) "
            f"{verdict}; {result['sanity']}"
        )
    return 1 if args.check and not result["pass"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
