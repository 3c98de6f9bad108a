"""What every framework adapter shares: one session, its tools, the budgeted catalog and
turn preparation, each with an `a*` twin that runs the sync core on a worker thread.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from .._errors import UsageError
from ..render._catalog import CatalogMode, check_mode
from ..runtime._fork import SubagentRunner
from ..runtime._session import Session, ensure_fresh
from ..runtime._tools import SkillTools, ToolFormat
from ..runtime._turns import Turn


class Skills:
    """Skills for an agent: a `Session`, its `SkillTools`, the catalog and `$name` turns.

    Thread-safe, as `Session` and `SkillTools` are. The framework modules
    (`skillpack.integrations.pydantic_ai`, `.openai_agents`, `.langchain`) build on it.
    """

    def __init__(
        self,
        session: Session | None = None,
        *,
        runner: SubagentRunner | None = None,
        context_window: int | None = None,
        budget_chars: int | None = None,
        catalog_mode: CatalogMode | None = None,
        create: bool = False,
        **open_options: Any,
    ) -> None:
        """Skills over `session`, or over `Session.open(**open_options)` when none is given.

        Args:
            session: The conversation's session; by default one is opened with
                `Session.open(**open_options)` (`cwd=`, `roots=`, `include=`, `ask=`,
                `refresh=`, ...) and closed by `close()`. `roots=["./skills"]` serves
                those skills alone; `include=("user", "system")` adds the personal
                and bundled ones; a root that does not exist raises `UsageError`.
            runner: Runs `context: fork` skills, for `use_skill` and for `$name` /
                `/name` in a message (`prepare`); without one they are refused.
            context_window: The model's context window in tokens: the catalog gets its
                share (`[catalog] budget_fraction`); else the configured budget.
            budget_chars: The catalog's budget in characters (wins over the window).
            catalog_mode: `auto`, `full` or `deferred` (`Session.render_catalog`);
                None is the config's `[catalog] mode`.
            create: Also offer `skill_create` (each write still asks the host).

        Raises:
            UsageError: both a session and options for opening one, or an unknown
                catalog mode.
        """
        if catalog_mode is not None:
            check_mode(catalog_mode)
        if session is not None and open_options:
            given = ", ".join(sorted(open_options))
            raise UsageError(
                f"Skills got a session and options to open one ({given}); pass the "
                "options to `Session.open` yourself, or drop the session."
            )
        self._owns_session = session is None
        self.session: Session = session if session is not None else Session.open(**open_options)
        self.runner = runner
        self.skill_tools = SkillTools(self.session, runner=runner, create=create)
        self.context_window = context_window
        self.budget_chars = budget_chars
        self.catalog_mode = catalog_mode

    # -- the catalog: what the model is told -------------------------------------------

    def catalog(self) -> str:
        """The session's budgeted catalog for the system prompt (`Session.catalog_prompt`),
        current: a live session re-discovers first when its mode says so."""
        ensure_fresh(self.session)
        return self.session.catalog_prompt(
            context_window=self.context_window,
            budget_chars=self.budget_chars,
            mode=self.catalog_mode,
        )

    async def acatalog(self) -> str:
        """`catalog()` on a worker thread."""
        return await asyncio.to_thread(self.catalog)

    # -- the tools ------------------------------------------------------------------------

    def definitions(self, fmt: ToolFormat) -> list[dict[str, Any]]:
        """The tool definitions in one provider's format, for the current catalog."""
        ensure_fresh(self.session)
        return self.skill_tools.definitions_for(fmt)

    async def adefinitions(self, fmt: ToolFormat) -> list[dict[str, Any]]:
        """`definitions(fmt)` on a worker thread."""
        return await asyncio.to_thread(self.definitions, fmt)

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Run one tool; always the envelope (`SkillTools.call`)."""
        return self.skill_tools.call(name, arguments)

    async def acall(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Run one tool off the event loop (`SkillTools.acall`)."""
        return await self.skill_tools.acall(name, arguments)

    # -- a user's message -----------------------------------------------------------------

    def prepare_turn(self, message: str) -> Turn:
        """`Session.prepare_turn` for a user's message, forks on this adapter's runner:
        `$name` mentions and `/name` commands activate skills (permission prompts go to
        the session's `ask`)."""
        return self.session.prepare_turn(message, runner=self.runner)

    async def aprepare_turn(self, message: str) -> Turn:
        """`prepare_turn(message)` on a worker thread (the host's `ask` runs there)."""
        return await asyncio.to_thread(self.prepare_turn, message)

    def prepare(self, message: str) -> str:
        """The user's message as the model should get it: `prepare_turn`, then the
        injected skills, forked results and the suggestions' note ahead of the task
        text (`turn_input`)."""
        return turn_input(self.prepare_turn(message), message)

    async def aprepare(self, message: str) -> str:
        """`prepare(message)` on a worker thread."""
        return await asyncio.to_thread(self.prepare, message)

    def close(self) -> None:
        """Close the session if these skills opened it (a watcher, MCP connections)."""
        if self._owns_session:
            self.session.close()


def turn_context(turn: Turn) -> str:
    """What a turn adds for the model: each injection (`<skill_content>` or a reminder),
    then each forked skill's result, then the note naming the skills that may fit
    (`Turn.suggestion_note`, hints only); empty when there is none of these."""
    parts = list(turn.injections)
    for run in turn.forks:
        result = run.result if isinstance(run.result, str) else json.dumps(run.result)
        parts.append(f"Skill '{run.skill.name}' ran in a subagent; its result:\n{result}")
    if turn.suggestion_note:
        parts.append(turn.suggestion_note)
    return "\n\n".join(parts)


def turn_input(turn: Turn, message: str) -> str:
    """One text for the model: `turn_context`, then the task text (the message when
    nothing is left of it)."""
    return "\n\n".join(part for part in (turn_context(turn), turn.text or message) if part)
