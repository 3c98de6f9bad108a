"""Config + discovery in one call: what every surface opens before it works.

A `Workspace` is the catalog as the user's configuration shapes it: extra roots,
discovery limits and enable state come from the user and project config files.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import AmbiguousSkillError, SkillNotFoundError
from .._model import Catalog, Problem, Root, Skill, bare_named, best_of
from ..config._files import load_config, project_config_path, user_config_path
from ..config._schema import Config, ConfigScope, McpServerConfig
from ..discovery._options import DEFAULT_OPTIONS, DiscoveryOptions
from ._readers import FileSystemReader, SkillReader
from ._sources import RoutingReader, SkillSource, with_sources

if TYPE_CHECKING:
    from ..discovery._discover import Discovered, SkillDelta


SourcesFor = Callable[[Config], Sequence[SkillSource]]
"""The skill sources (beside the roots) a workspace with this config adds."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Workspace:
    """A discovered catalog together with the configuration that shaped it."""

    catalog: Catalog
    config: Config
    cwd: str
    """The directory repo discovery started from."""
    discovered: Discovered | None = field(default=None, repr=False, compare=False)
    """The discovery run behind `catalog` (a later run can start from it)."""
    inputs: str | None = field(default=None, repr=False, compare=False)
    """Names everything but the roots' files that shaped `catalog` (`WorkspaceInputs.key`);
    None when it holds skills from elsewhere (MCP servers)."""

    @property
    def problems(self) -> tuple[Problem, ...]:
        return self.catalog.problems

    def is_enabled(self, skill: Skill) -> bool:
        return self.config.is_enabled(skill)


