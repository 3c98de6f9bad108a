"""The server's state: one live catalog per workspace, the sessions opened over them.

A workspace is a working directory (plus extra roots): its repo chain, the user and
system roots and the configured ones, discovered once and kept current by the live
catalog (`Session(refresh="watch")`, which watches the roots and swaps the catalog).
Its changes go to every session opened over it (`Session.refresh(catalog)`) and out as
`skills/changed`. Workspaces and sessions are bounded: the least recently used
workspace without sessions is closed past `max_workspaces`; sessions unused for
`session_idle` seconds are closed, and a `session.open` that finds `max_sessions`
open takes the place of the least recently used session with no request in flight
(`_room.SessionRoom`, the rule `skillpack mcp` keeps too), chosen and replaced under
one lock; it is refused (`session-limit`) only while every session has a request in
flight (`Live.busy`). Every method is safe to call from the server's worker threads.

With grants (JWT auth), a caller sees a workspace through its grant (`Live.view`): a
session of the workspace restricted to it (`Session(grant=...)`, kept per grant by
`runtime._granted`), with its own tools and listing. A session opened by
one grant is not found by another, and change notifications list only what each
listener's grant may see.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._model import Catalog, Skill
from .._room import SessionRoom
from ..config._schema import Config
from ..discovery._options import DiscoveryOptions
from ..runtime._granted import Granted
from ..runtime._session import Session
from ..runtime._summary import summarizer
from ..runtime._tools import SkillTools
from ._codes import RPC_CODES, ParamError, RpcFailure

if TYPE_CHECKING:
    from ..runtime._live import CatalogChange, RefreshMode
    from ..select._grants import SkillGrant

Notify = Callable[..., None]
"""`Hub.publish`: (method, params, scoped=(grant -> params) or None)."""

WorkspaceKey = tuple[str, tuple[str, ...]]


def default_refresh() -> RefreshMode:
    """`watch` when `watchfiles` is installed (the `rpc` extra brings it), else `on_call`."""
    import importlib.util

    return "watch" if importlib.util.find_spec("watchfiles") is not None else "on_call"


@dataclass(frozen=True, kw_only=True, slots=True)
class Discovery:
    """How the server discovers every workspace (from `skillpack serve`'s options)."""

    cwd: str
    """The default working directory."""
    options: DiscoveryOptions = field(default_factory=DiscoveryOptions)
    """What every workspace discovers (`--root`, `--no-user`, `--max-dirs`, ...); a
    workspace's own extra roots are added after its `extra_roots`."""
    refresh: RefreshMode = "watch"
    """How workspaces stay current: `watch` (files watched), else `on_call`."""
    extra_roots_from: Callable[[], Sequence[str]] | None = None
    """More `extra` roots asked at each discovery of every workspace (`--from`: the
    folder of the OCI collection served; `Session.open(extra_roots_from=)`)."""


@dataclass(kw_only=True, eq=False)
class GrantView:
    """A workspace as one grant sees it: a session restricted to it, its tools and
    its `skills.list` entry (the same fields as `Workspace` has for them)."""

    cwd: str
    live: Session
    tools: SkillTools
    listing: tuple[Catalog, Config, bytes] | None = None


@dataclass(kw_only=True, eq=False)
class Workspace:
    """One working directory's live catalog and the sessions over it."""

    cwd: str
    extra_roots: tuple[str, ...]
    live: Session
    """The watching session: its catalog is the workspace's."""
    tools: SkillTools
    """Tools over `live`, for calls made without a session."""
    unsubscribe: Callable[[], None]
    sessions: set[str] = field(default_factory=set)
    used: float = 0.0
    listing: tuple[Catalog, Config, bytes] | None = None
    """`skills.list`'s entry, encoded, with the catalog and config it was made from."""
    granted: Granted[GrantView] = field(init=False)
    """The views of the grants that asked (`runtime._granted`)."""

    def __post_init__(self) -> None:
        cwd = self.cwd
        self.granted = Granted(
            self.live,
            build=lambda session: GrantView(cwd=cwd, live=session, tools=SkillTools(session)),
            session_of=lambda view: view.live,
        )


@dataclass(kw_only=True, eq=False)
class OpenSession:
    """A conversation opened with `session.open`."""

    id: str
    session: Session
    tools: SkillTools
    workspace: Workspace
    used: float = 0.0
    grant: SkillGrant | None = None
    """The grant of the caller that opened it: only that grant finds it."""
    in_flight: int = 0
    """Requests naming it that have not finished (`Live.busy`)."""


class Live:
    """The workspaces and sessions of one server."""

    def __init__(
        self,
        discovery: Discovery,
        *,
        notify: Notify,
        max_workspaces: int = 32,
        max_sessions: int = 256,
        session_idle: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.discovery = discovery
        self._notify = notify
        self._max_workspaces = max_workspaces
        self._room = session_room(max_sessions)
        self._session_idle = session_idle
        self._clock = clock
        self._lock = threading.Lock()
        self._opening = threading.Lock()  # discovery of a new workspace, one at a time
        self._workspaces: dict[WorkspaceKey, Workspace] = {}
        self._sessions: dict[str, OpenSession] = {}
        self._closed = False

    # -- workspaces ---------------------------------------------------------------

    def workspace(
        self, cwd: str | None = None, extra_roots: Sequence[str] = (), *, field_name: str = "cwd"
    ) -> Workspace:
        """The workspace of `cwd` (default: the server's), discovering it on first use."""
        key = self._key(cwd, extra_roots, field_name)
        with self._lock:
            found = self._workspaces.get(key)
            if found is not None:
                found.used = self._clock()
                return found
        with self._opening:
            with self._lock:
                found = self._workspaces.get(key)
                if found is not None:
                    return found
            created = self._open_workspace(*key)
            with self._lock:
                self._workspaces[key] = created
                created.used = self._clock()
                evicted = self._evict_workspaces()
        for workspace in evicted:
            _close_workspace(workspace)
        return created

    def workspaces(self, cwd: str | None = None) -> list[Workspace]:
        """Every open workspace, or those of `cwd` (opening it when none is)."""
        if cwd is None:
            with self._lock:
                return list(self._workspaces.values())
        key_cwd = self._key(cwd, (), "cwd")[0]
        with self._lock:
            found = [w for w in self._workspaces.values() if w.cwd == key_cwd]
        return found or [self.workspace(cwd)]

    def view(self, workspace: Workspace, grant: SkillGrant | None) -> Workspace | GrantView:
        """`workspace` as `grant` sees it (None: the workspace itself), on its current
        catalog and config."""
        if grant is None:
            return workspace
        return workspace.granted.get(grant)

    def refresh(self, workspace: Workspace, grant: SkillGrant | None = None) -> dict[str, Any]:
        """Re-discover now; subscribers hear of a difference. Returns the change, as
        `grant` may see it."""
        change = workspace.live.refresh()
        return self.change_summary(workspace, change, grant)

    def reconfigure(self) -> None:
        """Re-read the config files in every workspace (after `skills.config.write`)."""
        for workspace in self.workspaces():
            workspace.live.refresh()

    def _key(self, cwd: str | None, extra_roots: Sequence[str], field_name: str) -> WorkspaceKey:
        path = os.path.abspath(cwd) if cwd else self.discovery.cwd
        if not os.path.isdir(path):
            raise ParamError(field_name, f"is not a folder: {path}")
        roots = []
        for index, root in enumerate(extra_roots):
            if not os.path.isabs(root):
                raise ParamError(f"extra_roots[{index}]", f"must be an absolute path: {root}")
            roots.append(os.path.normpath(root))
        return path, tuple(roots)

    def _open_workspace(self, cwd: str, extra_roots: tuple[str, ...]) -> Workspace:
        d = self.discovery
        options = d.options
        if extra_roots:
            options = replace(options, extra_roots=(*options.extra_roots, *extra_roots))
        live = Session.open(
            cwd=cwd, options=options, refresh=d.refresh, extra_roots_from=d.extra_roots_from
        )
        workspace = Workspace(
            cwd=cwd,
            extra_roots=extra_roots,
            live=live,
            tools=SkillTools(live),
            unsubscribe=lambda: None,
        )
        workspace.unsubscribe = live.subscribe(lambda change: self._changed(workspace, change))
        return workspace

    def _evict_workspaces(self) -> list[Workspace]:
        """Past the cap, drop the least recently used workspaces that have no sessions."""
        spare = sorted(
            (w for w in self._workspaces.values() if not w.sessions), key=lambda w: w.used
        )
        evicted = []
        while len(self._workspaces) > self._max_workspaces and spare:
            workspace = spare.pop(0)
            del self._workspaces[(workspace.cwd, workspace.extra_roots)]
            evicted.append(workspace)
        return evicted

    def _changed(self, workspace: Workspace, change: CatalogChange) -> None:
        """A live catalog swapped (on the watcher's thread, or a refresh's caller)."""
        with self._lock:
            if self._workspaces.get((workspace.cwd, workspace.extra_roots)) is not workspace:
                return  # replaced or closed meanwhile
            sessions = [self._sessions[s] for s in workspace.sessions if s in self._sessions]
        for entry in sessions:
            entry.session.refresh(change.catalog)
        self._notify(
            "skills/changed",
            self.change_summary(workspace, change),
            scoped=lambda grant: self.change_summary(workspace, change, grant),
        )

    def change_summary(
        self,
        workspace: Workspace,
        change: CatalogChange | None,
        grant: SkillGrant | None = None,
    ) -> dict[str, Any]:
        """The `Change` shape: the workspace and the skills added, removed or changed
        (those `grant` opens, when given)."""

        live = workspace.live
        summary = summarizer(live.config, live.skills.is_enabled)

        def listed(skills: Sequence[Skill]) -> list[dict[str, Any]]:
            return [summary(s) for s in skills if grant is None or grant.allows(s)]

        return {
            "cwd": workspace.cwd,
            "extra_roots": list(workspace.extra_roots),
            "added": listed(change.added) if change else [],
            "removed": listed(change.removed) if change else [],
            "changed": listed(change.changed) if change else [],
            "config_changed": change.config_changed if change else False,
        }

    # -- sessions -----------------------------------------------------------------

    def open_session(
        self,
        cwd: str | None,
        extra_roots: Sequence[str] = (),
        *,
        grant: SkillGrant | None = None,
        held: bool = False,
    ) -> OpenSession:
        """A new session over the live catalog of `cwd`, as `grant` sees it; when
        `max_sessions` are open, in the place of the least recently used one with no
        request in flight (module docstring). `held`: the session is busy from its
        admission (the request opening it is in flight) until `release(entry)`.

        Raises:
            RpcFailure: `session-limit` when `max_sessions` are open, each with a
                request in flight.
        """
        self._close_idle()
        workspace = self.workspace(cwd, extra_roots)
        session = workspace.live.conversation(grant=grant)
        entry = OpenSession(
            id=session.session_id,
            session=session,
            tools=SkillTools(session),
            workspace=workspace,
            used=self._clock(),
            grant=grant,
            in_flight=1 if held else 0,
        )
        with self._lock:  # the place chosen and taken at once: no two openers share one
            evicted = self._room.choose(
                self._sessions, last_used=lambda s: s.used, busy=lambda s: s.in_flight > 0
            )
            if evicted is not None:
                self._forget(evicted)
            elif self._room.full(self._sessions):
                raise RpcFailure(
                    RPC_CODES["session-limit"],
                    f"{len(self._sessions)} sessions are open, the most this server keeps "
                    "(--max-sessions), and each has a request in flight; retry when one "
                    "finishes, and close finished sessions with session.close.",
                )
            self._sessions[entry.id] = entry
            workspace.sessions.add(entry.id)
        return entry

    def session(self, session_id: str, grant: SkillGrant | None = None) -> OpenSession:
        """The open session `session_id`, when `grant` opened it.

        Raises:
            RpcFailure: `session-not-found` (also for a session another grant opened).
        """
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None and entry.grant == grant:
                entry.used = self._clock()
                return entry
        raise RpcFailure(
            RPC_CODES["session-not-found"],
            f"No open session {session_id!r}: it was closed, expired after being idle, or "
            "belongs to another server. Open one with session.open.",
            data={"field": "session"},
        )

    @contextmanager
    def busy(self, session_id: str, grant: SkillGrant | None = None) -> Iterator[None]:
        """Hold the session `grant` opened as busy (a request in flight) for the
        block: a full table never closes it meanwhile. Nothing is held when there is
        no such session (the request then finds none)."""
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None and entry.grant != grant:
                entry = None
            if entry is not None:
                entry.in_flight += 1
                entry.used = self._clock()
        try:
            yield
        finally:
            if entry is not None:
                self.release(entry)

    def release(self, entry: OpenSession) -> None:
        """End a request in flight on `entry` (`busy`, `open_session(held=True)`): it
        was last used now."""
        with self._lock:
            entry.in_flight -= 1
            entry.used = self._clock()

    def close_session(self, session_id: str, grant: SkillGrant | None = None) -> bool:
        """Close a session `grant` opened; False when there is none."""
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is None or entry.grant != grant:
                return False
            self._forget(session_id)
        return True

    def _forget(self, session_id: str) -> None:
        """Take a session out of the table (the caller holds the lock)."""
        entry = self._sessions.pop(session_id, None)
        if entry is not None:
            entry.workspace.sessions.discard(session_id)

    def all_sessions(self) -> list[OpenSession]:
        with self._lock:
            return list(self._sessions.values())

    def _close_idle(self) -> None:
        cutoff = self._clock() - self._session_idle
        with self._lock:
            idle = [
                s
                for s, entry in self._sessions.items()
                if entry.used < cutoff and not entry.in_flight
            ]
            for session_id in idle:
                self._forget(session_id)

    # -- shutdown -----------------------------------------------------------------

    def close(self) -> None:
        """Stop every watcher and forget every session (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workspaces = list(self._workspaces.values())
            self._workspaces.clear()
            self._sessions.clear()
        for workspace in workspaces:
            _close_workspace(workspace)


def session_room(cap: int) -> SessionRoom:
    """The rule of the server's full session table (`_room`), in its words."""
    return SessionRoom(
        cap=cap,
        log=logging.getLogger("skillpack.rpc"),
        evicting=(
            f"skillpack serve: {cap} sessions are open (the most it keeps, --max-sessions); "
            "each session.open takes the place of the least recently used idle session, "
            "whose id then answers session-not-found. Clients that close finished sessions "
            "with session.close avoid this."
        ),
        refusing=(
            f"skillpack serve: {cap} sessions are open, each with a request in flight; "
            "session.open is refused (session-limit) until one finishes."
        ),
    )


def _close_workspace(workspace: Workspace) -> None:
    workspace.unsubscribe()
    workspace.live.close()
