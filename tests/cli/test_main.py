"""The console-script entry point as a real process: exit codes, output, no lost bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def test_the_cli_exits_without_interpreter_teardown() -> None:
    # A CLI run holds one object per skill; tearing them down would only cost time.
    # os._exit after flushing skips it: an atexit hook never runs.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import atexit; atexit.register(print, 'teardown ran'); " + ENTRY,
            "--version",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert "skillpack" in done.stdout
    assert "teardown ran" not in done.stdout


def test_the_library_leaves_the_garbage_collector_on(tmp_path: Path) -> None:
    # Only the short-lived CLI process may switch the collector off; a host that
    # keeps running (a server) must keep it.
    script = (
        "import gc, skillpack\n"
        f"s = skillpack.Session.open(cwd={str(tmp_path)!r}, include_user=False)\n"
        "skillpack.SkillTools(s).call('skill_search', {'query': 'write a skill'})\n"
        "print(gc.isenabled())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


# What a warm `list` has no use for: it replays the index, reads no SKILL.md, hashes
# nothing, writes no config and watches nothing.
COLD_ONLY = (
    "yaml",
    "hashlib",
    "skillpack.parse._frontmatter",
    "skillpack.parse._yaml",
    "skillpack.parse._validate",
    "skillpack.runtime._deps",
    "skillpack.runtime._live",
    "skillpack.config._atomic",
    "skillpack.config._lock",
    "skillpack.config._toml_writer",
)
# What a run that writes a kept document has no use for: it discovers nothing.
KEPT_SKIPS = ("skillpack.discovery._discover", "skillpack.discovery._parallel")


def report_modules(names: tuple[str, ...]) -> str:
    """A `skillpack` run that reports on stderr which of `names` it loaded."""
    return f"""
import json, os, sys
real_exit = os._exit
def report(code=0):
    sys.stdout.flush()
    loaded = sorted(m for m in {names!r} if m in sys.modules)
    sys.stderr.write("LOADED " + json.dumps(loaded) + "\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = report
from skillpack.cli import main
sys.argv = ["skillpack", *sys.argv[1:]]
main()
"""


def test_a_warm_list_loads_no_parser_hasher_or_writer(tmp_path: Path, write_skill: Any) -> None:
    root = tmp_path / "skills"
    write_skill("alpha", base=root)
    write_skill("beta", base=root)
    args = ["list", "--root", str(root), "--no-user", "--no-system", "--json"]

    def loaded(names: tuple[str, ...] = COLD_ONLY) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", report_modules(names), *args],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
        )
        assert len(json.loads(done.stdout)["skills"]) == 2
        line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED "))
        return list(json.loads(line.removeprefix("LOADED ")))

    assert "skillpack.parse._frontmatter" in loaded()  # cold: it parses
    assert loaded() == []
    assert loaded(KEPT_SKIPS) == []  # the third run writes the kept document
