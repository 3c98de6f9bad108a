"""Per-conversation state over a catalog: enable state, permissions, loaded versions.

A `Session` is what a host embeds. It turns a user message into activations and
injections (`prepare_turn`), renders the catalog prompt within budget
(`catalog_prompt`), loads skills for the model's tool calls (`load`), and says which
tools a leading skill allows (`active_tools`). Every method is safe to call from
several threads: state changes happen under one lock, and each call works on one
snapshot of the catalog, so a concurrent `reload` is seen whole or not at all.

A session can keep its catalog live (`refresh=`, see `_live.py`): `"manual"` changes
it only on `reload()`/`refresh()`, `"on_call"` re-discovers before a tool call or a
turn at most every `refresh_interval` seconds, and `"watch"` runs a `watchfiles`
thread (`discovery._watch`) that re-discovers after file events, scanning only the
roots they touch (`discovery.discover_roots`). Each new catalog is swapped in whole,
and subscribers get a `CatalogChange`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._errors import (
    SkillDisabledError,
    SkillIOError,
    SkillpackError,
    SkillPermissionError,
    UsageError,
)
from .._model import Catalog, CodexPermissions, Skill
from ..config._config import Config
from ..render._render import (
    CatalogFormat,
    RenderedCatalog,
    budget_from_env,
    catalog_budget,
    render_catalog,
    render_injection,
    render_reminder,
    substitute,
)
from ..select._resolve import (
    Activation,
    Diagnostic,
    DiagnosticKind,
    Resolution,
    find_skill,
    resolve_message,
)
from ._deps import DependencyReport, DependencyResolver, EnvPrompt, McpInstall
from ._fork import ForkRun, SubagentRunner, no_runner_message
from ._live import (
    ON_CALL_INTERVAL,
    REFRESH_MODES,
    CatalogChange,
    CatalogSource,
    IncrementalSource,
    LoaderSource,
    RefreshMode,
    diff_catalogs,
)
from ._permissions import AskCallback, PermissionGate
from ._readers import FileSystemReader as FileSystemReader
from ._readers import SkillContent as SkillContent
from ._readers import SkillReader as SkillReader

if TYPE_CHECKING:
    from ..discovery._discover import SkillDelta
    from ..discovery._watch import RootWatcher
    from ._create import CreatedSkill
    from ._hooks import Hook, HookResult, HookState
    from ._shell import ShellPolicy, ShellRun

log = logging.getLogger("skillpack.session")

Invoker = Literal["user", "model"]
ToolT = TypeVar("ToolT")


@dataclass(frozen=True, kw_only=True, slots=True)
class Turn:
    """What `prepare_turn` decided for one message."""

    activations: tuple[Activation, ...]
    """The skills this turn used: each inline one injected, each forked one run."""
    injections: tuple[str, ...]
    """One `<skill_content>` block (or a short reminder) per inline activation, in order."""
    diagnostics: tuple[Diagnostic, ...]
    """Why references did not activate, and why an activated skill could not be used
    (`load-failed`, `permission-denied`, `fork-unavailable`, `fork-failed`, `cycle`):
    such a skill is left out of `activations` and nothing of it is recorded."""
    lines: tuple[str, ...]
    """Visible lines for the transcript, e.g. `Using skill: pdf-forms`."""
    text: str
    """The task text left once the mentions or the slash command are taken out."""
    forks: tuple[ForkRun, ...] = ()
    """The `context: fork` activations, handed to the host's subagent runner, in order."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "activations": [a.to_dict() for a in self.activations],
            "injections": list(self.injections),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "lines": list(self.lines),
            "text": self.text,
            "forks": [f.to_dict() for f in self.forks],
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Injection:
    """One skill loaded into context."""

    skill: Skill
    text: str
    """The rendered `<skill_content>` block, or a reminder when `reminder` is set."""
    reminder: bool
    """True when this version was already injected earlier in the session."""
    commands: tuple[ShellRun, ...] = ()
    """The skill's embedded shell commands and what became of each (with a policy)."""
    missing_dependencies: tuple[dict[str, str], ...] = ()
    """`{"type", "name"}` of each declared env var / MCP server still missing."""
    version: tuple[int, ...] = (0, 0)
    """The reader's version of the SKILL.md read for this injection, `(mtime_ns, size,
    ...)` (the filesystem adds `ctime_ns`)."""


