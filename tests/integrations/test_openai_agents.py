"""The OpenAI Agents SDK: the task through `Skills.tools()` (in process) and through
`skillpack mcp` (the SDK's own MCP client), driven by a scripted `Model`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from agents import Agent, FunctionTool, Model, ModelResponse, RunConfig, Runner
from agents.mcp import MCPServerStdio, MCPServerStdioParams
from agents.tool_context import ToolContext
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

    def __init__(
        self, script: TaskScript | Calls, encode: Callable[[dict[str, Any]], str] = json.dumps
    ) -> None:
        """`encode`: the arguments' JSON text as the model sends it."""
        self.script = script
        self.encode = encode
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
                arguments=self.encode(arguments),
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


def deep_search(depth: int) -> str:
    """`skill_search` arguments whose `limit` is nested `depth` arrays deep."""
    return '{"query": "pdf", "limit": ' + "[" * depth + "3" + "]" * depth + "}"


def refused_for_depth(envelope: dict[str, Any]) -> bool:
    message = envelope["error"]["message"] if not envelope["ok"] else ""
    return envelope["error"]["code"] == "INVALID_PARAM" and message.startswith(
        "`limit` of skill_search nests arrays or objects more than 32 levels deep"
    )


def test_a_deeply_nested_argument_gets_the_invalid_param_envelope_in_a_run(
    tmp_path: Path,
) -> None:
    """Through `Runner.run`: as deep as the SDK itself goes (0.24.0 normalizes every
    call's arguments recursively before any tool runs, and stops near 450 levels)."""
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    script = Calls([("skill_search", {})])
    model = ScriptedModel(script, lambda arguments: deep_search(300))
    agent = Agent(name="dev", model=model, tools=skills.tools())
    result = anyio.run(lambda: Runner.run(agent, "Find a skill.", run_config=NO_TRACING))

    assert result.final_output == "done"
    [refused] = script.results
    assert refused_for_depth(refused)


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_the_function_tool_answers_any_depth_with_the_envelope(tmp_path: Path, depth: int) -> None:
    """A model's `limit` nested 1,000 arrays deep (about 2 KB) once raised
    `RecursionError` out of the tool; the tool answers it like any bad value."""
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    [search] = [t for t in skills.tools() if t.name == "skill_search"]
    assert isinstance(search, FunctionTool)
    text = deep_search(depth)
    context = ToolContext(
        context=None, tool_name="skill_search", tool_call_id="c1", tool_arguments=text
    )

    answer = anyio.run(search.on_invoke_tool, context, text)

    assert refused_for_depth(json.loads(answer))


def test_the_docs_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # the page's runs stay offline
    script = TaskScript()
    run_page("openai-agents.md", {"model": ScriptedModel(script), "Agent": Agent})
    assert capfd.readouterr().out.splitlines() == [ANSWER, "release-notes", ANSWER]
    script.check(ANSWER)
