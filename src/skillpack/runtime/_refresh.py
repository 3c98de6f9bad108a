"""A session's catalog kept current: refresh modes, the atomic swap, subscribers, the watcher.

`LiveCatalog` holds the catalog and the config a `Session` works on and replaces them
whole when its `CatalogSource` (`_live.py`) finds a change: on `refresh()`, before a
tool call or a turn in `"on_call"` mode (at most every `refresh_interval` seconds), or
after file events in `"watch"` mode, where a `discovery._watch.RootWatcher` thread
names the paths that changed so that only the roots holding them are scanned again.
Subscribers hear of each swap with a `CatalogChange`, on the thread that refreshed.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from .._errors import SkillIOError, UsageError
from .._model import Catalog, Skill
from .._paths import project_root
from ..config._schema import Config
from ..select._paths_gate import paths_match
from ._live import (
    REFRESH_MODES,
    CatalogChange,
    CatalogSource,
    IncrementalSource,
    RefreshMode,
    diff_catalogs,
    fingerprint_paths,
    stat_fingerprint,
)
from ._permissions import PermissionGate

if TYPE_CHECKING:
    from ..discovery._discover import SkillDelta
    from ..discovery._watch import RootWatcher
    from ..select._grants import SkillGrant


def _log_exception(message: str) -> None:
    """Log the exception being handled on the `skillpack.session` logger (`logging` is
    imported here, when something failed: a session opens without it)."""
    import logging

    logging.getLogger("skillpack.session").exception(message)


def check_refresh(mode: str, source: CatalogSource | None) -> RefreshMode:
    """`mode` as a refresh mode; a `UsageError` when it is unknown, or live without
    a source to re-discover with."""
    if mode not in REFRESH_MODES:
        raise UsageError(f"Unknown refresh mode {mode!r}; use one of {', '.join(REFRESH_MODES)}.")
    if mode != "manual" and source is None:
        raise UsageError(
            f"refresh={mode!r} needs a way to re-discover skills: pass `loader=` "
            "(or `source=`), or open the session with Session.open()."
        )
    return mode  # type: ignore[return-value]


class LiveCatalog:
    """The catalog and config of one session, swapped whole when they change.

    `catalog` and `config` are read without a lock (each read sees one whole value);
    a swap takes the session's lock, and refreshes are serialized among themselves,
    so subscribers hear of changes in the order they were made. A new config's
    permission rules go to the session's gate in the same swap.
    """

    def __init__(
        self,
        catalog: Catalog,
        config: Config,
        *,
        source: CatalogSource | None,
        mode: str,
        interval: float,
        lock: threading.RLock,
        gate: PermissionGate,
        grant: SkillGrant | None = None,
        cwd: str | None = None,
    ) -> None:
        self._grant = grant
        self.given = catalog
        """The last catalog swapped in, whole: `catalog` is it restricted to the
        session's grant (the same catalog without a grant)."""
        self.catalog = catalog if grant is None else grant.restrict(catalog)
        self.config = config
        self._cwd = cwd
        self._noted: dict[str, None] = {}
        """The paths the host noted (real, absolute), in the order first noted."""
        self._open: frozenset[str] = frozenset()
        """Keys of the `paths:` skills of `catalog` a noted path matches."""
        self.source = source
        self.mode: RefreshMode = check_refresh(mode, source)
        self._interval = max(0.0, float(interval))
        self._lock = lock
        self._gate = gate
        self._refreshing = threading.RLock()
        self._subscribers: list[Callable[[CatalogChange], None]] = []
        self._next_check = 0.0
        self._fingerprint: list[object] | None = None
        self._fingerprinted: tuple[Catalog, tuple[tuple[str, ...], tuple[str, ...]]] | None = None
        self._probe: object = None
        if self.mode == "auto":
            self._remember(catalog)
        self._watcher: RootWatcher | None = None
        self._closed = False

    # -- refreshing ------------------------------------------------------------------

    def refresh(self, touched: Collection[str] | None = None) -> CatalogChange | None:
        """Re-discover, swap and notify; `touched` are the paths a watcher saw change
        (None: any), so that only the roots holding them are scanned again."""
        source = self.source
        if source is None:
            raise SkillIOError(
                "This session has no loader to re-discover skills with; "
                "pass the new catalog to refresh(catalog) or open it with Session.open()."
            )
        with self._refreshing:
            known = None
            if not isinstance(source, IncrementalSource):
                catalog, config = source.load()
            else:
                loaded = source.load() if touched is None else source.load_changed(touched)
                catalog, config = loaded
                known = source.known_change(self.catalog, catalog)
            change = self._swap(catalog, config, known)
            if self.mode == "auto":
                self._remember(self.catalog)
            self._notify(change)
        return change

    def reload(self, catalog: Catalog) -> CatalogChange | None:
        """Swap in `catalog` (the config stays) and notify; the change, if any."""
        with self._refreshing:
            change = self._swap(catalog, None)
            self._notify(change)
        return change

    def ensure_fresh(self) -> None:
        """`refresh()` in `"on_call"` mode when the last one is `interval` old; in
        `"auto"` mode, only when the catalog's `stat_fingerprint` or the source's
        probe (config files, roots appearing) changed since the last look. A failure
        is logged and the catalog kept."""
        mode = self.mode
        if mode != "on_call" and mode != "auto":
            return
        now = time.monotonic()
        with self._lock:
            if now < self._next_check:
                return
            self._next_check = now + self._interval
        try:
            if mode == "auto":
                with self._refreshing:
                    if self._looks_unchanged(self.catalog):
                        return
                    self.refresh()
                return
            self.refresh()
        except Exception:  # noqa: BLE001 - keep serving the catalog we have
            _log_exception("skillpack: re-discovering skills failed; the catalog is unchanged")

    def _paths(self, catalog: Catalog) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """`catalog`'s `fingerprint_paths`, worked out once per catalog."""
        known = self._fingerprinted
        if known is None or known[0] is not catalog:
            known = self._fingerprinted = (catalog, fingerprint_paths(catalog))
        return known[1]

    def _remember(self, catalog: Catalog) -> None:
        """Note what `"auto"` compares next time: `catalog`'s files and the probe."""
        self._fingerprint = stat_fingerprint(self._paths(catalog))
        self._probe = self.source.probe(catalog) if self.source is not None else None

    def _looks_unchanged(self, catalog: Catalog) -> bool:
        source = self.source
        return self._fingerprint == stat_fingerprint(self._paths(catalog)) and (
            source is None or self._probe == source.probe(catalog)
        )

    def note_paths(self, paths: Sequence[str | os.PathLike[str]]) -> CatalogChange | None:
        """Note `paths`: hand them to the source (refresh when they bring in new folders)
        and open the `paths:` skills they match. A change that only opens skills is
        told to subscribers with those skills as `changed`."""
        if not paths:
            return None
        with self._refreshing:
            fresh = [os.path.realpath(os.fspath(p)) for p in paths]
            with self._lock:
                fresh = [p for p in dict.fromkeys(fresh) if p not in self._noted]
                self._noted.update(dict.fromkeys(fresh))
                before = self._open
            change = None
            source = self.source
            if source is not None and source.note_paths([os.fspath(p) for p in paths]):
                change = self.refresh()
            if not fresh:
                return change
            opened = self._opened_in(self.catalog)
            with self._lock:
                self._open = opened
            newly = opened - before
            if change is not None or not newly:
                return change
            catalog = self.catalog
            change = CatalogChange(
                catalog=catalog,
                added=(),
                removed=(),
                changed=tuple(s for s in catalog.skills if s.key in newly),
            )
            self._notify(change)
            return change

    def paths_open(self, skill: Skill) -> bool:
        """Whether `skill` may join the model's catalog as far as its `paths:` globs go:
        it has none, or a noted path matches one."""
        return not skill.paths or skill.key in self._open

    @property
    def opened_any(self) -> bool:
        """Whether a noted path opened some `paths:` skill of the catalog."""
        return bool(self._open)

    def _opened_in(self, catalog: Catalog) -> frozenset[str]:
        """Keys of `catalog`'s `paths:` skills that a noted path matches."""
        with self._lock:
            noted = tuple(self._noted)
        if not noted:
            return frozenset()
        gated = [s for s in catalog.skills if s.paths]
        if not gated:
            return frozenset()
        base = str(project_root(self._cwd)) if self._cwd else str(project_root())
        prefix = base.rstrip(os.sep) + os.sep
        relative = [
            (p[len(prefix) :] if p.startswith(prefix) else p).replace(os.sep, "/") for p in noted
        ]
        return frozenset(s.key for s in gated if paths_match(s.paths, relative))

    def _swap(
        self, catalog: Catalog, config: Config | None, known: SkillDelta | None = None
    ) -> CatalogChange | None:
        """Put `catalog` (and `config`) in place unless nothing differs; the change
        (`known`: the skills' change, when the source worked it out).

        Callers hold `_refreshing`, so the catalog cannot change meanwhile: the
        comparison runs outside the lock and readers are held up only by the swap.
        """
        config_changed = config is not None and config != self.config
        if catalog is self.given and not config_changed:
            return None
        given, grant = catalog, self._grant
        if grant is not None:
            # The one place a grant hides skills: every view of the session reads this
            # catalog, so a hidden skill is absent from all of them alike.
            catalog, known = grant.restrict(catalog), None
        change = diff_catalogs(self.catalog, catalog, config_changed=config_changed, known=known)
        if change is None:
            if grant is not None:
                self.given = given  # the restricted catalog in place stays
            return None  # the catalog in place stays (searches keyed on it stay warm)
        opened = self._opened_in(catalog)
        with self._lock:
            self.given = given
            self.catalog = catalog
            self._open = opened
            if config is not None and config_changed:
                self.config = config
                self._gate.use_rules(config.permissions)
        return change

    # -- subscribers -----------------------------------------------------------------

    def subscribe(self, callback: Callable[[CatalogChange], None]) -> Callable[[], None]:
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def _notify(self, change: CatalogChange | None) -> None:
        if change is None:
            return
        with self._lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(change)
            except Exception:  # noqa: BLE001 - one subscriber never breaks the others
                _log_exception("skillpack: a catalog subscriber raised; it stays subscribed")

    # -- the mode and the watcher ----------------------------------------------------

    def start_watching(self) -> None:
        """Start the watcher of a session created in `"watch"` mode."""
        self._watcher = _start_watcher(self)

    def set_mode(self, refresh: RefreshMode) -> None:
        """Switch modes: `"watch"` starts the watcher, another mode stops it."""
        mode = check_refresh(refresh, self.source)
        with self._lock:
            if self._closed:
                raise UsageError("This session is closed; open a new one to refresh it live.")
            self.mode = mode
            start = mode == "watch" and self._watcher is None
            stopped = None
            if mode != "watch":
                stopped, self._watcher = self._watcher, None
        if stopped is not None:
            stopped.stop()
        if mode == "auto":
            with self._refreshing:
                self._remember(self.catalog)
        if not start:
            return
        watcher = _start_watcher(self)
        with self._lock:
            keep = not self._closed and self._watcher is None and self.mode == "watch"
            if keep:
                self._watcher = watcher
        if not keep:
            watcher.stop()  # closed, or switched again, meanwhile

    def close(self) -> None:
        """Stop the watcher and live refreshing, close the source; idempotent."""
        with self._lock:
            self._closed = True
            self.mode = "manual"
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
        close_source = getattr(self.source, "close", None)
        if close_source is not None:
            close_source()  # e.g. the MCP servers of `[[mcp_servers]]`


def _start_watcher(live: LiveCatalog) -> RootWatcher:
    """A running watcher for `live` that holds it weakly: a session dropped without
    `close()` (and its catalog with it) stops its watcher at the next poll."""
    from ..discovery._watch import RootWatcher

    ref = weakref.ref(live)

    def paths() -> tuple[str, ...] | None:
        held = ref()
        if held is None or held._closed or held.source is None:
            return None
        return held.source.watch_paths(held.catalog)

    def on_change(touched: Collection[str] | None) -> bool:
        held = ref()
        if held is None or held._closed:
            return False
        held.refresh(touched)
        return True

    def probe() -> object:
        held = ref()
        if held is None or held.source is None:
            return None
        return held.source.probe(held.catalog)

    watcher = RootWatcher(paths=paths, on_change=on_change, probe=probe)
    watcher.start()
    return watcher
