"""The `skills` npm CLI (1.7+) lists and installs what `skillpack publish` writes, and the two
tools share a project's skills-lock.json.

Runs only when `SKILLPACK_SKILLS_CLI` names the CLI's executable and Node >= 22 is on PATH
(`.ci/run` installs both through `.ci/node_tools`): for example

    PATH=/path/to/node22/bin:$PATH SKILLPACK_SKILLS_CLI=/path/to/node_modules/.bin/skills \\
        python -m pytest tests/install/test_skills_cli_interop.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from install_support import serve, tree_files, write_skill

from skillpack.install import approve_all, doctor, publish, update


def _cli() -> str | None:
    cli = os.environ.get("SKILLPACK_SKILLS_CLI")
    node = shutil.which("node")
    if not cli or not os.path.isfile(cli) or node is None:
        return None
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    return cli if int(version.lstrip("v").split(".")[0] or 0) >= 22 else None


pytestmark = pytest.mark.skipif(
    _cli() is None, reason="set SKILLPACK_SKILLS_CLI to the skills CLI and put Node >= 22 on PATH"
)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def skills(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the npm CLI with a temp HOME that has `.claude` (so `-y` never sprays ~50 agents)."""
    cli = _cli()
    assert cli is not None
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
    }
    result = subprocess.run(
        [cli, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, _ANSI.sub("", result.stdout), result.stderr
    )


def test_the_skills_cli_lists_and_installs_a_published_site_and_shares_the_lock(
    tmp_path: Path,
) -> None:
    src, site = tmp_path / "src", tmp_path / "site"
    write_skill(src, "hello-md", description="Say hello. Use when greeting someone.")
    write_skill(
        src,
        "toolbox",
        description="Run the toolbox. Use when you need it.",
        files={"references/REF.md": "# Ref\n", "scripts/run.sh": "#!/bin/sh\necho\n"},
    )
    publish(str(src), str(site))
    home, project = tmp_path / "npm-home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (project / ".git").mkdir(parents=True)
    with serve(site) as server:
        listing = skills("add", server.url, "--list", home=home, cwd=project)
        assert listing.returncode == 0, listing.stdout + listing.stderr
        assert "Found 2 skills" in listing.stdout
        assert "hello-md" in listing.stdout and "toolbox" in listing.stdout
        added = skills("add", server.url, "-y", "-a", "universal", home=home, cwd=project)
        assert added.returncode == 0, added.stdout + added.stderr
        installed = project / ".agents" / "skills"
        for name in ("hello-md", "toolbox"):
            assert tree_files(installed / name) == tree_files(src / name)
        lock = json.loads((project / "skills-lock.json").read_text())
        assert sorted(lock["skills"]) == ["hello-md", "toolbox"]

        # skillpack reads the lock the npm CLI wrote: clean, and nothing to update.
        assert doctor(scope="project", cwd=str(project)).clean
        assert update(scope="project", cwd=str(project), approve=approve_all).plan.unchanged == (
            "hello-md",
            "toolbox",
        )

        # skillpack updates one skill; the npm CLI still lists both and keeps skillpack's data.
        (src / "toolbox" / "references" / "REF.md").write_text("# Ref v2\n")
        publish(str(src), str(site))
        outcome = update(scope="project", cwd=str(project), approve=approve_all)
        assert [i.candidate.name for i in outcome.written] == ["toolbox"]
        listed = skills("list", home=home, cwd=project)
        assert "hello-md" in listed.stdout and "toolbox" in listed.stdout
        checked = skills("update", "-p", "-y", home=home, cwd=project)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    lock = json.loads((project / "skills-lock.json").read_text())
    assert "skillpack" in lock["skills"]["toolbox"]
    assert doctor(scope="project", cwd=str(project)).clean
