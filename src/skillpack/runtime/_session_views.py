"""Two views a `Session` hands out, so that the class itself stays the short list of
what a host calls every turn: `session.skills` (each skill's standing in this
session: enabled, visible, offered to the model; writing a new one) and
`session.declared` (what the leading skills declare: tools, dependencies, hooks,
Codex permissions).

Each view holds its session and works on the session's parts; neither keeps state
of its own, so a view taken once stays current.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from .._errors import SkillDisabledError, SkillIOError

if TYPE_CHECKING:
    from .._model import Catalog, CodexPermissions, Skill
    from ..select._grants import SkillGrant
    from ._create import CreatedSkill
    from ._deps import DependencyReport, DependencyResolver
    from ._hooks import Hook, HookResult, HookState
    from ._live import CatalogChange
    from ._parts import SessionParts
    from ._readers import SkillReader
    from ._shell import ShellPolicy

ToolT = TypeVar("ToolT")


class ViewedSession(Protocol):
    """What the views read of their `Session` (which imports this module, so the views
    name the parts they use rather than the class)."""

    session_id: str
    _parts: SessionParts
    _grant: SkillGrant | None
    _deps: DependencyResolver
    _hooks: HookState | None
    _shell: ShellPolicy | None

    @property
    def reader(self) -> SkillReader: ...

    @property
    def leading(self) -> tuple[Skill, ...]: ...

    def refresh(self, catalog: Catalog | None = None) -> CatalogChange | None: ...


class SessionSkills:
    """Each skill's standing in one session (`Session.skills`): its grant, enable
    state, visibility, what the model is offered. Thread-safe."""

    def __init__(self, _session: ViewedSession) -> None:
        self._session = _session

    @property
    def grant(self) -> SkillGrant | None:
        """The skills this session's caller may see (`Session(grant=)`); None: every
        skill. Every other skill is absent from the session."""
        return self._session._grant

    @property
    def whole_catalog(self) -> Catalog:
        """The catalog before the session's grant hides anything (`catalog` without a
        grant). Only for what is keyed on the whole catalog and filters by
        `is_visible` itself (the shared search index); never for a listing."""
        return self._session._parts.live.given

    def is_enabled(self, skill: Skill) -> bool:
        """Whether `skill` is on: the session's own override, else the config's."""
        return self._session._parts.is_enabled(skill)

    def set_enabled(self, skill: Skill, enabled: bool) -> None:
        """Enable or disable a skill for this session only (config is not written)."""
        parts = self._session._parts
        with parts.lock:
            parts.enabled[skill.key] = enabled

    def is_visible(self, skill: Skill) -> bool:
        """False when a permission rule denies the skill: it is then absent everywhere."""
        return self._session._parts.is_visible(skill)

    def model_skills(self, catalog: Catalog | None = None) -> tuple[Skill, ...]:
        """Skills the model may see: enabled, permitted, model-invocable, not shadowed."""
        return self._session._parts.model_skills(catalog)

    def sets_none_apart(self) -> bool:
        """Whether every skill is enabled and visible: no session override, nothing
        disabled in the config, no permission rule (a view of thousands of skills then
        asks no skill one by one)."""
        return self._session._parts.sets_none_apart()

    @property
    def skills_enabled(self) -> bool:
        """False when the config turns every skill off (`[skills] enabled = false`)."""
        return self._session._parts.live.config.skills_enabled

    def require_skills_enabled(self) -> None:
        """Raise `SkillDisabledError` saying how to turn skills on, when they are off."""
        config = self._session._parts.live.config
        if not config.skills_enabled:
            from ._turns import skills_off_message

            raise SkillDisabledError(skills_off_message(config))

    def forget(self, skill: Skill) -> None:
        """Drop the record that `skill` was injected, so the next load sends it whole."""
        self._session._parts.injections.forget(skill)

    def create_skill(
        self,
        *,
        name: str,
        description: str,
        body: str,
        scope: Literal["user", "project"] = "user",
        frontmatter: Mapping[str, Any] | None = None,
        digest: str | None = None,
        by_model: bool = True,
    ) -> CreatedSkill:
        """Write a new skill (or replace one whose digest matches), then re-discover so
        it is in the catalog at once. See `runtime._create` for every check; the
        permission action `create` asks the host unless a rule names the skill."""
        from ._create import create_skill

        parts = self._session._parts
        created = create_skill(
            name=name,
            description=description,
            body=body,
            scope=scope,
            frontmatter=frontmatter,
            digest=digest,
            cwd=parts.cwd,
            catalog=parts.live.catalog,
            gate=parts.gate,
            by_model=by_model,
        )
        if parts.live.source is not None:
            self._session.refresh()  # subscribers hear of it like of any other change
        in_catalog = parts.live.catalog.at_path(created.path) is not None
        return dataclasses.replace(created, in_catalog=in_catalog)

    def digest(self, skill: Skill) -> str | None:
        """`sha256:<hex>` of the skill's SKILL.md as it is now (for replacing it with
        `create_skill`), or None when the reader cannot tell."""
        read_source = getattr(self._session.reader, "read_source", None)
        if read_source is None:
            return None
        from .._model import sha256_digest

        try:
            return sha256_digest(read_source(skill))
        except (OSError, SkillIOError):
            return None


class SkillDeclarations:
    """What the skills declare, as this session answers it (`Session.declared`): the
    tools and Codex permissions of the leading skills, their hooks, and each skill's
    dependencies. Thread-safe."""

    def __init__(self, _session: ViewedSession) -> None:
        self._session = _session

    def active_tools(
        self, all_tools: Sequence[ToolT], *, tool_name: Callable[[ToolT], str] | None = None
    ) -> list[ToolT]:
        """The tools a host should offer while the current skills lead.

        `allowed-tools` of every leading skill that declares it narrows the set (the
        intersection); `disallowed-tools` removes tools. Entries such as
        `Bash(git add:*)` allow the tool `Bash`; with no declarations, all tools stay.
        """
        from ..render._tools_filter import filter_tools

        return filter_tools(all_tools, self._session.leading, tool_name=tool_name)

    def requested_permissions(self) -> dict[str, CodexPermissions]:
        """The Codex `permissions` profiles of the leading skills, by qualified name:
        what they ask the host for while they lead (as `active_tools` offers their
        `allowed-tools`). skillpack never applies them; the host decides."""
        return {
            skill.qualified_name: skill.codex.permissions
            for skill in self._session.leading
            if skill.codex is not None and skill.codex.permissions is not None
        }

    def dependencies(self, skill: Skill) -> DependencyReport:
        """Every dependency `skill` declares and its state now (asks nobody)."""
        return self._session._deps.report(skill)

    def resolve_dependencies(self, skill: Skill) -> DependencyReport:
        """`dependencies`, after asking the host for missing ones (`env_prompt`,
        `mcp_install`); a load does this itself."""
        return self._session._deps.resolve(skill)

    def dependency_env(self, skill: Skill) -> dict[str, str]:
        """Values of `skill`'s declared variables known to the session (typed-in ones,
        then the environment), for the host to give the tools it runs. Secrets:
        never log them."""
        return self._session._deps.values(skill)

    def hooks_for(
        self, event: str, tool_name: str | None = None, *, consume: bool = True
    ) -> tuple[Hook, ...]:
        """The hooks of the leading skills that apply to `event` (and `tool_name`).

        A `once: true` hook is returned once per session: returning it spends it,
        unless `consume=False` (a look that runs nothing).
        """
        from ._hooks import HookState

        session = self._session
        with session._parts.lock:
            if session._hooks is None:
                session._hooks = HookState()
            state = session._hooks
        return state.applicable(session.leading, event, tool_name, consume=consume)

    def run_hooks(
        self,
        event: str,
        tool_name: str | None = None,
        *,
        payload: Mapping[str, Any] | None = None,
    ) -> tuple[HookResult, ...]:
        """Run the `command` hooks `hooks_for` returns, under the shell policy.

        Each gets Claude Code's JSON on stdin (`session_id`, `hook_event_name`,
        `tool_name`, `cwd` and `payload`'s keys, e.g. `tool_input`). Without a shell
        policy nothing runs and each result says so. Never raises for a hook.
        """
        from ._hooks import run_hooks

        session = self._session
        hooks = self.hooks_for(event, tool_name)
        data: dict[str, Any] = {
            "session_id": session.session_id,
            "tool_name": tool_name,
            "cwd": session._parts.cwd or os.getcwd(),
            **(payload or {}),
        }
        return run_hooks(hooks, policy=session._shell, gate=session._parts.gate, payload=data)
