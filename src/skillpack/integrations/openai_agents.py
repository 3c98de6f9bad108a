"""Skills in an OpenAI Agents SDK agent (`pip install 'skillpack[openai-agents]'`)::

    from skillpack.integrations.openai_agents import Skills
    skills = Skills(roots=["./skills"])
    agent = Agent(name="dev", instructions=skills.instructions, tools=skills.tools())

`skills.instructions` is a callable the SDK calls each run: the budgeted catalog as it is
then. `tools()` are `FunctionTool`s with strict schemas (`"openai-responses"`) whose
calls run off the event loop and return the envelope as JSON. For `$name` mentions and
`/name` commands, run `Runner.run(agent, await skills.aprepare(message))`.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import UsageError
from ..runtime._tool_args import parse_args
from ..runtime._tools import failure
from ._extras import missing_extra
from ._skills import Skills as _Skills

try:
    from agents import Agent, FunctionTool, RunContextWrapper, Tool
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - the extra is installed in tests
    raise missing_extra("openai-agents", exc) from exc

__all__ = ["Skills"]


class Skills(_Skills):
    """skillpack's tools and catalog for the Agents SDK (see `integrations._skills.Skills`
    for the constructor: a session, or options to open one)."""

    async def instructions(
        self, context: RunContextWrapper[Any] | None = None, agent: Agent[Any] | None = None
    ) -> str:
        """The budgeted catalog, current: pass the method itself as `instructions=`."""
        return await self.acatalog()

    def tools(self) -> list[Tool]:
        """One `FunctionTool` per skill tool, for the catalog as it is now (the skill-id
        enums are the current skills; a call for a newer one still resolves). Typed as
        the SDK's `Tool`, the item type of `Agent(tools=...)`, so the list passes as is."""
        return [
            FunctionTool(
                name=d["name"],
                description=d["description"],
                params_json_schema=d["parameters"],
                on_invoke_tool=self._invoker(d["name"]),
                strict_json_schema=True,
            )
            for d in self.definitions("openai-responses")
        ]

    def _invoker(self, name: str) -> Any:
        async def invoke(context: ToolContext[Any], arguments: str) -> str:
            try:
                parsed = parse_args(name, arguments or "")
            except UsageError as exc:
                return json.dumps(failure(exc))
            return json.dumps(await self.acall(name, parsed))

        return invoke
