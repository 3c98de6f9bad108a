"""The release: one version, the license in the dists, the changelog, pre-commit as CI."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import skillpack

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_written_once_and_every_reader_agrees() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    source = ROOT / project["tool"]["hatch"]["version"]["path"]
    assert source == ROOT / "src" / "skillpack" / "_version.py"
    assert f'__version__ = "{skillpack.__version__}"' in source.read_text(encoding="utf-8")
    assert importlib.metadata.version("skillpack") == skillpack.__version__
    # The console script's entry point (`[project.scripts]`), as a process.
    entry = project["project"]["scripts"]["skillpack"]
    assert entry == "skillpack.cli:main"
    shown = subprocess.run(
        [sys.executable, "-c", "from skillpack.cli import main; main()", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert shown.stdout == f"skillpack, version {skillpack.__version__}\n"


def test_the_changelog_has_an_unreleased_section_and_the_current_version() -> None:
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert headings[0] == "[Unreleased]"
    assert any(h.startswith(f"[{skillpack.__version__}]") for h in headings[1:])


def test_the_license_is_the_apache_text_that_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def _ci_lines() -> set[str]:
    return {line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").split("\n")}


def test_each_pre_commit_hook_is_a_step_of_ci_and_each_lint_step_a_hook() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = {
        " ".join([hook["entry"], *hook.get("args", [])])
        for repo in config["repos"]
        for hook in repo["hooks"]
    }
    assert entries <= _ci_lines(), "a hook runs what .ci/run does not"
    lint_steps = {
        line
        for line in _ci_lines()
        if line.startswith(("python3 -m ruff", "python3 -m mypy", "lint-imports"))
    }
    assert lint_steps == entries, "a lint step of .ci/run has no pre-commit hook"


def test_make_check_runs_ci() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^check:\n\t\./\.ci/run$", makefile, re.M)


def _check_dist() -> Callable[[Path], list[str]]:
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / ".ci" / "check_dist.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    check: Callable[[Path], list[str]] = module.check
    return check


def _dists(tmp_path: Path, *, wheel_license: bytes | None, sdist_license: bool) -> Path:
    version = skillpack.__version__
    info = f"skillpack-{version}.dist-info"
    with zipfile.ZipFile(tmp_path / f"skillpack-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(
            f"{info}/METADATA",
            f"Name: skillpack\nVersion: {version}\nLicense-Expression: Apache-2.0\n\n",
        )
        if wheel_license is not None:
            wheel.writestr(f"{info}/licenses/LICENSE", wheel_license)
    with tarfile.open(tmp_path / f"skillpack-{version}.tar.gz", "w:gz") as sdist:
        if sdist_license:
            data = (ROOT / "LICENSE").read_bytes()
            member = tarfile.TarInfo(f"skillpack-{version}/LICENSE")
            member.size = len(data)
            sdist.addfile(member, io.BytesIO(data))
    return tmp_path


def test_the_dist_check_passes_dists_that_ship_the_license(tmp_path: Path) -> None:
    license_text = (ROOT / "LICENSE").read_bytes()
    assert _check_dist()(_dists(tmp_path, wheel_license=license_text, sdist_license=True)) == []


@pytest.mark.parametrize(
    ("wheel_license", "sdist_license", "failure"),
    [
        pytest.param(None, True, "licenses/LICENSE", id="wheel-without-license"),
        pytest.param(b"MIT", True, "differs", id="wheel-with-another-license"),
        pytest.param(b"", False, ".tar.gz: no skillpack-", id="sdist-without-license"),
    ],
)
def test_the_dist_check_names_a_missing_or_wrong_license(
    tmp_path: Path, wheel_license: bytes | None, sdist_license: bool, failure: str
) -> None:
    wheel_text = (ROOT / "LICENSE").read_bytes() if wheel_license == b"" else wheel_license
    problems = _check_dist()(
        _dists(tmp_path, wheel_license=wheel_text, sdist_license=sdist_license)
    )
    assert problems and all(isinstance(p, str) for p in problems)
    assert any(failure in p for p in problems), problems