@dataclass(kw_only=True)
class _State:
    enabled: dict[str, bool] = field(default_factory=dict)
    injected: dict[str, tuple[int, ...]] = field(default_factory=dict)
    leading: list[Skill] = field(default_factory=list)
    invocations: list[Skill] = field(default_factory=list)


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
        refresh: RefreshMode = "manual",
        refresh_interval: float = ON_CALL_INTERVAL,
        source: CatalogSource | None = None,
        shell: ShellPolicy | None = None,
        env_prompt: EnvPrompt | None = None,
        mcp_servers: Iterable[str] = (),
        mcp_install: McpInstall | None = None,
        builtin_commands: Iterable[str] = (),
    ) -> None:
        """Create a session.

        Args:
            catalog: The skills this session works with.
            config: Enable state, budgets, permissions and `multi_mention`.
            reader: Where bodies and files are read (default: the filesystem).
            session_id: Substituted for `${SESSION_ID}`; a random id by default.
            ask: Host callback for permission rules that say `ask`.
            remember_permissions: Persist "always"/"never" answers to the user config.
            loader: Re-discovers the catalog for `reload()`.
            cwd: Base directory for relative paths in `[$name](path)` links.
            env: Environment to read `SKILLS_PROMPT_CHAR_BUDGET` (else Claude Code's
                `SLASH_COMMAND_TOOL_CHAR_BUDGET`) and skills' declared variables
                from (default os.environ).
            refresh: How the catalog stays current: `"manual"` (only `reload()` and
                `refresh()`), `"on_call"` (re-discover before each tool call and
                turn, at most every `refresh_interval` seconds) or `"watch"` (a
                `watchfiles` thread re-discovers the roots file events touch; needs
                `pip install 'skillpack[watch]'`; stop it with `close()`).
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

        Raises:
            UsageError: an unknown `refresh` mode, a live mode without a `loader`
                or `source`, or `"watch"` without `watchfiles` installed.
        """
        self._catalog = catalog
        self._config = config if config is not None else Config()
        self._reader: SkillReader = reader if reader is not None else FileSystemReader()
        self.session_id = session_id or uuid.uuid4().hex
        if source is None and loader is not None:
            source = LoaderSource(loader=loader)
        self._source = source
        self._cwd = cwd
        self._env = env
        self.builtin_commands: frozenset[str] = frozenset(
            command.lower().lstrip("/") for command in builtin_commands
        )
        self._lock = threading.RLock()
        self._state = _State()
        remember = _persist_permission if remember_permissions else None
        self._gate = PermissionGate(self._config.permissions, ask=ask, remember=remember)
        self._subscribers: list[Callable[[CatalogChange], None]] = []
        self._refreshing = threading.RLock()
        self._next_check = 0.0
        self._watcher: RootWatcher | None = None
        self._closed = False
        self._refresh_mode = _check_refresh(refresh, source)
        self._refresh_interval = max(0.0, float(refresh_interval))
        self._shell = shell
        self._deps = DependencyResolver(
            environment=lambda: self._env if self._env is not None else os.environ,
            prompt=env_prompt,
            host_servers=mcp_servers,
            config_servers=lambda: [server["name"] for server in self._config.mcp_servers],
            install=mcp_install,
        )
        self._hooks: HookState | None = None
        if refresh == "watch":
            self._watcher = _start_watcher(self)

    # -- construction -----------------------------------------------------------

    @classmethod
    def open(
        cls,
        *,
        cwd: str | None = None,
        roots: Sequence[str] = (),
        include_user: bool = True,
        include_system: bool = True,
        use_cache: bool = True,
        **kwargs: Any,
    ) -> Session:
        """Discover skills the way the CLI does (config + every scope) and open a session.

        Other keywords go to `Session(...)`, e.g. `refresh="watch"`: refreshes then
        re-read the config files too, and a watcher also notices a new skill root in
        the repo chain or the home folder.
        """
        from ._workspace import WorkspaceSource

        source = WorkspaceSource(
            cwd=os.path.abspath(cwd or os.getcwd()),
            roots=tuple(roots),
            include_user=include_user,
            include_system=include_system,
            use_cache=use_cache,
        )
        ws = source.open()
        kwargs.setdefault("reader", source.reader())
        return cls(ws.catalog, config=ws.config, source=source, cwd=ws.cwd, **kwargs)

    # -- catalog and state ------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    @property
    def config(self) -> Config:
        return self._config

    @property
    def permissions(self) -> PermissionGate:
        return self._gate

    @property
    def reader(self) -> SkillReader:
        return self._reader

    def reload(self, catalog: Catalog | None = None) -> Catalog:
        """Swap in a new catalog (given, or re-discovered with the session's loader).

        Subscribers hear of the change as with `refresh()`.
        """
        if catalog is None:
            self.refresh()
            return self._catalog
        with self._refreshing:
            change = self._swap(catalog, None)
            self._notify(change)
        return catalog

    # -- a live catalog -----------------------------------------------------------

    @property
    def refresh_mode(self) -> RefreshMode:
        return self._refresh_mode

    def refresh(self) -> CatalogChange | None:
        """Re-discover now, swap the new catalog in and tell subscribers what changed.

        Warm, this costs a `stat` per folder and per SKILL.md of every root (the
        index replays unchanged roots). Returns None when nothing changed.

        Raises:
            SkillIOError: the session has no loader to re-discover with.
        """
        return self._refresh(None)

    def _refresh(self, touched: Collection[str] | None) -> CatalogChange | None:
        """`refresh()`; `touched` are the paths a watcher saw change (None: any), so
        that only the roots holding them are scanned again."""
        source = self._source
        if source is None:
            raise SkillIOError(
                "This session has no loader to re-discover skills with; "
                "pass the new catalog to reload(catalog) or open it with Session.open()."
            )
        with self._refreshing:
            known = None
            if not isinstance(source, IncrementalSource):
                catalog, config = source.load()
            else:
                loaded = source.load() if touched is None else source.load_changed(touched)
                catalog, config = loaded
                known = source.known_change(self._catalog, catalog)
            change = self._swap(catalog, config, known)
            self._notify(change)
        return change

    def ensure_fresh(self) -> None:
        """What `"on_call"` does before each tool call and turn: `refresh()` when the
        last one is over `refresh_interval` seconds old. A no-op in other modes.

        A failing re-discovery is logged and the current catalog kept: a tool call
        never fails because of it.
        """
        if self._refresh_mode != "on_call":
            return
        now = time.monotonic()
        with self._lock:
            if now < self._next_check:
                return
            self._next_check = now + self._refresh_interval
        try:
            self.refresh()
        except Exception:  # noqa: BLE001 - keep serving the catalog we have
            log.exception("skillpack: re-discovering skills failed; the catalog is unchanged")

    def note_paths(self, *paths: str | os.PathLike[str]) -> CatalogChange | None:
        """Tell the session which files or folders the host works on.

        Skill roots (`.claude/skills`, `.agents/skills`, ...) in the folders between
        each path and the project root join the repo scope, as Claude Code does in
        a monorepo; they rank after cwd's own folders. When a path brings in new
        folders, the catalog is re-discovered at once (subscribers hear of it); a
        path in a folder already noted costs a few string checks. Paths outside the
        project are ignored. Without a source that discovers repo roots (a session
        not opened with `Session.open`), this does nothing.
        """
        source = self._source
        if source is None or not paths:
            return None
        if not source.note_paths([os.fspath(p) for p in paths]):
            return None
        return self.refresh()

    def subscribe(self, callback: Callable[[CatalogChange], None]) -> Callable[[], None]:
        """Call `callback(change)` after every catalog swap; returns the unsubscribe.

        Callbacks run on the thread that refreshed (the watcher's, or the caller's
        for `"on_call"`, `refresh()` and `reload()`), after the new catalog is in
        place, in the order of the changes. One that raises is logged and skipped.
        """
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def set_refresh(self, refresh: RefreshMode) -> None:
        """Change how the catalog stays current from now on: `"watch"` starts the
        watcher, another mode stops it. A UI opens `"manual"`, draws, then watches
        (a watcher's start, a recursive watch and one catching-up refresh, would
        otherwise compete with the first paint).

        Raises:
            UsageError: an unknown mode, a live mode without a source, `"watch"`
                without `watchfiles`, or a closed session.
        """
        mode = _check_refresh(refresh, self._source)
        with self._lock:
            if self._closed:
                raise UsageError("This session is closed; open a new one to refresh it live.")
            self._refresh_mode = mode
            start = mode == "watch" and self._watcher is None
            stopped = None
            if mode != "watch":
                stopped, self._watcher = self._watcher, None
        if stopped is not None:
            stopped.stop()
        if not start:
            return
        watcher = _start_watcher(self)
        with self._lock:
            keep = not self._closed and self._watcher is None and self._refresh_mode == "watch"
            if keep:
                self._watcher = watcher
        if not keep:
            watcher.stop()  # closed, or switched again, meanwhile

    def close(self) -> None:
        """Stop the watcher (if any) and live refreshing, and close the source's
        connections (MCP servers); idempotent.

        The session still works on the catalog it has; `refresh()` still re-discovers.
        """
        with self._lock:
            self._closed = True
            self._refresh_mode = "manual"
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
        close_source = getattr(self._source, "close", None)
        if close_source is not None:
            close_source()  # e.g. the MCP servers of `[[mcp_servers]]`

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _swap(
        self, catalog: Catalog, config: Config | None, known: SkillDelta | None = None
    ) -> CatalogChange | None:
        """Put `catalog` (and `config`) in place unless nothing differs; the change
        (`known`: the skills' change, when the source worked it out).

        Callers hold `_refreshing`, so the catalog cannot change meanwhile: the
        comparison runs outside `_lock` and readers are held up only by the swap.
        """
        config_changed = config is not None and config != self._config
        change = diff_catalogs(
            self._catalog, catalog, config_changed=config_changed, known=known
        )
        if change is None:
            return None  # the catalog in place stays (searches keyed on it stay warm)
        with self._lock:
            self._catalog = catalog
            if config is not None and config_changed:
                self._config = config
                self._gate.use_rules(config.permissions)
        return change

    def _notify(self, change: CatalogChange | None) -> None:
        if change is None:
            return
        with self._lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(change)
            except Exception:  # noqa: BLE001 - one subscriber never breaks the others
                log.exception("skillpack: a catalog subscriber raised; it stays subscribed")

    def is_enabled(self, skill: Skill) -> bool:
        with self._lock:
            override = self._state.enabled.get(skill.key)
        if override is not None:
            return override
        return self._config.is_enabled(skill)

    def set_enabled(self, skill: Skill, enabled: bool) -> None:
        """Enable or disable a skill for this session only (config is not written)."""
        with self._lock:
            self._state.enabled[skill.key] = enabled

    def is_visible(self, skill: Skill) -> bool:
        """False when a permission rule denies the skill: it is then absent everywhere."""
        return self._gate.visible(skill)

    def model_skills(self, catalog: Catalog | None = None) -> tuple[Skill, ...]:
        """Skills the model may see: enabled, permitted, model-invocable, not shadowed."""
        catalog = catalog or self._catalog
        return tuple(
            s
            for s in catalog.skills
            if s.model_invocable
            and s.shadowed_by is None
            and self.is_enabled(s)
            and self.is_visible(s)
        )

    # -- layer 1: the catalog ---------------------------------------------------

    def render_catalog(
        self,
        *,
        format: CatalogFormat = "xml",
        context_window: int | None = None,
        budget_chars: int | None = None,
        include_location: bool = True,
    ) -> RenderedCatalog:
        """The catalog text plus a report of what the budget shortened or omitted."""
        env = self._env if self._env is not None else os.environ
        env_var, env_value = budget_from_env(env)
        config = self._config
        budget = catalog_budget(
            context_window=context_window,
            budget_chars=budget_chars,
            env_override=env_value,
            env_var=env_var,
            fraction=config.budget_fraction,
            fallback_chars=config.budget_chars,
        )
        return render_catalog(
            self.model_skills(),
            format=format,
            budget_chars=budget,
            include_location=include_location,
            max_entries=config.catalog_max_entries,
        )

    def catalog_prompt(
        self,
        *,
        context_window: int | None = None,
        budget_chars: int | None = None,
        format: CatalogFormat = "xml",
    ) -> str:
        """The catalog text for the system prompt, within budget."""
        return self.render_catalog(
            format=format, context_window=context_window, budget_chars=budget_chars
        ).text

    # -- selection --------------------------------------------------------------

    @property
    def skills_enabled(self) -> bool:
        """False when the config turns every skill off (`[skills] enabled = false`)."""
        return self._config.skills_enabled

    def require_skills_enabled(self) -> None:
        """Raise `SkillDisabledError` saying how to turn skills on, when they are off."""
        if not self._config.skills_enabled:
            raise SkillDisabledError(self._skills_off_message())

    def _skills_off_message(self) -> str:
        files = ", ".join(self._config.sources) or "the config"
        return (
            "Skills are turned off: `[skills] enabled = false` in "
            f"{files}. Set it to true (or remove it) to use skills."
        )

    def resolve(self, text: str, *, invoker: Invoker = "user") -> Resolution:
        """Mentions and slash commands in `text`, resolved without loading anything.

        With skills turned off, every reference is a `disabled` diagnostic that says so.
        """
        resolution = self._resolve(text, invoker=invoker)
        if self._config.skills_enabled or not resolution.diagnostics:
            return resolution
        message = self._skills_off_message()
        return replace(
            resolution,
            diagnostics=tuple(
                replace(d, message=message, hint=None) if d.kind == "disabled" else d
                for d in resolution.diagnostics
            ),
        )

    def _resolve(self, text: str, *, invoker: Invoker) -> Resolution:
        return resolve_message(
            text,
            self._catalog,
            invoker=invoker,
            is_enabled=self.is_enabled,
            is_visible=self.is_visible,
            multi_mention=self._config.multi_mention,
            builtin_commands=self.builtin_commands,
            base_dir=self._cwd,
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
        chain of leading skills (see `active_tools`).
        """
        self.ensure_fresh()
        resolution = self.resolve(text, invoker=invoker)
        if invoker == "user":
            self.end_turn()
        used: list[Activation] = []
        lines: list[str] = []
        rendered: list[Injection] = []
        forks: list[ForkRun] = []
        diagnostics = list(resolution.diagnostics)
        for activation, line in zip(resolution.activations, resolution.lines, strict=True):
            try:
                outcome = self._use(activation, runner)
            except _Unusable as refused:
                diagnostics.append(refused.diagnostic(activation.token))
                continue
            if isinstance(outcome, ForkRun):
                forks.append(outcome)
            else:
                rendered.append(outcome)
            used.append(activation)
            lines.append(line)
        self._record(rendered)
        return Turn(
            activations=tuple(used),
            injections=tuple(injection.text for injection in rendered),
            diagnostics=tuple(diagnostics),
            lines=tuple(lines),
            text=resolution.text,
            forks=tuple(forks),
        )

    def _use(self, activation: Activation, runner: SubagentRunner | None) -> Injection | ForkRun:
        """One activation of a turn: injected, or run on `runner`; `_Unusable` if not."""
        skill, args = activation.skill, activation.args
        try:
            if skill.context != "fork":
                self.check_not_running(skill)
                return self._render(skill, args=args, action="load")
            if runner is None:
                raise _Unusable("fork-unavailable", no_runner_message(skill))
            result = self._run_fork(skill, args, runner, failure=_Unusable)
            return ForkRun(skill=skill, args=args, result=result)
        except _CycleError as exc:
            raise _Unusable("cycle", str(exc)) from exc
        except SkillPermissionError as exc:
            raise _Unusable("permission-denied", str(exc), exc.hint) from exc
        except SkillpackError as exc:
            raise _Unusable("load-failed", str(exc), exc.hint) from exc

    def find(
        self,
        *,
        name: str | None = None,
        path: str | None = None,
        invoker: Invoker = "model",
    ) -> Skill:
        """One skill by path or name, checked for enable state and invocation control."""
        self.require_skills_enabled()
        return find_skill(
            self._catalog,
            name=name,
            path=path,
            invoker=invoker,
            is_enabled=self.is_enabled,
            is_visible=self.is_visible,
            base_dir=self._cwd,
        )

    # -- layer 2: injection -----------------------------------------------------

    def inject(self, skill: Skill, *, args: str = "", action: str = "load") -> Injection:
        """Render `skill` for the context, or a reminder if this version is already there.

        The skill is recorded as loaded (and leading) only once its text is ready.

        Raises:
            SkillPermissionError: a permission rule (or the host's answer) refuses it,
                or the operating system refuses to read it.
            SkillParseError: its SKILL.md no longer parses.
            SkillNotFoundError, SkillIOError: it is gone or cannot be read.
        """
        injection = self._render(skill, args=args, action=action)
        self._record((injection,))
        return injection

    def _render(self, skill: Skill, *, args: str, action: str) -> Injection:
        """The injection (or reminder) of `skill`, recording nothing."""
        self._gate.require(skill, action)
        version = self._reader.version(skill)
        with self._lock:
            seen = self._state.injected.get(skill.key)
        if seen == version and not args:
            missing = self._deps.report(skill).missing
            return Injection(
                skill=skill,
                text=render_reminder(skill),
                reminder=True,
                missing_dependencies=missing,
                version=version,
            )
        missing = self._deps.resolve(skill).missing
        body = self._reader.read_body(skill)
        keep, commands = self._preprocess(skill, body)
        files, truncated = self._reader.list_files(skill)
        text = render_injection(
            skill,
            body,
            args=args,
            session_id=self.session_id,
            files=files,
            files_truncated=truncated,
            keep=keep,
        )
        return Injection(
            skill=skill,
            text=text,
            reminder=False,
            commands=commands,
            missing_dependencies=missing,
            version=version,
        )

    def _record(self, injections: Sequence[Injection]) -> None:
        """Remember injections whose text was handed out: loaded versions, leaders."""
        with self._lock:
            for injection in injections:
                key = injection.skill.key
                if all(s.key != key for s in self._state.leading):
                    self._state.leading.append(injection.skill)
                if not injection.reminder:
                    self._state.injected[key] = injection.version

    def _preprocess(
        self, skill: Skill, body: str
    ) -> tuple[tuple[tuple[int, int, str], ...], tuple[ShellRun, ...]]:
        if self._shell is None:
            return (), ()
        from ._shell import preprocess

        done = preprocess(skill, body, policy=self._shell, gate=self._gate)
        return done.keep, done.runs

    def render_body(self, skill: Skill, *, args: str = "") -> str:
        """The skill's body as the model gets it: commands run (with a shell policy),
        then arguments substituted around them. No envelope, no file listing."""
        body = self._reader.read_body(skill)
        keep, _ = self._preprocess(skill, body)
        return substitute(body, args=args, skill=skill, session_id=self.session_id, keep=keep)

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
        return ForkRun(skill=skill, args=args, result=self._run_fork(skill, args, runner))

    def _run_fork(
        self,
        skill: Skill,
        args: str,
        runner: SubagentRunner,
        *,
        failure: Callable[[DiagnosticKind, str], Exception] | None = None,
    ) -> Any:
        """The runner's result for `skill`; a runner error is re-raised as is, or as
        `failure("fork-failed", message)` when given (and a cycle as `"cycle"`)."""
        self._gate.require(skill, "fork")
        try:
            self.push_invocation(skill)
        except _CycleError as exc:
            if failure is None:
                raise
            raise failure("cycle", str(exc)) from exc
        try:
            prompt = self.render_body(skill, args=args).strip()
            try:
                return runner.run(
                    skill=skill, prompt=prompt, agent=skill.agent, model=skill.model
                )
            except SkillpackError:
                raise
            except Exception as exc:
                if failure is None:
                    raise
                raise failure(
                    "fork-failed",
                    f"The subagent running skill '{skill.name}' failed: "
                    f"{type(exc).__name__}: {exc}",
                ) from exc
        finally:
            self.pop_invocation(skill)

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

    def forget(self, skill: Skill) -> None:
        """Drop the record that `skill` was injected, so the next load sends it whole."""
        with self._lock:
            self._state.injected.pop(skill.key, None)

    def compacted(self, *, kept: Sequence[str] = ()) -> None:
        """Tell the session the host compacted its context.

        Injections whose text the compaction dropped are forgotten, so loading those
        skills again sends their whole body instead of a reminder that would point at
        text the model no longer has. `kept` lists SKILL.md paths whose injections
        survived compaction verbatim.
        """
        keep = set(kept)
        with self._lock:
            for key in list(self._state.injected):
                if key not in keep:
                    del self._state.injected[key]

    def inspect(self, *, include_skills: bool = False) -> dict[str, Any]:
        """The session's catalog status: counts, what is loaded, what leads, problems."""
        catalog = self._catalog
        visible = self.model_skills(catalog)
        with self._lock:
            injected = dict(self._state.injected)
            leading = [s.qualified_name for s in self._state.leading]
        loaded = []
        for key, version in sorted(injected.items()):
            skill = catalog.at_path(key)
            loaded.append(
                {
                    "name": skill.name if skill else None,
                    "path": skill.path if skill else key,
                    "mtime_ns": version[0],
                    "size": version[1],
                }
            )
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "counts": {
                "skills": len(catalog.skills),
                "in_model_catalog": len(visible),
                "disabled": sum(1 for s in catalog.skills if not self.is_enabled(s)),
                "denied": sum(1 for s in catalog.skills if not self.is_visible(s)),
                "problems": len(catalog.problems),
            },
            "loaded": loaded,
            "leading": leading,
            "roots": [r.to_dict() for r in catalog.roots],
        }
        if include_skills:
            visible_keys = {s.key for s in visible}
            data["skills"] = [
                {
                    "name": s.name,
                    "qualified_name": s.qualified_name,
                    "path": s.path,
                    "scope": s.scope,
                    "enabled": self.is_enabled(s),
                    "visible": self.is_visible(s),
                    "in_model_catalog": s.key in visible_keys,
                }
                for s in catalog.skills
            ]
        return data

    # -- what skills declare: dependencies, hooks ------------------------------------

    def dependencies(self, skill: Skill) -> DependencyReport:
        """Every dependency `skill` declares and its state now (asks nobody)."""
        return self._deps.report(skill)

    def resolve_dependencies(self, skill: Skill) -> DependencyReport:
        """`dependencies`, after asking the host for missing ones (`env_prompt`,
        `mcp_install`); a load does this itself."""
        return self._deps.resolve(skill)

    def dependency_env(self, skill: Skill) -> dict[str, str]:
        """Values of `skill`'s declared variables known to the session (typed-in ones,
        then the environment), for the host to give the tools it runs. Secrets:
        never log them."""
        return self._deps.values(skill)

    def requested_permissions(self) -> dict[str, CodexPermissions]:
        """The Codex `permissions` profiles of the leading skills, by qualified name:
        what they ask the host for while they lead (as `active_tools` offers their
        `allowed-tools`). skillpack never applies them; the host decides."""
        return {
            skill.qualified_name: skill.codex.permissions
            for skill in self.leading
            if skill.codex is not None and skill.codex.permissions is not None
        }

    def hooks_for(
        self, event: str, tool_name: str | None = None, *, consume: bool = True
    ) -> tuple[Hook, ...]:
        """The hooks of the leading skills that apply to `event` (and `tool_name`).

        A `once: true` hook is returned once per session: returning it spends it,
        unless `consume=False` (a look that runs nothing).
        """
        from ._hooks import HookState

        with self._lock:
            if self._hooks is None:
                self._hooks = HookState()
            state = self._hooks
        return state.applicable(self.leading, event, tool_name, consume=consume)

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

        hooks = self.hooks_for(event, tool_name)
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "tool_name": tool_name,
            "cwd": self._cwd or os.getcwd(),
            **(payload or {}),
        }
        return run_hooks(hooks, policy=self._shell, gate=self._gate, payload=data)

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

        created = create_skill(
            name=name,
            description=description,
            body=body,
            scope=scope,
            frontmatter=frontmatter,
            digest=digest,
            cwd=self._cwd,
            catalog=self._catalog,
            gate=self._gate,
            by_model=by_model,
        )
        if self._source is not None:
            self.refresh()  # subscribers hear of the new skill like of any other change
        in_catalog = self._catalog.at_path(created.path) is not None
        return dataclasses.replace(created, in_catalog=in_catalog)

    def digest(self, skill: Skill) -> str | None:
        """`sha256:<hex>` of the skill's SKILL.md as it is now (for replacing it with
        `create_skill`), or None when the reader cannot tell."""
        read_source = getattr(self._reader, "read_source", None)
        if read_source is None:
            return None
        from ._create import digest_of

        try:
            return digest_of(read_source(skill))
        except (OSError, SkillIOError):
            return None

    # -- skill-invokes-skill ------------------------------------------------------

    def check_not_running(self, skill: Skill) -> None:
        """Refuse to start `skill` while a forked run of it is still going (a cycle).

        Inline use is not a call stack: using a skill again later in the turn is
        fine. Only a skill on the invocation chain, i.e. a forked skill whose run is
        under way, cannot be started again from inside that run.

        Raises:
            UsageError: `skill` is on the invocation chain.
        """
        with self._lock:
            self._check_not_running(skill)

    def _check_not_running(self, skill: Skill) -> None:
        chain = self._state.invocations
        if any(s.key == skill.key for s in chain):
            names = " -> ".join([*(s.name for s in chain), skill.name])
            raise _CycleError(
                f"Skill '{skill.name}' is already running in this turn ({names}); "
                "a skill cannot invoke itself, directly or through other skills. "
                "Continue with the instructions already loaded."
            )

    def push_invocation(self, skill: Skill) -> None:
        """Record that `skill` runs now (a fork); a skill already running is a cycle.

        Raises:
            UsageError: `skill` is already on the invocation chain of this turn.
        """
        with self._lock:
            self._check_not_running(skill)
            self._state.invocations.append(skill)

    def pop_invocation(self, skill: Skill) -> None:
        """Take `skill` off the invocation chain (a forked run finished)."""
        with self._lock:
            chain = self._state.invocations
            for i in range(len(chain) - 1, -1, -1):
                if chain[i].key == skill.key:
                    del chain[i]
                    break

    def end_turn(self) -> None:
        """Start a new user turn: no skill leads, the invocation chain is empty."""
        with self._lock:
            self._state.leading.clear()
            self._state.invocations.clear()

    # -- tools while a skill leads ----------------------------------------------

    @property
    def leading(self) -> tuple[Skill, ...]:
        """Skills activated since the last user turn, first one leading."""
        with self._lock:
            return tuple(self._state.leading)

    def active_tools(
        self, all_tools: Sequence[ToolT], *, tool_name: Callable[[ToolT], str] | None = None
    ) -> list[ToolT]:
        """The tools a host should offer while the current skills lead.

        `allowed-tools` of every leading skill that declares it narrows the set (the
        intersection); `disallowed-tools` removes tools. Entries such as
        `Bash(git add:*)` allow the tool `Bash`; with no declarations, all tools stay.
        """
        from ..render._tools_filter import filter_tools

        return filter_tools(all_tools, self.leading, tool_name=tool_name)


