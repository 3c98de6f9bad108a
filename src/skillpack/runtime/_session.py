"""Per-conversation state over a catalog: enable state, permissions, loaded versions.

A `Session` is what a host embeds. It turns a user message into activations and
injections (`prepare_turn`), renders the catalog prompt within budget
(`catalog_prompt`), loads skills for the model's tool calls (`load`), and says which
tools a leading skill allows (`active_tools`). Every method is safe to call from
several threads: state changes happen under one lock, and each call works on one
snapshot of the catalog, so a concurrent `refresh` is seen whole or not at all.

A session can keep its catalog live (`refresh=`, see `_live.py`): `"manual"` changes
it only on `refresh()`, `"auto"` (the default when it can re-discover)
re-discovers before a tool call or a turn when a `stat` of the catalog's files and
folders shows a change, `"on_call"` re-discovers before a tool call or a
turn at most every `refresh_interval` seconds, and `"watch"` runs a `watchfiles`
thread (`discovery._watch`) that re-discovers after file events, scanning only the
roots they touch (`discovery.discover_roots`). Each new catalog is swapped in whole,
and subscribers get a `CatalogChange`.

The class is the API; each behaviour lives in its own module and works on the
session's parts: the live catalog (`_refresh.LiveCatalog`), turns (`_turns`),
injections and the record of what was handed out (`_inject.Injections`), forked
runs and the invocation chain (`_fork`), dependencies (`_deps`) and hooks (`_hooks`).
"""

from __future__ import annotations

import functools
import os
import threading
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._model import Catalog, Root, Skill
from ..config._schema import Config
from ..render._budget import budget_from_env, catalog_budget
from ..render._formats import CatalogFormat
from ._deps import DependencyResolver, EnvPrompt, McpInstall
from ._fork import ForkRun, InvocationChain, SubagentRunner
from ._index_search import TurnSearch
from ._inject import Injection as Injection
from ._inject import Injections
from ._live import ON_CALL_INTERVAL, CatalogChange, CatalogSource, LoaderSource, RefreshMode
from ._parts import SessionParts
from ._permissions import AskCallback, PermissionGate, persist_permission
from ._readers import FileSystemReader as FileSystemReader
from ._readers import SkillContent as SkillContent
from ._readers import SkillReader as SkillReader
from ._refresh import LiveCatalog
from ._session_views import SessionSkills, SkillDeclarations
from ._suggest import turn_suggestions

if TYPE_CHECKING:
    from ..discovery._options import DiscoveryOptions, IncludeScope
    from ..index._suggest import Suggestion
    from ..render._catalog import CatalogMode, RenderedCatalog
    from ..select._grants import SkillGrant
    from ..select._resolve import Resolution
    from ._hooks import HookState
    from ._shell import ShellPolicy
    from ._turns import Invoker, Turn
    from ._workspace import Workspace

ToolT = TypeVar("ToolT")


