"""The OpenAI Agents SDK: the task through `Skills.tools()` (in process) and through
`skillpack mcp` (the SDK's own MCP client), driven by a scripted `Model`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agents import Agent, FunctionTool, Model, ModelResponse, RunConfig, Runner
from agents.mcp import MCPServerStdio, MCPServerStdioParams
from agents.usage import Usage
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
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from skillpack.integrations.openai_agents import Skills

NO_TRACING = RunConfig(tracing_disabled=True)


class ScriptedModel(Model):
    """An Agents SDK model that plays `TaskScript`: what it is shown is the system
    instructions and the tools' descriptions."""

    def __init__(self, script: TaskScript | Calls) -> None:
        self.script = script
        self.calls = 0
        self.inputs: list[Any] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        shown = "\n".join(
            [system_instructions or ""]
            + [t.description for t in tools if isinstance(t, FunctionTool)]
        )
        self.inputs.append(input)
        outputs = [
            i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        step = self.script.next(shown, [output["output"] for output in outputs])
        self.calls += 1
        if isinstance(step, str):
            text = ResponseOutputText(type="output_text", text=step, annotations=[])
            item: Any = ResponseOutputMessage(
                id=f"m{self.calls}",
                role="assistant",
                status="completed",
                type="message",
                content=[text],
            )
        else:
            name, arguments = step
            item = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"c{self.calls}",
                name=name,
                arguments=json.dumps(arguments),
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run without streaming")


def test_the_task_runs_through_the_function_tools(tmp_path: Path) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    script = TaskScript()
    agent = Agent(
        name="dev",
        model=ScriptedModel(script),
        instructions=skills.instructions,
        tools=skills.tools(),
    )
    result = anyio.run(lambda: Runner.run(agent, QUESTION, run_config=NO_TRACING))
    script.check(result.final_output)
    assert "<available_skills>" in script.shown_before_load  # the budgeted catalog


def test_the_task_runs_through_skillpack_mcp(tmp_path: Path) -> None:
    root = write_skills(tmp_path)
    script = TaskScript()

    async def run() -> Any:
        params: MCPServerStdioParams = {
            "command": sys.executable,
            "args": ["-m", "skillpack", "mcp", "--root", str(root), "--cwd", str(tmp_path)],
            "env": dict(os.environ),
        }
        async with MCPServerStdio(params, client_session_timeout_seconds=60) as server:
            agent = Agent(name="dev", model=ScriptedModel(script), mcp_servers=[server])
            return await Runner.run(agent, QUESTION, run_config=NO_TRACING)

    result = anyio.run(run)
    script.check(result.final_output)


def test_permission_prompts_and_fork_runners_work_through_the_tools(tmp_path: Path) -> None:
    host = Host()
    root = write_skills(project_asking_for_pdf_forms(tmp_path))
    skills = Skills(roots=[str(root)], cwd=str(tmp_path), ask=host.ask, runner=host)
    script = Calls(list(HOST_CALLS))
    agent = Agent(name="dev", model=ScriptedModel(script), tools=skills.tools())
    result = anyio.run(lambda: Runner.run(agent, "Fill the form.", run_config=NO_TRACING))
    assert result.final_output == "done"
    check_host_calls(host, script.results)


def test_a_mention_reaches_the_model_through_prepare(tmp_path: Path) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    model = ScriptedModel(Calls([]))
    agent = Agent(name="dev", model=model, instructions=skills.instructions, tools=skills.tools())

    async def run() -> Any:
        return await Runner.run(agent, await skills.aprepare(MENTION), run_config=NO_TRACING)

    anyio.run(run)
    first = json.dumps(model.inputs[0])
    assert INJECTED.replace('"', '\\"') in first and "Group by kind: for v2.0" in first


def test_the_docs_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # the page's runs stay offline
    script = TaskScript()
    run_page("openai-agents.md", {"model": ScriptedModel(script), "Agent": Agent})
    assert capfd.readouterr().out.splitlines() == [ANSWER, "release-notes", ANSWER]
    script.check(ANSWER)
