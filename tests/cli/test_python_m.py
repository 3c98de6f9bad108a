"""`python -m skillpack` is the command line, for configs that name an interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import skillpack


def test_python_m_skillpack_runs_the_command_line(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "skillpack"]
    version = subprocess.run([*run, "--version"], capture_output=True, text=True, check=True)
    assert skillpack.__version__ in version.stdout
    listed = subprocess.run(
        [*run, "list", "--json", "--no-user"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert isinstance(json.loads(listed.stdout), dict | list)
    usage = subprocess.run([*run, "no-such-command"], capture_output=True, text=True)
    assert usage.returncode == 2 and "Usage: skillpack" in usage.stderr
