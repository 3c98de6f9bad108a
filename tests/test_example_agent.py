"""The example agent runs end to end offline with the scripted model."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_loop"] = module
    spec.loader.exec_module(module)
    return module


def test_scripted_agent_sees_catalog_searches_loads_reads_and_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = load_example()
    monkeypatch.chdir(tmp_path)
    from skillpack import Session

    session = Session.open(cwd=str(tmp_path))
    model = agent.ScriptedModel("write a new skill so the agent drafts our release notes")
    transcript = agent.run_agent(session, model, "help me write a skill for release notes")
    assert model.saw_catalog
    calls = [(name, result["ok"]) for name, _, result in transcript.tool_calls]
    assert calls == [
        ("skill_search", True),
        ("skill_load", True),
        ("skill_read_file", True),
    ]
    search = transcript.tool_calls[0][2]["data"]["results"]
    assert search[0]["name"] == "writing-skills"
    read = transcript.tool_calls[2]
    assert read[1]["path"] == "references/checklist.md"
    assert "Following skill 'writing-skills'" in transcript.answer
    assert "# Skill review checklist" in transcript.answer


def test_example_cli_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = load_example()
    monkeypatch.chdir(tmp_path)
    assert agent.main(["write a new skill so the agent drafts our release notes"]) == 0
    out = capsys.readouterr().out
    assert "→ skill_search" in out and "→ skill_read_file" in out


def test_missing_provider_sdk_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = load_example()
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(SystemExit, match=r"pip install 'skillpack\[anthropic\]'"):
        agent.AnthropicModel("any")
