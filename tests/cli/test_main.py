"""The console-script entry point as a real process: exit codes, output, no lost bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ENTRY = "from skillpack.cli import main; main()"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "code"),
    [
        pytest.param(("list", "--no-user", "--json"), 0, id="ok"),
        pytest.param(("list", "--bogus"), 2, id="usage-error"),
        pytest.param(("show", "nope", "--no-user"), 1, id="not-found"),
        pytest.param(("--version",), 0, id="version"),
    ],
)
def test_exit_codes(args: tuple[str, ...], code: int) -> None:
    assert run(*args).returncode == code


def test_large_json_output_is_complete(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for i in range(300):
        folder = root / f"skill-{i:03d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:03d}\ndescription: {'word ' * 150}\n---\nBody\n",
            encoding="utf-8",
        )
    done = run("list", "--root", str(root), "--no-user", "--no-system", "--json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["skills"]) == 300


def test_errors_go_to_stderr() -> None:
    done = run("show", "nope", "--no-user")
    assert done.stdout == ""
    assert done.stderr.startswith("skillpack: No skill named 'nope'.")
