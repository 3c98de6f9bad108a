"""Concurrent config writes are never lost; a hostile project
config (a FIFO, an endless device) never hangs the reader."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hostile_inputs import run_isolated

from skillpack.config._files import user_config_path

WRITERS = 16


def test_sixteen_processes_disabling_at_once_keep_all_sixteen_entries() -> None:
    script = (
        "import sys\n"
        "from skillpack.config._files import set_skill_enabled\n"
        "set_skill_enabled(f'skill-{sys.argv[1]}', False)\n"
    )
    # Started together, each process reads, edits and rewrites the same file.
    processes = [
        subprocess.Popen([sys.executable, "-c", script, str(i)], env=dict(os.environ))
        for i in range(WRITERS)
    ]
    assert [p.wait(timeout=60) for p in processes] == [0] * WRITERS
    config = tomllib.loads(user_config_path().read_text(encoding="utf-8"))
    assert sorted(config["skills"]["disabled"]) == sorted(f"skill-{i}" for i in range(WRITERS))


def test_cli_disable_from_many_processes_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    names = [f"s{i}" for i in range(8)]
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: d\n---\nbody\n", encoding="utf-8"
        )
    command = [sys.executable, "-c", "from skillpack.cli import main; main()", "disable",
               "--root", str(root), "--no-system", "--no-cache"]  # fmt: skip
    processes = [subprocess.Popen([*command, name], env=dict(os.environ)) for name in names]
    assert [p.wait(timeout=60) for p in processes] == [0] * len(names)
    config = tomllib.loads(user_config_path().read_text(encoding="utf-8"))
    assert sorted(config["skills"]["disabled"]) == names


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_project_config_that_is_a_fifo_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".skillpack").mkdir(parents=True)
    os.mkfifo(project / ".skillpack" / "config.toml")
    done = run_isolated(
        f"""
        from skillpack.config._files import load_config
        config, problems = load_config(cwd={str(project)!r})
        print(" ".join(p.code for p in problems))
        """,
        timeout=20,
    )
    assert done.returncode == 0, "hung on the FIFO" if done.returncode is None else done.stderr
    assert done.stdout.strip() == "config-unreadable"


def test_project_config_over_the_size_limit_is_a_problem(tmp_path: Path) -> None:
    from skillpack.config._files import load_config

    project = tmp_path / "repo"
    (project / ".skillpack").mkdir(parents=True)
    (project / ".skillpack" / "config.toml").write_text(
        "# " + "x" * 2_000_000 + "\n", encoding="utf-8"
    )
    _config, problems = load_config(cwd=str(project))
    assert [p.code for p in problems] == ["config-unreadable"]
