"""A server process gives large freed buffers back (cli/_process.py), in a real child."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Eight worker threads each read six 22 MiB answers (the upstream bound), as `serve`'s
# pool does under an upstream flood; the child prints how many MiB stay resident after.
_CHILD = """
import sys, threading
from skillpack.cli._process import return_large_buffers_to_the_system

applied = return_large_buffers_to_the_system()

def rss_mib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024

def reader():
    for _ in range(6):
        answer = bytearray(22 << 20)
        answer[::4096] = b"x" * len(answer[::4096])  # touch every page
        kept = [bytes(100) for _ in range(200)]
        del answer

before = rss_mib()
workers = [threading.Thread(target=reader) for _ in range(8)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
print(applied, rss_mib() - before)
"""

glibc_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(os, "confstr"),
    reason="the mmap threshold is a glibc setting",
)


def _retained_mib(env: dict[str, str]) -> tuple[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    return out[0], int(out[1])


@glibc_only
def test_large_answers_read_on_worker_threads_do_not_stay_resident() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
    applied, retained = _retained_mib(env)
    assert applied == "True"
    # glibc's own rule keeps 60-90 MiB here: each freed block raises its threshold.
    assert retained < 16


@glibc_only
def test_a_threshold_the_user_set_stands() -> None:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "4194304"}
    applied, _ = _retained_mib(env)
    assert applied == "False"