class _CycleError(UsageError):
    """A skill started again inside its own forked run (`UsageError` to callers)."""


class _Unusable(Exception):
    """An activated skill a turn could not use, as the diagnostic that says why."""

    def __init__(self, kind: DiagnosticKind, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.kind: DiagnosticKind = kind
        self.message = message
        self.hint = hint

    def diagnostic(self, token: str) -> Diagnostic:
        return Diagnostic(kind=self.kind, token=token, message=self.message, hint=self.hint)


def _check_refresh(mode: str, source: CatalogSource | None) -> RefreshMode:
    if mode not in REFRESH_MODES:
        raise UsageError(
            f"Unknown refresh mode {mode!r}; use one of {', '.join(REFRESH_MODES)}."
        )
    if mode != "manual" and source is None:
        raise UsageError(
            f"refresh={mode!r} needs a way to re-discover skills: pass `loader=` "
            "(or `source=`), or open the session with Session.open()."
        )
    return mode  # type: ignore[return-value]


def _start_watcher(session: Session) -> RootWatcher:
    """A running watcher for `session` that holds it weakly: a session dropped
    without `close()` stops its watcher at the next poll."""
    from ..discovery._watch import RootWatcher

    ref = weakref.ref(session)

    def paths() -> tuple[str, ...] | None:
        live = ref()
        if live is None or live._closed or live._source is None:
            return None
        return live._source.watch_paths(live._catalog)

    def on_change(touched: Collection[str] | None) -> bool:
        live = ref()
        if live is None or live._closed:
            return False
        live._refresh(touched)
        return True

    def probe() -> object:
        live = ref()
        if live is None or live._source is None:
            return None
        return live._source.probe(live._catalog)

    watcher = RootWatcher(paths=paths, on_change=on_change, probe=probe)
    watcher.start()
    return watcher


def _persist_permission(glob: str, decision: str) -> None:
    from ..config._config import add_permission

    if decision in ("allow", "deny", "ask"):
        add_permission(glob, decision)  # type: ignore[arg-type]
