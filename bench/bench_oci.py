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

Target: install ≤ 1.5× floor, median wall time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, skillpack_command
from bench_install import bench_main, compare, write_sources

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
    floor_argv = [sys.executable, str(BENCH_DIR / "oci_floor.py"), host, REPO, TAG]
    install_argv = [*skillpack_command(), "install", f"oci://{host}/{REPO}:{TAG}"]
    result = compare(work, floor_argv, [*install_argv, "--all", "--yes", "--json"], count, repeat)
    downloads = int(result.pop("floor_output"))
    return {"skills": count, "artifacts": pushed, "floor_downloads": downloads, **result}


def main() -> int:
    return bench_main(
        __doc__,
        measure,
        seed=24,
        prefix="spb-oci-",
        labels=("floor (httpx blob downloads)", "skillpack install oci://"),
        what=lambda r: (
            f"{r['skills']} skills ({r['floor_downloads']} documents and blobs for the floor)"
        ),
    )


if __name__ == "__main__":
    raise SystemExit(main())
