"""Skills in a pydantic-ai agent (`pip install 'skillpack[pydantic-ai]'`)::

    from skillpack.integrations.pydantic_ai import SkillsToolset
    agent = Agent(model, toolsets=[SkillsToolset(roots=["./skills"])])

The toolset gives the model the budgeted catalog as instructions, the skill tools with
definitions made afresh each step (a live catalog shows), and runs every call off the
event loop. `$name` mentions and `/name` commands in the run's prompt are prepared once
per run (`Session.prepare_turn`): the injected skills join the instructions.
`SkillsCapability` is the same as a capability (`Agent(model, capabilities=[...])`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._extras import missing_extra
from ._skills import Skills, turn_context

try:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as exc:  # pragma: no cover - the extra is installed in tests
    raise missing_extra("pydantic-ai", exc) from exc

__all__ = ["Skills", "SkillsCapability", "SkillsToolset"]

# `SkillTools.call` checks the arguments against each tool's schema itself and answers
# with an `INVALID_PARAM` envelope the model can act on.
_ANY_ARGS = SchemaValidator(schema=core_schema.dict_schema())


class SkillsToolset(AbstractToolset[Any]):
    """skillpack's tools and catalog as a pydantic-ai toolset."""

    def __init__(
        self, skills: Skills | None = None, *, id: str = "skillpack", **options: Any
    ) -> None:
        """Args:
        skills: The skills to offer; by default `Skills(**options)` (which opens a
            session the way the CLI does: `roots=`, `ask=`, `runner=`, ...).
        id: The toolset's id among the agent's toolsets.
        """
        self.skills = skills if skills is not None else Skills(**options)
        self._id = id
        self._turns: dict[str | None, str] = {}

    @property
    def id(self) -> str | None:
        return self._id

    async def for_run(self, ctx: RunContext[Any]) -> SkillsToolset:
        # Each run prepares its own turn; the skills (one conversation) are shared.
        return SkillsToolset(self.skills, id=self._id)

    async def get_instructions(self, ctx: RunContext[Any]) -> str | Sequence[str] | None:
        catalog = await self.skills.acatalog()
        turn = await self._turn(ctx)
        return [catalog, turn] if turn else catalog

    async def _turn(self, ctx: RunContext[Any]) -> str:
        """What the run's prompt brings (`$name`, `/name`: injected skills, forked
        results), prepared on the run's first request."""
        if ctx.run_id not in self._turns:
            turn = await self.skills.aprepare_turn(_prompt_text(ctx.prompt))
            self._turns = {ctx.run_id: turn_context(turn)}
        return self._turns[ctx.run_id]

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            d["name"]: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=d["name"],
                    description=d["description"],
                    parameters_json_schema=d["input_schema"],
                ),
                max_retries=1,
                args_validator=_ANY_ARGS,
            )
            for d in await self.skills.adefinitions("anthropic")
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        return await self.skills.acall(name, tool_args)


class SkillsCapability(AbstractCapability[Any]):
    """`SkillsToolset` as a pydantic-ai capability."""

    def __init__(self, skills: Skills | None = None, **options: Any) -> None:
        self.toolset = SkillsToolset(skills, **options)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a live session: not spec-serializable

    def get_toolset(self) -> SkillsToolset:
        return self.toolset


def _prompt_text(prompt: str | Sequence[Any] | None) -> str:
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(part for part in prompt if isinstance(part, str))
