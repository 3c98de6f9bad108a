"""The README's Python example runs as written (on the bundled system skills)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "README has a Python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}  # later blocks build on earlier ones, as a reader would
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README is ours
    out = capsys.readouterr().out
    assert "<available_skills>" in out
    assert "Using skill: writing-skills" in out
    assert '<skill_content name="writing-skills"' in out
    result = namespace["result"]
    assert isinstance(result, dict) and result["ok"] is True
    assert result["data"]["results"][0]["name"] == "vetting-skills"
    assert [d["name"] for d in namespace["definitions"]] == [  # type: ignore[attr-defined]
        "skill_search",
        "skill_load",
        "use_skill",
        "skill_read_file",
    ]
    policy = namespace["policy"]  # the README's shell policy does what the README says
    assert policy.match("git diff --stat") == "git diff *"  # type: ignore[attr-defined]
    assert policy.refusal("git diff; rm -rf ~")[0] is None  # type: ignore[attr-defined]


def test_readme_first_screen_has_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line for line in first_block.group(1).splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].startswith("pip install . && skillpack list")
    assert "pytest" in commands[1]
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "pytest" in ci
