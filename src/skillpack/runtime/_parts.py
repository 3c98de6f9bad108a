"""What one session is made of, and what several of its behaviours ask of it.

`Session` (the API, `_session.py`) composes these parts and hands them to the
modules that hold its behaviours: `_turns` (a message into skills used) and
`_status` (`inspect`). The parts share the session's lock, which is re-entrant, so
a step that spans two of them (`end_turn`) holds it over both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._model import Catalog, Skill
from ._fork import InvocationChain, SubagentRunner, run_fork
from ._index_search import TurnSearch
from ._inject import Injections
from ._permissions import PermissionGate
from ._refresh import LiveCatalog

if TYPE_CHECKING:
    from ..select._resolve import DiagnosticKind


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionParts:
    """The state of one session: its catalog, gate, injections and forks in flight."""

    lock: threading.RLock
    """Guards every part's state (re-entrant)."""
    live: LiveCatalog
    """The catalog and config, swapped whole when they change."""
    gate: PermissionGate
    injections: Injections
    """Rendering, and the record of what was handed to the model."""
    chain: InvocationChain
    """The forked runs under way."""
    cwd: str | None
    """Base directory for relative paths in `[$name](path)` links."""
    search: TurnSearch
    """The search a turn's suggestions come from (`_suggest.turn_suggestions`)."""
    enabled: dict[str, bool] = field(default_factory=dict)
    """This session's own enable overrides, by skill key (the config is not written)."""

    def is_enabled(self, skill: Skill) -> bool:
        with self.lock:
            override = self.enabled.get(skill.key)
        if override is not None:
            return override
        return self.live.config.is_enabled(skill)

    def is_visible(self, skill: Skill) -> bool:
        return self.gate.visible(skill)

    def sets_none_apart(self) -> bool:
        """Whether `is_enabled` and `is_visible` hold for every skill: no session
        override, a config that disables nothing, and no permission rule."""
        with self.lock:
            if self.enabled:
                return False
        live = self.live
        return live.config.enables_all and not self.gate.rules.has_rules and not live.opened_any

    def model_skills(self, catalog: Catalog | None = None) -> tuple[Skill, ...]:
        """Skills the model may see: enabled, permitted, model-invocable, not shadowed,
        and, for a skill with `paths:` globs, opened by a noted path (`note_paths`)."""
        catalog = catalog or self.live.catalog
        opened = self.live.paths_open
        if self.sets_none_apart():
            return tuple(
                s
                for s in catalog.skills
                if s.model_invocable and s.shadowed_by is None and (not s.paths or opened(s))
            )
        return tuple(
            s
            for s in catalog.skills
            if s.model_invocable
            and s.shadowed_by is None
            and (not s.paths or opened(s))
            and self.is_enabled(s)
            and self.is_visible(s)
        )

    def end_turn(self) -> None:
        """No skill leads, no fork is under way: a new user turn starts."""
        with self.lock:
            self.injections.clear_leading()
            self.chain.clear()

    def run_fork(
        self,
        skill: Skill,
        args: str,
        runner: SubagentRunner,
        *,
        session_id: str,
        failure: Callable[[DiagnosticKind, str], Exception] | None = None,
    ) -> Any:
        """`_fork.run_fork` with this session's gate, chain and body rendering."""

        def render_body(skill: Skill, args: str) -> str:
            return self.injections.body(skill, args=args, session_id=session_id)

        return run_fork(
            skill,
            args,
            runner,
            gate=self.gate,
            chain=self.chain,
            render_body=render_body,
            failure=failure,
        )
