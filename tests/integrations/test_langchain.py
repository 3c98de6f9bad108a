"""LangChain: the task through `Skills.tools()` (in process) and through `skillpack mcp`
(LangChain's own MCP client, `langchain.mcp`), driven by a chat model that answers with
tool calls."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
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
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool

from skillpack.integrations.langchain import Skills


class ScriptedChatModel(BaseChatModel):
    """A chat model that plays `TaskScript`: what it is shown is the system message and
    the descriptions of the tools bound to it."""

    script: Any
    bound: Sequence[Any] = ()
    received: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.model_copy(update={"bound": list(tools)})

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        system = [m.content for m in messages if isinstance(m, SystemMessage)]
        tools = [t.description for t in self.bound if isinstance(t, BaseTool)]
        shown = "\n".join([str(c) for c in system] + tools)
        self.received.append(messages)
        results = [m.content for m in messages if isinstance(m, ToolMessage)]
        step = self.script.next(shown, results)
        if isinstance(step, str):
            message = AIMessage(content=step)
        else:
            name, args = step
            message = AIMessage(
                content="", tool_calls=[{"name": name, "args": args, "id": f"c{len(results)}"}]
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


def answer(result: dict[str, Any]) -> str:
    content = result["messages"][-1].content
    assert isinstance(content, str)
    return content


def test_the_task_runs_through_the_tools(tmp_path: Path) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    script = TaskScript()
    model = ScriptedChatModel(script=script)
    agent = create_agent(model, tools=skills.tools(), system_prompt=skills.system_prompt())
    result = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
    script.check(answer(result))
    assert "<available_skills>" in script.shown_before_load  # the budgeted catalog


def test_the_task_runs_async_through_the_tools(tmp_path: Path) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    script = TaskScript()
    agent = create_agent(
        ScriptedChatModel(script=script), tools=skills.tools(), system_prompt=skills.system_prompt()
    )
    result = anyio.run(lambda: agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]}))
    script.check(answer(result))


def test_the_task_runs_through_skillpack_mcp(tmp_path: Path) -> None:
    from fastmcp.client.transports import StdioTransport
    from langchain_core._api import LangChainBetaWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangChainBetaWarning)  # `langchain.mcp` is in beta
        from langchain.mcp import MCPAdapter

    root = write_skills(tmp_path)
    script = TaskScript()
    args = ["-m", "skillpack", "mcp", "--root", str(root), "--cwd", str(tmp_path)]

    async def run() -> dict[str, Any]:
        async with MCPAdapter(StdioTransport(sys.executable, args, env=dict(os.environ))) as mcp:
            agent = create_agent(ScriptedChatModel(script=script), tools=await mcp.list_tools())
            return await agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]})

    script.check(answer(anyio.run(run)))


def test_permission_prompts_and_fork_runners_work_through_the_tools(tmp_path: Path) -> None:
    host = Host()
    root = write_skills(project_asking_for_pdf_forms(tmp_path))
    skills = Skills(roots=[str(root)], cwd=str(tmp_path), ask=host.ask, runner=host)
    script = Calls(list(HOST_CALLS))
    agent = create_agent(ScriptedChatModel(script=script), tools=skills.tools())
    result = agent.invoke({"messages": [{"role": "user", "content": "Fill the form."}]})
    assert answer(result) == "done"
    check_host_calls(host, script.results)


def test_a_mention_reaches_the_model_through_prepare(tmp_path: Path) -> None:
    skills = Skills(roots=[str(write_skills(tmp_path))], cwd=str(tmp_path))
    model = ScriptedChatModel(script=Calls([]), received=[])
    agent = create_agent(model, tools=skills.tools(), system_prompt=skills.system_prompt())
    agent.invoke({"messages": [{"role": "user", "content": skills.prepare(MENTION)}]})
    user = str(model.received[0][-1].content)
    assert INJECTED in user and "Group by kind: for v2.0" in user


def test_the_docs_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from langchain_core._api import LangChainBetaWarning

    monkeypatch.chdir(tmp_path)
    script = TaskScript()
    namespace = {"model": ScriptedChatModel(script=script), "create_agent": create_agent}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangChainBetaWarning)  # `langchain.mcp` is in beta
        run_page("langchain.md", namespace)
    assert capfd.readouterr().out.splitlines() == [ANSWER, "release-notes", ANSWER]
    script.check(ANSWER)
