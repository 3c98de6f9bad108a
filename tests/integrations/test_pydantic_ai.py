"""pydantic-ai: the task through `SkillsToolset` (in process) and through `skillpack mcp`
(pydantic-ai's own MCP client), driven by a `FunctionModel`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from framework_task import (
    ANSWER,
    HOST_CALLS,
    INJECTED,
    MENTION,
    QUESTION,
    Calls,
    Host,
    TaskScript,
    check_host_calls,
    project_asking_for_pdf_forms,
    run_page,
    write_skills,
)
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillpack.integrations.pydantic_ai import Skills, SkillsCapability, SkillsToolset


def scripted(script: TaskScript | Calls, seen: list[str] | None = None) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        shown = "\n".join(
            [info.instructions or ""] + [t.description or "" for t in info.function_tools]
        )
        if seen is not None:
            seen.append(shown)
        results = [
            part.content
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        step = script.next(shown, results)
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        name, args = step
        return ModelResponse(parts=[ToolCallPart(name, args)])

    return FunctionModel(respond)


def test_the_task_runs_through_the_toolset(tmp_path: Path) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    script = TaskScript()
    agent = Agent(scripted(script), toolsets=[SkillsToolset(skills)])
    result = agent.run_sync(QUESTION)
    script.check(result.output)
    assert "<available_skills>" in script.shown_before_load  # the budgeted catalog


def test_the_task_runs_through_skillpack_mcp(tmp_path: Path) -> None:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    root = write_skills(tmp_path)
    args = ["-m", "skillpack", "mcp", "--root", str(root), "--cwd", str(tmp_path)]
    server = MCPToolset(StdioTransport(sys.executable, args, env=dict(os.environ)), init_timeout=60)
    script = TaskScript()
    agent = Agent(scripted(script), toolsets=[server])
    result = agent.run_sync(QUESTION)
    script.check(result.output)


def test_a_mention_in_the_prompt_reaches_the_model_once_per_run(tmp_path: Path) -> None:
    host = Host()
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path), runner=host)
    seen: list[str] = []
    agent = Agent(scripted(Calls([]), seen), capabilities=[SkillsCapability(skills)])
    assert agent.run_sync(MENTION).output == "done"
    assert INJECTED in seen[0] and "Group by kind: for v2.0" in seen[0]
    assert skills.session.leading[0].name == "release-notes"
    agent.run_sync("Write the changelog.")  # a new run prepares its own turn
    assert INJECTED not in seen[1] and "<available_skills>" in seen[1]
    agent.run_sync("$triage issue 7")  # a forked skill's result joins the instructions
    assert "Skill 'triage' ran in a subagent; its result:\ntriaged: needs-repro" in seen[2]
    assert [name for name, _ in host.forked] == ["triage"]


def test_permission_prompts_and_fork_runners_work_through_the_toolset(tmp_path: Path) -> None:
    host = Host()
    root = write_skills(project_asking_for_pdf_forms(tmp_path))
    toolset = SkillsToolset(roots=[str(root)], cwd=str(tmp_path), ask=host.ask, runner=host)
    script = Calls(list(HOST_CALLS))
    assert Agent(scripted(script), toolsets=[toolset]).run_sync("Fill the form.").output == "done"
    check_host_calls(host, script.results)


def test_the_docs_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    script = TaskScript()
    run_page("pydantic-ai.md", {"model": scripted(script)})
    assert capfd.readouterr().out.splitlines() == [ANSWER, "release-notes", ANSWER]
    script.check(ANSWER)
