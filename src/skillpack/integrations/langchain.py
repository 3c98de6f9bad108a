"""Skills in a LangChain agent (`pip install 'skillpack[langchain]'`)::

    from skillpack.integrations.langchain import Skills
    skills = Skills(roots=["./skills"])
    agent = create_agent(model, tools=skills.tools(), system_prompt=skills.system_prompt())

`system_prompt()` is the budgeted catalog; `tools()` are `StructuredTool`s whose async
calls run off the event loop and return the envelope as JSON. For `$name` mentions and
`/name` commands, send `skills.prepare(message)` (or `await skills.aprepare(message)`)
as the user's message.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ._extras import missing_extra
from ._skills import Skills as _Skills

try:
    from langchain_core.tools import BaseTool, StructuredTool
except ImportError as exc:  # pragma: no cover - the extra is installed in tests
    raise missing_extra("langchain", exc) from exc

__all__ = ["Skills"]


class Skills(_Skills):
    """skillpack's tools and catalog for LangChain (see `integrations._skills.Skills` for
    the constructor: a session, or options to open one)."""

    def system_prompt(self) -> str:
        """The budgeted catalog, for `create_agent(system_prompt=...)`."""
        return self.catalog()

    def tools(self) -> list[BaseTool]:
        """One `StructuredTool` per skill tool, for the catalog as it is now (the
        skill-id enums are the current skills; a call for a newer one still resolves)."""
        return [
            StructuredTool(
                name=d["name"],
                description=d["description"],
                args_schema=d["input_schema"],
                func=self._sync(d["name"]),
                coroutine=self._async(d["name"]),
            )
            for d in self.definitions("anthropic")
        ]

    def _sync(self, name: str) -> Callable[..., str]:
        def run(**arguments: Any) -> str:
            return json.dumps(self.call(name, arguments))

        return run

    def _async(self, name: str) -> Callable[..., Awaitable[str]]:
        async def arun(**arguments: Any) -> str:
            return json.dumps(await self.acall(name, arguments))

        return arun