class Session:
    """One conversation's view of a catalog. Thread-safe."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        config: Config | None = None,
        reader: SkillReader | None = None,
        session_id: str | None = None,
        ask: AskCallback | None = None,
        remember_permissions: bool = False,
        loader: Callable[[], Catalog] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        refresh: RefreshMode | None = None,
        refresh_interval: float = ON_CALL_INTERVAL,
        source: CatalogSource | None = None,
        shell: ShellPolicy | None = None,
        env_prompt: EnvPrompt | None = None,
        mcp_servers: Iterable[str] = (),
        mcp_install: McpInstall | None = None,
        builtin_commands: Iterable[str] = (),
        grant: SkillGrant | None = None,
    ) -> None:
        """Create a session.

        Args:
            catalog: The skills this session works with.
            config: Enable state, budgets, permissions and `multi_mention`.
            reader: Where bodies and files are read (default: the filesystem).
            session_id: Substituted for `${SESSION_ID}`; a random id by default.
            ask: Host callback for permission rules that say `ask`.
            remember_permissions: Persist "always"/"never" answers to the user config.
            loader: Re-discovers the catalog for `refresh()`.
            cwd: Base directory for relative paths in `[$name](path)` links.
            env: Environment to read `SKILLS_PROMPT_CHAR_BUDGET` (else Claude Code's
                `SLASH_COMMAND_TOOL_CHAR_BUDGET`) and skills' declared variables
                from (default os.environ).
            refresh: How the catalog stays current: `"manual"` (only on
                `refresh()`), `"auto"` (before each tool call and turn, at most every
                `refresh_interval` seconds, a `stat` of every SKILL.md and of the
                folders above them; re-discover only when one changed), `"on_call"`
                (re-discover before each tool call and turn, at most every
                `refresh_interval` seconds) or `"watch"` (a
                `watchfiles` thread re-discovers the roots file events touch; needs
                `pip install 'skillpack[watch]'`; stop it with `close()`). Default:
                `"auto"` when the session can re-discover (`Session.open`, `loader=`,
                `source=`), else `"manual"`.
            refresh_interval: Seconds between two `"on_call"` re-discoveries at most.
            source: Re-discovers the catalog, and the config with it, and tells the
                watcher what to watch (`Session.open` passes one); overrides `loader`.
            shell: Runs the commands skills embed (`` !`cmd` ``) and their hooks; None
                (the default) runs nothing. See `ShellPolicy`.
            env_prompt: Asks the user for a declared variable that is missing; the
                answer is a secret kept in this session's memory only.
            mcp_servers: Names of the MCP servers the host has (for `mcp` dependencies);
                the config's `[[mcp_servers]]` count too.
            mcp_install: Installs a missing MCP server after the host's approval.
            builtin_commands: The host's own slash commands (`help`, `clear`, ...):
                `/name` of one of them is left to the host, and a skill of that name
                is reached as `$name` (a diagnostic says so). None by default.
            grant: The skills the caller may see (a server's caller, from its access
                token's claims: `select._grants.grant_for`). Every other skill is
                absent from this session: its catalog, every listing, search and
                tool, answered as a skill that does not exist. None: every skill.

        Raises:
            UsageError: an unknown `refresh` mode, a live mode without a `loader`
                or `source`, or `"watch"` without `watchfiles` installed.
        """
        config = config if config is not None else Config()
        self._reader: SkillReader = reader if reader is not None else FileSystemReader()
        self.session_id = session_id or uuid.uuid4().hex
        if source is None and loader is not None:
            source = LoaderSource(loader=loader)
        if refresh is None:
            refresh = "auto" if source is not None else "manual"
        self._env = env
        self._builtin_commands: frozenset[str] = frozenset(
            command.lower().lstrip("/") for command in builtin_commands
        )
        lock = threading.RLock()
        remember = persist_permission if remember_permissions else None
        self._grant = grant
        gate = PermissionGate(config.permissions, ask=ask, remember=remember, grant=grant)
        live = LiveCatalog(
            catalog,
            config,
            source=source,
            mode=refresh,
            interval=refresh_interval,
            lock=lock,
            gate=gate,
            grant=grant,
            cwd=cwd,
        )
        self._shell = shell
        self._host_servers = tuple(mcp_servers)
        self._deps = DependencyResolver(
            environment=lambda: self._env if self._env is not None else os.environ,
            prompt=env_prompt,
            host_servers=mcp_servers,
            config_servers=lambda: [server["name"] for server in live.config.mcp_servers],
            install=mcp_install,
        )
        injections = Injections(
            lock=lock, gate=gate, reader=self._reader, deps=self._deps, shell=shell
        )
        self._parts = SessionParts(
            lock=lock,
            live=live,
            gate=gate,
            injections=injections,
            chain=InvocationChain(lock),
            cwd=cwd,
            search=TurnSearch(self._reader),
        )
        self._hooks: HookState | None = None
        self._skills = SessionSkills(self)
        self._declared = SkillDeclarations(self)
        if refresh == "watch":
            live.start_watching()

    def conversation(self, **kwargs: Any) -> Session:
        """A new conversation over this session's live workspace: the same catalog,
        config, reader, cwd, environment, shell policy, host MCP servers and host
        built-in commands and grant, with its own state (loads, enable overrides,
        invocation chain). Its catalog is manual: the host moves it on with
        `refresh(catalog)` when this session's catalog changes.

        This is how every server opens a conversation (`serve`'s `session.open`, each
        `skillpack mcp` client); keywords override `Session(...)`'s arguments.
        """
        options: dict[str, Any] = {
            "config": self.config,
            "reader": self._reader,
            "cwd": self.cwd,
            "env": self._env,
            "shell": self._shell,
            "mcp_servers": self._host_servers,
            "builtin_commands": self._builtin_commands,
            "grant": self._grant,
        }
        options.update(kwargs)
        return Session(self._parts.live.given, **options)

    # -- construction -----------------------------------------------------------

    @classmethod
    def open(
        cls,
        *,
        cwd: str | None = None,
        roots: Sequence[Root | str | os.PathLike[str]] | None = None,
        extra_roots: Sequence[str | os.PathLike[str]] = (),
        include: Sequence[IncludeScope] | None = None,
        include_user: bool = True,
        include_system: bool = True,
        use_cache: bool = True,
        max_depth: int | None = None,
        max_dirs: int | None = None,
        load_helper: bool | None = None,
        options: DiscoveryOptions | None = None,
        extra_roots_from: Callable[[], Sequence[str]] | None = None,
        reader: SkillReader | None = None,
        session_id: str | None = None,
        ask: AskCallback | None = None,
        remember_permissions: bool = False,
        env: dict[str, str] | None = None,
        refresh: RefreshMode | None = None,
        refresh_interval: float = ON_CALL_INTERVAL,
        shell: ShellPolicy | None = None,
        env_prompt: EnvPrompt | None = None,
        mcp_servers: Iterable[str] = (),
        mcp_install: McpInstall | None = None,
        builtin_commands: Iterable[str] = (),
        grant: SkillGrant | None = None,
    ) -> Session:
        """Discover skills the way the CLI does (config + every scope) and open a session.

        Refreshes re-read the config files too, and a watcher (`refresh="watch"`)
        also notices a new skill root in the repo chain or the home folder.

        Args:
            cwd: The project folder: repo skills, the project config, relative links.
            roots: Serve exactly these folders (or `Root` values), in precedence
                order: no repo, user, admin or bundled skill, and no root of the
                config, unless `include` names its scope. Each must be a folder.
            extra_roots: Folders of scope `extra` added to what is served, ranked
                before the config's `roots` (what `Session.open(roots=)` meant up
                to 0.1.0, and what the CLI's `--root` means). Each must be a folder.
            include: The default scopes searched (`"repo"`, `"user"`, `"admin"`,
                `"system"`): with `roots`, none unless named here
                (`include=("user", "system")` adds the personal and bundled
                skills); without, all of them. The user config is read only with
                `"user"`.
            include_user: False leaves out the user scope (and the user config).
            include_system: False leaves out the skills bundled with skillpack.
            use_cache: Read and write the index file.
            max_depth: Folder levels walked below every root (default: the config's
                `[discovery] max_depth`).
            max_dirs: Folders walked per root at most (default: the config's).
            load_helper: Load many new files on a second core (see
                `DiscoveryOptions.load_helper`).
            options: All of discovery as one value (`DiscoveryOptions`): a keyword
                left at its default defers to it, one given fills a field it leaves
                at its default, and one that differs from a field it sets raises
                `UsageError`. Roots in it are not checked: a missing one is a
                `root-missing` problem, discovered once it exists.
            extra_roots_from: Asked at each discovery for more `extra` roots,
                after `extra_roots`: folders that move while the session lives (a
                server's OCI collection, one folder per digest). A live session
                notices a new answer as it notices a new root, and swaps its
                catalog whole.
            reader: Where bodies and files are read (default: the workspace's reader,
                which also reads `[[mcp_servers]]` skills).
            session_id: As `Session(session_id=)`.
            ask: As `Session(ask=)`: the host's answer to an `ask` permission rule.
            remember_permissions: As `Session(remember_permissions=)`.
            env: As `Session(env=)`.
            refresh: As `Session(refresh=)`; default `"auto"`.
            refresh_interval: As `Session(refresh_interval=)`.
            shell: As `Session(shell=)`.
            env_prompt: As `Session(env_prompt=)`.
            mcp_servers: As `Session(mcp_servers=)`.
            mcp_install: As `Session(mcp_install=)`.
            builtin_commands: As `Session(builtin_commands=)`.
            grant: As `Session(grant=)`: the skills the caller may see.

        Raises:
            UsageError: a folder in `roots` or `extra_roots` that does not exist
                (the message names it and how to fix it), an unknown scope in
                `include`, or a keyword that disagrees with `options`.
        """
        from ..discovery._options import chosen_options
        from ._workspace import WorkspaceSource

        chosen = chosen_options(
            "Session.open",
            options,
            roots=roots,
            extra_roots=extra_roots,
            include=include,
            include_user=include_user,
            include_system=include_system,
            use_cache=use_cache,
            max_depth=max_depth,
            max_dirs=max_dirs,
            load_helper=load_helper,
        )
        source = WorkspaceSource(
            options=chosen,
            cwd=os.path.abspath(cwd or os.getcwd()),
            extra_roots_from=extra_roots_from,
        )
        ws = source.open()
        return cls(
            ws.catalog,
            config=ws.config,
            source=source,
            cwd=ws.cwd,
            reader=reader if reader is not None else source.reader(),
            session_id=session_id,
            ask=ask,
            remember_permissions=remember_permissions,
            env=env,
            refresh=refresh,
            refresh_interval=refresh_interval,
            shell=shell,
            env_prompt=env_prompt,
            mcp_servers=mcp_servers,
            mcp_install=mcp_install,
            builtin_commands=builtin_commands,
            grant=grant,
        )

    # -- catalog and state ------------------------------------------------------

    @property
    def skills(self) -> SessionSkills:
        """Each skill's standing in this session: `is_enabled`, `set_enabled`,
        `is_visible`, `model_skills`, `skills_enabled`, `forget`, `create_skill`,
        `digest`."""
        return self._skills

    @property
    def declared(self) -> SkillDeclarations:
        """What the skills declare, as this session answers it: `active_tools`,
        `requested_permissions`, `dependencies`, `resolve_dependencies`,
        `dependency_env`, `hooks_for`, `run_hooks`."""
        return self._declared

    @property
    def catalog(self) -> Catalog:
        return self._parts.live.catalog

    @property
    def config(self) -> Config:
        return self._parts.live.config

    @property
    def permissions(self) -> PermissionGate:
        return self._parts.gate

    @property
    def reader(self) -> SkillReader:
        return self._reader

    @property
    def cwd(self) -> str | None:
        """The folder relative `[$name](path)` links start from (None: the process's)."""
        return self._parts.cwd

    # -- a live catalog (`_refresh.LiveCatalog`) -----------------------------------

    def refresh(self, catalog: Catalog | None = None) -> CatalogChange | None:
        """Re-discover now (or swap in `catalog`, the config kept), put the new catalog
        in place and tell subscribers what changed.

        Warm, a re-discovery costs a `stat` per folder and per SKILL.md of every root
        (the index replays unchanged roots). A server moves each conversation on with
        `refresh(catalog)` when the catalog they share changes. Returns None when
        nothing changed.

        Raises:
            SkillIOError: no `catalog` given and the session has no loader to
                re-discover with.
        """
        if catalog is not None:
            return self._parts.live.reload(catalog)
        return self._parts.live.refresh()

    def note_paths(self, *paths: str | os.PathLike[str]) -> CatalogChange | None:
        """Tell the session which files or folders the host works on.

        A skill whose frontmatter has `paths:` globs stays out of the model's catalog
        (`model_skills`, and so the rendered catalog, the tools' ids and the turn's
        suggestions) until a noted path matches one of them, relative to the project
        root, as Claude Code offers such a skill only once the session touches a
        matching file; `$name` loads it either way. Skill roots (`.claude/skills`,
        `.agents/skills`, ...) in the folders between each path and the project root
        join the repo scope, as Claude Code does in a monorepo; they rank after
        cwd's own folders. When a path brings in new folders, the catalog is
        re-discovered at once; when it opens `paths:` skills, subscribers hear of it
        (those skills as `changed`). Paths outside the project bring in no folder.
        Returns the change, or None when nothing the model sees changed.
        """
        return self._parts.live.note_paths(paths)

    def subscribe(self, callback: Callable[[CatalogChange], None]) -> Callable[[], None]:
        """Call `callback(change)` after every catalog swap; returns the unsubscribe.

        Callbacks run on the thread that refreshed (the watcher's, or the caller's
        for `"on_call"` and `refresh()`), after the new catalog is in
        place, in the order of the changes. One that raises is logged and skipped.
        """
        return self._parts.live.subscribe(callback)

    def set_refresh(self, refresh: RefreshMode) -> None:
        """Change how the catalog stays current from now on: `"watch"` starts the
        watcher, another mode stops it. A UI opens `"manual"`, draws, then watches
        (a watcher's start, a recursive watch and one catching-up refresh, would
        otherwise compete with the first paint).

        Raises:
            UsageError: an unknown mode, a live mode without a source, `"watch"`
                without `watchfiles`, or a closed session.
        """
        self._parts.live.set_mode(refresh)

    def close(self) -> None:
        """Stop the watcher (if any) and live refreshing, and close the source's
        connections (MCP servers); idempotent.

        The session still works on the catalog it has; `refresh()` still re-discovers.
        """
        self._parts.live.close()
        self._parts.search.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    if not TYPE_CHECKING:  # old names work for one release; a type checker flags them

        def __getattr__(self, name: str) -> Any:
            moved = _MOVED.get(name)
            if moved is None:
                raise AttributeError(f"'Session' object has no attribute {name!r}")
            where, get = moved
            warnings.warn(
                f"Session.{name} is deprecated; {where}. The old name goes in the next release.",
                DeprecationWarning,
                stacklevel=2,
            )
            return get(self)

    def _opened(self, catalog: Catalog) -> tuple[Workspace, DiscoveryOptions] | None:
        """The workspace `catalog` was opened as, with the options it was opened with."""
        from ._workspace import WorkspaceSource

        source = self._parts.live.source
        if not isinstance(source, WorkspaceSource):
            return None
        workspace = source.opened(catalog)
        return None if workspace is None else (workspace, source.options)

    # -- layer 1: the catalog ---------------------------------------------------

    def render_catalog(
        self,
        *,
        format: CatalogFormat = "xml",
        context_window: int | None = None,
        budget_chars: int | None = None,
        include_location: bool = True,
        skill_load: bool = True,
        mode: CatalogMode | None = None,
    ) -> RenderedCatalog:
        """The catalog text plus a report of what the budget shortened or omitted.

        Every surface builds its catalog here, so one allocator (`render_catalog`)
        decides for all: the skills used in this session rank first when the budget
        is short, then the project's skills, then personal, then bundled ones.

        Args:
            format: `xml`, `markdown` or `json`.
            context_window: The model's window in tokens (the budget is a share).
            budget_chars: An explicit budget in characters (wins over the window).
            include_location: List each skill's SKILL.md path.
            skill_load: The model has the skill_load tool: locations are the first
                thing dropped over budget.
            mode: `auto`, `full` or `deferred`; None is the config's `[catalog] mode`.
        """
        env = self._env if self._env is not None else os.environ
        env_var, env_value = budget_from_env(env)
        config = self._parts.live.config
        budget = catalog_budget(
            context_window=context_window,
            budget_chars=budget_chars,
            env_override=env_value,
            env_var=env_var,
            fraction=config.budget_fraction,
            fallback_chars=config.budget_chars,
        )
        from .._telemetry import record_catalog
        from ..render._catalog import render_catalog

        rendered = render_catalog(
            self._parts.model_skills(None),
            format=format,
            budget_chars=budget,
            include_location=include_location,
            max_entries=config.catalog_max_entries,
            skill_load=skill_load,
            mode=config.catalog_mode if mode is None else mode,
            recent=self._parts.injections.recent(),
        )
        report = rendered.report
        record_catalog(
            total=report.total,
            shown=report.shown,
            shortened=len(report.shortened),
            omitted=len(report.omitted),
            chars=report.used_chars,
        )
        return rendered

    def catalog_prompt(
        self,
        *,
        context_window: int | None = None,
        budget_chars: int | None = None,
        format: CatalogFormat = "xml",
        mode: CatalogMode | None = None,
    ) -> str:
        """The catalog text for the system prompt, within budget (`render_catalog`)."""
        return self.render_catalog(
            format=format, context_window=context_window, budget_chars=budget_chars, mode=mode
        ).text

    # -- selection (`_turns`) ---------------------------------------------------

    def resolve(self, text: str, *, invoker: Invoker = "user") -> Resolution:
        """Mentions and slash commands in `text`, resolved without loading anything.

        With skills turned off, every reference is a `disabled` diagnostic that says so.
        """
        from . import _turns

        return _turns.resolve(
            self._parts, text, invoker=invoker, builtin_commands=self._builtin_commands
        )

    def prepare_turn(
        self, text: str, *, invoker: Invoker = "user", runner: SubagentRunner | None = None
    ) -> Turn:
        """Resolve `text` and use every activated skill: inline ones are injected,
        `context: fork` ones run on `runner` (the host's subagent runner).

        Each skill is all or nothing: one that cannot be read (gone, refused, no
        longer parsing), a forked one without a runner, or one whose run fails is a
        diagnostic and left out, while the others are still used; only skills whose
        text the turn returns are recorded as loaded. A new user turn also clears the
        chain of leading skills (see `active_tools`). A user's message that activates
        nothing gets `Turn.suggestions`: the skills that may fit it, as hints with a
        note for the model (`[search] suggestions`, 3 by default).
        """
        from .._telemetry import record_turn
        from . import _turns

        turn = _turns.prepare_turn(
            self._parts,
            text,
            invoker=invoker,
            runner=runner,
            session_id=self.session_id,
            builtin_commands=self._builtin_commands,
        )
        record_turn(
            [a.skill.qualified_name for a in turn.activations],
            suggested=[s.id for s in turn.suggestions],
        )
        return turn

    def find(
        self,
        *,
        name: str | None = None,
        path: str | None = None,
        invoker: Invoker = "model",
    ) -> Skill:
        """One skill by path or name, checked for enable state and invocation control."""
        self.skills.require_skills_enabled()
        from ..select._resolve import find_skill

        return find_skill(
            self._parts.live.catalog,
            name=name,
            path=path,
            invoker=invoker,
            is_enabled=self._parts.is_enabled,
            is_visible=self._parts.is_visible,
            base_dir=self._parts.cwd,
        )

    # -- layer 2: injection (`_inject.Injections`) ------------------------------------

    def inject(self, skill: Skill, *, args: str = "", action: str = "load") -> Injection:
        """Render `skill` for the context, or a reminder if this version is already there.

        The skill is recorded as loaded (and leading) only once its text is ready.

        Raises:
            SkillPermissionError: a permission rule (or the host's answer) refuses it,
                or the operating system refuses to read it.
            SkillParseError: its SKILL.md no longer parses.
            SkillNotFoundError, SkillIOError: it is gone or cannot be read.
        """
        injection = self._parts.injections.render(
            skill, args=args, action=action, session_id=self.session_id
        )
        self._parts.injections.record((injection,))
        return injection

    def fork(self, skill: Skill, *, args: str = "", runner: SubagentRunner) -> ForkRun:
        """Run a skill on the host's subagent runner (what `context: fork` means).

        The permission gate is asked with action `fork`; the skill goes on the
        invocation chain (a skill already on it is a cycle) while its body is
        rendered (`render_body`: read and re-checked, commands run under the shell
        policy, arguments substituted) and the runner works on it.

        Raises:
            SkillPermissionError, SkillParseError, SkillNotFoundError, SkillIOError:
                the skill cannot be used (see `inject`).
            UsageError: the skill is already running (a cycle).
            Exception: whatever the runner raised.
        """
        result = self._parts.run_fork(skill, args, runner, session_id=self.session_id)
        return ForkRun(skill=skill, args=args, result=result)

    def load(
        self,
        *,
        name: str | None = None,
        path: str | None = None,
        args: str = "",
        invoker: Invoker = "model",
    ) -> Injection:
        """Find a skill by path or name and inject it (path wins over name)."""
        return self.inject(self.find(name=name, path=path, invoker=invoker), args=args)

    def compacted(self, *, kept: Sequence[str] = ()) -> None:
        """Tell the session the host compacted its context.

        Injections whose text the compaction dropped are forgotten, so loading those
        skills again sends their whole body instead of a reminder that would point at
        text the model no longer has. `kept` lists SKILL.md paths whose injections
        survived compaction verbatim.
        """
        self._parts.injections.compacted(kept)

    def inspect(self, *, include_skills: bool = False) -> dict[str, Any]:
        """The session's catalog status: counts, what is loaded, what leads, problems."""
        from ._status import session_status

        return session_status(
            self._parts, session_id=self.session_id, include_skills=include_skills
        )

    # -- skill-invokes-skill (`_fork`) ---------------------------------------------

    def end_turn(self) -> None:
        """Start a new user turn: no skill leads, the invocation chain is empty."""
        self._parts.end_turn()

    # -- tools while a skill leads ----------------------------------------------

    @property
    def leading(self) -> tuple[Skill, ...]:
        """Skills activated since the last user turn, first one leading."""
        return self._parts.injections.leading()


# -- what the runtime and the surfaces use, not a host: functions, not members -------


def ensure_fresh(session: Session) -> None:
    """What `"auto"` and `"on_call"` do before each tool call and turn: `refresh()`
    when the mode says the catalog may be stale. A no-op in other modes. A failing
    re-discovery is logged and the current catalog kept: a tool call never fails
    because of it."""
    session._parts.live.ensure_fresh()


def refresh_mode(session: Session) -> RefreshMode:
    """How `session`'s catalog stays current now (see `Session.set_refresh`)."""
    return session._parts.live.mode


def builtin_commands(session: Session) -> frozenset[str]:
    """The host's own slash commands, lowercased, without the `/`."""
    return session._builtin_commands


def render_body(session: Session, skill: Skill, *, args: str = "") -> str:
    """The skill's body as the model gets it: commands run (with a shell policy),
    then arguments substituted around them. No envelope, no file listing."""
    return session._parts.injections.body(skill, args=args, session_id=session.session_id)


def check_not_running(session: Session, skill: Skill) -> None:
    """Refuse to start `skill` while a forked run of it is still going (a cycle).

    Inline use is not a call stack: using a skill again later in the turn is fine.
    Only a skill on the invocation chain, i.e. a forked skill whose run is under way,
    cannot be started again from inside that run.

    Raises:
        UsageError: `skill` is on the invocation chain.
    """
    session._parts.chain.check(skill)


def push_invocation(session: Session, skill: Skill) -> None:
    """Record that `skill` runs now (a fork); a skill already running is a cycle.

    Raises:
        UsageError: `skill` is already on the invocation chain of this turn.
    """
    session._parts.chain.push(skill)


def pop_invocation(session: Session, skill: Skill) -> None:
    """Take `skill` off the invocation chain (a forked run finished)."""
    session._parts.chain.pop(skill)


def kept_value(session: Session, kind: str, catalog: Catalog) -> Any | None:
    """What a surface kept (`keep_value`) as its `kind` value of this very catalog and
    config in an earlier process, else None (`runtime._kept`). Only a session opened
    on a workspace (`Session.open`) keeps anything."""
    opened = session._opened(catalog)
    if opened is None:
        return None
    from ._kept import kept_value as kept

    return kept(kind, *opened)


def keep_value(session: Session, kind: str, catalog: Catalog, value: Any) -> None:
    """Keep `value` (plain values), derived from `catalog` and the config alone and
    nothing the session decides (see `SessionSkills.sets_none_apart`), as its `kind`
    value."""
    opened = session._opened(catalog)
    if opened is not None:
        from ._kept import keep_value as keep

        keep(kind, *opened, value)


def _reload(session: Session, catalog: Catalog | None = None) -> Catalog:
    """The old `Session.reload`: `refresh(catalog)`, answering the catalog now in place."""
    session.refresh(catalog)
    return session.catalog


def _on(view: str, name: str) -> tuple[str, Callable[[Session], Any]]:
    return f"use session.{view}.{name}", lambda session: getattr(getattr(session, view), name)


def _plumbing(
    func: Callable[..., Any], hint: str = "a host does not need it"
) -> tuple[str, Callable[[Session], Any]]:
    return hint, lambda session: functools.partial(func, session)


_MOVED: dict[str, tuple[str, Callable[[Session], Any]]] = {
    **{
        name: _on("skills", name)
        for name in (
            "is_enabled",
            "set_enabled",
            "is_visible",
            "model_skills",
            "sets_none_apart",
            "skills_enabled",
            "require_skills_enabled",
            "forget",
            "create_skill",
            "digest",
        )
    },
    **{
        name: _on("declared", name)
        for name in (
            "active_tools",
            "requested_permissions",
            "dependencies",
            "resolve_dependencies",
            "dependency_env",
            "hooks_for",
            "run_hooks",
        )
    },
    "reload": _plumbing(_reload, "use refresh(catalog), which answers the change"),
    "ensure_fresh": _plumbing(
        ensure_fresh, "a live session refreshes itself before tool calls and turns"
    ),
    "refresh_mode": ("see inspect()", refresh_mode),
    "builtin_commands": ("it is what Session(builtin_commands=) was given", builtin_commands),
    "render_body": _plumbing(render_body),
    "check_not_running": _plumbing(check_not_running),
    "push_invocation": _plumbing(push_invocation),
    "pop_invocation": _plumbing(pop_invocation),
    "kept_value": _plumbing(kept_value),
    "keep_value": _plumbing(keep_value),
}
"""Each public name `Session` had up to 0.1.0 that moved: where it went, and how to
reach it from a session (`Session.__getattr__` warns, then answers with it)."""


def resolution_suggestions(session: Session, resolution: Resolution) -> tuple[Suggestion, ...]:
    """What `session.prepare_turn` would suggest for the message `resolution` came
    from, without loading anything (`skillpack resolve`, the picker)."""
    return turn_suggestions(session._parts, resolution)