def open_workspace(
    options: DiscoveryOptions | None = None,
    *,
    cwd: str | None = None,
    previous: Discovered | None = None,
    touched: Collection[str] | None = None,
    sources: SourcesFor | None = None,
) -> Workspace:
    """Load the user + project config, then discover every root they name, then add
    the skills of other sources (the MCP servers of `[[mcp_servers]]`).

    Args:
        options: What to discover (default: `DiscoveryOptions()`). Its `extra_roots`
            rank before the config's `roots`; a field it leaves to the config
            (`max_depth`, `max_dirs`, `repo_skills_dir` at None) takes the config's
            value; `include_user` also decides whether the user config is read.
        cwd: Where repo discovery starts (default: the current directory).
        previous: An earlier workspace's discovery (`Workspace.discovered`) to start
            from: roots no `touched` path is in are not scanned again.
        touched: Paths that changed since `previous` (see `discover_roots`); None:
            scan every root.
        sources: The sources to add for a config (a live session keeps its
            connections open this way); default: the config's MCP servers, listed
            through connections closed again before this returns.
    """
    from ..discovery._discover import discover_roots

    inputs = workspace_inputs(options, cwd=cwd)
    config = inputs.config
    discovered = discover_roots(
        inputs.roots, previous=previous, touched=touched, options=inputs.options
    )
    catalog = discovered.catalog
    if sources is None:
        with _listed_once(config) as added:
            catalog = with_sources(catalog, [s.catalog() for s in added])
    else:
        added = sources(config)
        catalog = with_sources(catalog, [s.catalog() for s in added])
    if inputs.config_problems:
        catalog = Catalog(
            skills=catalog.skills,
            problems=inputs.config_problems + catalog.problems,
            roots=catalog.roots,
        )
    return Workspace(
        catalog=catalog,
        config=config,
        cwd=inputs.cwd,
        discovered=discovered,
        inputs=None if added else inputs.key,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class WorkspaceInputs:
    """What a workspace is opened from, before any skill is looked at."""

    cwd: str
    config: Config
    config_problems: tuple[Problem, ...]
    options: DiscoveryOptions
    """The options given, with what the config decides (`with_config`)."""
    roots: tuple[Root, ...]
    """The roots these options choose."""

    @property
    def key(self) -> str | None:
        """One string naming all of it: two runs with equal keys over unchanged files
        give equal catalogs. None when the config adds skills from elsewhere (its MCP
        servers), which no file under the roots shows."""
        if self.config.mcp_hosts:
            return None
        return repr((self.config, self.config_problems, self.options, self.roots))


def workspace_inputs(
    options: DiscoveryOptions | None = None, *, cwd: str | None = None
) -> WorkspaceInputs:
    """Load the user + project config and choose the roots (`open_workspace`'s first step)."""
    from ..discovery._roots import chosen_roots

    start = os.path.abspath(cwd or os.getcwd())
    given = DEFAULT_OPTIONS if options is None else options
    config, config_problems = load_config(cwd=start, user=given.include_user)
    resolved = with_config(given, config)
    return WorkspaceInputs(
        cwd=start,
        config=config,
        config_problems=tuple(config_problems),
        options=resolved,
        roots=chosen_roots(resolved, cwd=start),
    )


def with_config(options: DiscoveryOptions, config: Config) -> DiscoveryOptions:
    """`options` with what the config decides: its `roots` after the given extra roots
    (those made absolute) unless `options.roots` names the roots exactly, and its
    `[discovery]` bounds, `folders_off` and `repo_skills_dir` where `options` leaves
    them (None)."""
    configured = () if options.roots is not None else tuple(str(r) for r in config.roots)
    return replace(
        options,
        extra_roots=(*(os.path.abspath(r) for r in options.extra_roots), *configured),
        repo_skills_dir=(
            config.repo_skills_dir if options.repo_skills_dir is None else options.repo_skills_dir
        ),
        max_depth=config.max_depth if options.max_depth is None else options.max_depth,
        max_dirs=config.max_dirs if options.max_dirs is None else options.max_dirs,
        folders_off=config.folders_off if options.folders_off is None else options.folders_off,
    )


@contextlib.contextmanager
def _listed_once(config: Config) -> Iterator[Sequence[SkillSource]]:
    """The config's MCP servers as a source, disconnected again on exit."""
    source = mcp_source(config.mcp_hosts)
    try:
        yield [source] if source is not None else []
    finally:
        if source is not None:
            source.close()


def mcp_source(servers: Sequence[McpServerConfig]) -> SkillSource | None:
    """The skills of `[[mcp_servers]]`; None when there are none. Without the `mcp`
    extra, a source whose catalog is one problem naming the fix."""
    if not servers:
        return None
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return _MissingExtra(servers=tuple(servers))
    from ._mcp_skills import McpSkills

    return McpSkills(servers)


class _MissingExtra(FileSystemReader):
    """Stands in for the MCP servers when the SDK is not installed: no skills, a problem."""

    def __init__(self, *, servers: tuple[McpServerConfig, ...]) -> None:
        super().__init__()
        self.servers = servers

    def catalog(self) -> Catalog:
        names = ", ".join(s.name for s in self.servers)
        problem = Problem(
            path=f"mcp://{self.servers[0].name}",
            severity="warning",
            code="mcp-extra-missing",
            message=f"[[mcp_servers]] ({names}) need the official MCP SDK, which is not "
            "installed; run pip install 'skillpack[mcp]'. Their skills are left out.",
        )
        return Catalog(problems=(problem,))

    def owns(self, skill: Skill) -> bool:
        return False

    def close(self) -> None:
        return None


@dataclass(kw_only=True)
class WorkspaceSource:
    """A `_live.IncrementalSource` that re-opens the workspace: config and every scope.

    `Session.open` uses one. Its probe (polled by a watcher, see `discovery._watch`)
    notices what folder events cannot: a skill root appearing in the repo chain or
    the home folder, and an edited config file.
    """

    options: DiscoveryOptions = field(default_factory=DiscoveryOptions)
    """What to discover; its `note_paths` are the first paths noted."""
    cwd: str | None = None
    noted: tuple[str, ...] = ()
    """Folders the host's paths (`note_paths`) brought in, in the order first seen."""
    extra_roots_from: Callable[[], Sequence[str]] | None = None
    """Asked at each discovery for more `extra` roots, after `options.extra_roots`
    (a folder that moves, as an OCI collection's does at each new digest); what it
    answers is part of `probe`, so a live session notices a move as a new root."""
    _config: Config = field(default_factory=Config, init=False, repr=False)
    _last: Workspace | None = field(default=None, init=False, repr=False)
    """The workspace the last `open` returned: the next one starts from its discovery."""
    _known: tuple[Catalog, Catalog, SkillDelta] | None = field(default=None, init=False, repr=False)
    """(catalog before, catalog after, what changed) of the last `open` that knew it."""
    _folders: set[str] = field(default_factory=set, init=False, repr=False)
    """Folders whose paths need no new look (noted, or on cwd's chain)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _mcp: SkillSource | None = field(default=None, init=False, repr=False)
    _files: FileSystemReader | None = field(default=None, init=False, repr=False)
    """The reader of files `reader()` hands out (one, so its digests are shared)."""
    _mcp_servers: tuple[McpServerConfig, ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        if self.options.note_paths:
            self.note_paths(self.options.note_paths)

    def open(self, touched: Collection[str] | None = None) -> Workspace:
        """`open_workspace` with this source's options, starting from the last one's
        discovery: with `touched` (paths changed since), only the roots they touch
        (and new ones) are scanned; None scans every root. Its MCP connections stay
        open (until `close()`), made again when the config's servers change; with
        MCP servers, what changed is worked out from the catalogs (their skills are
        listed again every time)."""
        with self._lock:
            last = self._last
        options = replace(self.options, note_paths=self.noted)
        if self.extra_roots_from is not None:
            options = replace(options, extra_roots=(*options.extra_roots, *self.extra_roots_from()))
        ws = open_workspace(
            options,
            cwd=self.cwd,
            previous=None if last is None else last.discovered,
            touched=touched,
            sources=self._sources_for,
        )
        known = None
        found = ws.discovered
        with self._lock:
            hosted = self._mcp is not None
        if not hosted and last is not None and found is not None and found.delta is not None:
            if (
                last.discovered is not None
                and found.catalog is last.discovered.catalog
                and ws.catalog.problems == last.catalog.problems
            ):
                ws = replace(ws, catalog=last.catalog)  # nothing changed: the same object
            known = (last.catalog, ws.catalog, found.delta)
        with self._lock:
            self._config = ws.config
            self._last = ws
            self._known = known
        return ws

    def opened(self, catalog: Catalog) -> Workspace | None:
        """The workspace this source last opened, when `catalog` is its catalog."""
        with self._lock:
            last = self._last
        return last if last is not None and last.catalog is catalog else None

    def note_paths(self, paths: Sequence[str | os.PathLike[str]]) -> bool:
        """Remember paths the host works on; True when they bring in new folders.

        Cheap when they do not (a path in a folder already noted): no discovery.
        """
        from .._paths import project_dirs
        from ..discovery._roots import noted_dirs

        with self._lock:
            known = self._folders
            fresh = [os.fspath(p) for p in paths if not _within(os.fspath(p), known)]
        if not fresh:
            return False
        chain = project_dirs(os.path.abspath(self.cwd or os.getcwd()))
        new = {folder for folder, _depth in noted_dirs(chain, fresh)}
        with self._lock:
            self._folders.update(new, chain)
            # A path outside the project, or its folder, needs no second look either.
            for path in fresh:
                folder = os.path.abspath(os.path.expanduser(path))
                self._folders.update((folder, os.path.dirname(folder)))
            if not new:
                return False
            self.noted = (*self.noted, *sorted(new))
        return True

    def _sources_for(self, config: Config) -> Sequence[SkillSource]:
        with self._lock:
            hosts = config.mcp_hosts
            if hosts != self._mcp_servers:
                old, self._mcp = self._mcp, mcp_source(hosts)
                self._mcp_servers = hosts
                if old is not None:
                    _close(old)
            return [self._mcp] if self._mcp is not None else []

    def _sources(self) -> Sequence[SkillSource]:
        with self._lock:
            return [self._mcp] if self._mcp is not None else []

    def reader(self) -> SkillReader:
        """Reads each skill from where it came from: the filesystem (file digests kept
        in the index, unless the source does not use it), or its MCP server."""
        with self._lock:
            if self._files is None:
                self._files = FileSystemReader(persist=self.options.use_cache)
            files = self._files
        return RoutingReader(files, self._sources)

    def close(self) -> None:
        """Disconnect the MCP servers and write the file digests read; idempotent."""
        with self._lock:
            old, self._mcp, self._mcp_servers = self._mcp, None, ()
            files = self._files
        if old is not None:
            _close(old)
        if files is not None:
            files.close()

    def load(self) -> tuple[Catalog, Config | None]:
        ws = self.open()
        return ws.catalog, ws.config

    def load_changed(self, touched: Collection[str]) -> tuple[Catalog, Config | None]:
        ws = self.open(touched)
        return ws.catalog, ws.config

    def known_change(self, old: Catalog, new: Catalog) -> SkillDelta | None:
        with self._lock:
            known = self._known
        if known is None or known[0] is not old or known[1] is not new:
            return None
        return known[2]

    def watch_paths(self, catalog: Catalog) -> tuple[str, ...]:
        from ._live import existing_roots  # the refresh machinery: not for one-shot commands

        return existing_roots(catalog)

    def probe(self, catalog: Catalog) -> Hashable:
        from ..discovery._roots import default_roots
        from ._live import existing_roots

        with self._lock:
            config = self._config
        start = os.path.abspath(self.cwd or os.getcwd())
        watched = replace(
            with_config(self.options, config),
            extra_roots=(),
            include_system=False,
            note_paths=self.noted,
        )
        defaults = default_roots(watched, cwd=start)
        files = [project_config_path(start)]
        if self.options.include_user:
            files.append(user_config_path())
        return (
            tuple(root.path for root in defaults),
            tuple(_signature(str(path)) for path in files),
            existing_roots(catalog),
            () if self.extra_roots_from is None else tuple(self.extra_roots_from()),
        )


def _within(path: str, known: set[str]) -> bool:
    """Whether `path`, or the folder holding it, is already known."""
    folder = os.path.abspath(os.path.expanduser(path))
    return folder in known or os.path.dirname(folder) in known


def _signature(path: str) -> tuple[int, int, int] | None:
    """(mtime_ns, ctime_ns, size) of a file, None when it is absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def looks_like_path(ref: str) -> bool:
    return os.sep in ref or "/" in ref or ref.endswith("SKILL.md") or ref in {".", ".."}


def skill_md_path(ref: str) -> str:
    """`ref` as the absolute path of a SKILL.md (a folder means its SKILL.md)."""
    path = os.path.abspath(os.path.expanduser(ref))
    if os.path.isdir(path):
        path = os.path.join(path, "SKILL.md")
    return path


def lookup_skill(catalog: Catalog, ref: str) -> Skill:
    """Find one skill by path, qualified id or bare name, whatever its enable state.

    Raises:
        SkillNotFoundError: nothing matches; the message suggests close names.
        AmbiguousSkillError: a bare name ties between skills of equal precedence.
    """
    if looks_like_path(ref) or os.path.exists(ref):
        path = skill_md_path(ref)
        found = catalog.at_path(path) or catalog.at_path(os.path.realpath(path))
        if found is not None:
            return found
        raise SkillNotFoundError(
            f"No skill at {path} in the discovered roots. "
            "Check the path, or add its folder with --root."
        )
    named = catalog.qualified(ref)
    candidates = best_of(named if ":" in ref else bare_named(named))
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        ids = [c.qualified_name if _unique_qualified(catalog, c) else c.path for c in candidates]
        raise AmbiguousSkillError(
            f"'{ref}' matches {len(candidates)} skills of equal precedence; "
            "name one by qualified id or path:",
            candidates=ids,
        )
    from ..select._resolve import suggest

    close = suggest(ref, catalog)
    did_you_mean = f" Did you mean {', '.join(close)}?" if close else ""
    raise SkillNotFoundError(
        f"No skill named '{ref}'.{did_you_mean}",
        candidates=close,
        hint="Run `skillpack list` to see available skills.",
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Toggled:
    """What `write_enabled` did: the entry written, and the state every config file
    now gives the skill (another file may still decide the other way)."""

    skill: Skill
    requested: bool
    """What was written: True for enable, False for disable."""
    entry: str
    """The `[skills]` entry written (`config_entry`)."""
    scope: ConfigScope
    written: Path
    """The config file written."""
    enabled: bool
    """The resulting state, read back from every config file."""
    decided_by: Path | None
    """The file whose `[skills]` entry decides the state now; None: nothing names
    the skill (the default, enabled)."""

    @property
    def decided_elsewhere(self) -> bool:
        """The written entry does not decide: another file keeps the other state."""
        return self.enabled != self.requested

    def to_dict(self) -> dict[str, Any]:
        """The stable shape `enable`/`disable --json` and `skills.config.write` share."""
        return {
            "name": self.skill.name,
            "qualified_name": self.skill.qualified_name,
            "path": self.skill.path,
            "enabled": self.enabled,
            "target": self.scope,
            "config": str(self.written),
            "decided_by": None if self.decided_by is None else str(self.decided_by),
        }


def write_enabled(
    catalog: Catalog,
    ref: str,
    enabled: bool,
    *,
    scope: ConfigScope,
    cwd: str,
    user: bool = True,
) -> Toggled:
    """Enable or disable the skill `ref` names in the user or project config file,
    then read every config file back: the one place the resulting state is decided.

    The entry is `config_entry(ref, skill)`. `user`: whether the user config counts
    (False for a workspace opened without it).

    Raises:
        SkillNotFoundError, AmbiguousSkillError: `ref` names no single skill.
        UsageError, SkillIOError: the config file is broken or cannot be written.
    """
    from ..config._files import enable_decided_by, set_skill_enabled

    skill = lookup_skill(catalog, ref)
    entry = config_entry(ref, skill)
    written = set_skill_enabled(entry, enabled, scope=scope, cwd=cwd)
    config, _problems = load_config(cwd=cwd, user=user)
    return Toggled(
        skill=skill,
        requested=enabled,
        entry=entry,
        scope=scope,
        written=written,
        enabled=config.is_enabled(skill),
        decided_by=enable_decided_by(skill, cwd=cwd, user=user),
    )


def config_entry(ref: str, skill: Skill) -> str:
    """What a config file lists for `ref`: a qualified id or a path as given, a bare name
    as the skill's name."""
    return ref if (":" in ref or looks_like_path(ref)) else skill.name


def _unique_qualified(catalog: Catalog, skill: Skill) -> bool:
    return best_of(catalog.qualified(skill.qualified_name)) == (skill,)


def _close(source: SkillSource) -> None:
    close = getattr(source, "close", None)
    if close is not None:
        close()
