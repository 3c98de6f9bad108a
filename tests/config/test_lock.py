"""The cross-process file lock behind every read-modify-write of a shared file."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from skillpack._errors import SkillIOError
from skillpack.config._lock import file_lock

BUMP = """
import sys, time
from pathlib import Path
from skillpack.config._lock import file_lock
path = Path(sys.argv[1])
with file_lock(path):
    n = int(path.read_text()) if path.exists() else 0
    time.sleep(0.01)
    path.write_text(str(n + 1))
"""


def test_sixteen_processes_incrementing_one_file_lose_no_update(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    procs = [subprocess.Popen([sys.executable, "-c", BUMP, str(counter)]) for _ in range(16)]
    assert [p.wait(timeout=60) for p in procs] == [0] * 16
    assert counter.read_text() == "16"


def test_threads_of_one_process_take_turns(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    counter.write_text("0")

    def bump() -> None:
        for _ in range(20):
            with file_lock(counter):
                counter.write_text(str(int(counter.read_text()) + 1))

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.read_text() == "160"


def test_a_lock_held_too_long_is_an_error_that_names_the_file(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom skillpack.config._lock import file_lock\n"
            "with file_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(5)\n",
            str(target),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(SkillIOError, match="config.toml"), file_lock(target, timeout=0.2):
            pass
    finally:
        holder.kill()
        holder.communicate()
