"""Watching skill roots for changes: one `watchfiles` thread, debounced.

`RootWatcher` runs one daemon thread over every folder `paths()` names (recursively)
and calls `on_change(touched)` once per burst of file events, after `debounce_ms` of
quiet, with the paths the events named (so the owner can rescan only the roots they
are in: `discover_roots`). Folders that do not exist yet cannot be watched, so every
`poll_ms` the thread also calls `probe()`, a cheap check of what a watch would not see
(a new `.claude/skills`, an edited config file); when its answer changes,
`on_change(touched)` runs too, with the burst's paths (often none: the owner sees the
new roots and the config itself). After each `on_change` the watched folders are
read again, and the watch restarts when they differ. A watch misses what changed
before it took hold, so the first poll after each (re)start calls `on_change(None)`
(anything may have changed) once to catch up. `stop()` ends the thread within about
`step_ms`.

`watchfiles` is an optional dependency (`pip install 'skillpack[watch]'`), imported
when a watcher starts and never otherwise: a session that does not watch costs nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from .._errors import UsageError

Touched = frozenset[str] | None
"""Paths file events named since the last `on_change` (None: anything may have changed)."""

log = logging.getLogger("skillpack.watch")

DEBOUNCE_MS = 150
"""Events closer together than this are one burst: one `on_change()` per burst."""
STEP_MS = 50
"""How often the watch loop looks for events and for `stop()`."""
POLL_MS = 500
"""How often `probe()` runs (new root folders, config edits)."""
FALLBACK_POLL_MS = 300
"""Polling interval when the OS cannot give file events (e.g. inotify watches used up)."""


def import_watchfiles() -> Any:
    """The `watchfiles` module, or a `UsageError` that says how to install it."""
    try:
        import watchfiles
    except ImportError as exc:
        raise UsageError(
            "refresh='watch' needs the optional `watchfiles` package; install it with "
            "`pip install 'skillpack[watch]'`, or use refresh='on_call'."
        ) from exc
    return watchfiles


class RootWatcher:
    """A thread that reports changes under a set of folders (see the module docstring).

    The callables may return `False` to stop the watcher (their owner is gone);
    an exception in one is logged and the watcher goes on.
    """

    def __init__(
        self,
        *,
        paths: Callable[[], Sequence[str] | None],
        on_change: Callable[[Touched], bool | None],
        probe: Callable[[], Hashable] | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        poll_ms: int = POLL_MS,
        name: str = "skillpack-watch",
    ) -> None:
        """Args:
        paths: The folders to watch now (missing ones are left out); None: owner gone.
        on_change: Called on the watcher thread after a burst of events or a new probe,
            with the paths the events named (None: catching up, anything may have changed).
        probe: A cheap fingerprint of what events cannot show (called every `poll_ms`).
        debounce_ms: Longest time events are grouped before `on_change()`.
        step_ms: How often the thread looks for events and `stop()`.
        poll_ms: How often `probe()` runs.
        name: The thread's name.
        """
        self._watchfiles = import_watchfiles()
        self._paths = paths
        self._on_change = on_change
        self._probe = probe
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        self._poll_ms = poll_ms
        self._stop = threading.Event()
        self._polling = False
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        """Start the thread. Changes made before its watch takes hold are caught up
        by one `on_change()` at the first poll (within `poll_ms`)."""
        self._thread.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the watch holds (changes from now on are seen as events)."""
        return self._ready.wait(timeout)

    def stop(self, *, timeout: float = 5.0) -> None:
        """Stop the thread and wait for it; safe to call twice, or from the thread itself."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    # -- the thread ---------------------------------------------------------------

    def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        try:
            return function(*args)
        except Exception:  # noqa: BLE001 - a failing callback never ends the watcher
            log.exception("skillpack watcher: %s failed", getattr(function, "__name__", function))
            return None

    def _fingerprint(self) -> Hashable:
        return None if self._probe is None else self._call(self._probe)

    def _run(self) -> None:
        try:
            # Nothing equals a fresh object: the first poll always catches up on
            # what changed between the caller's discovery and this thread's start.
            last_probe: Hashable = object()
            while not self._stop.is_set():
                paths = self._call(self._paths)
                if paths is None:
                    return
                watched = tuple(sorted(set(paths)))
                last_probe = self._watch(watched, last_probe)
        finally:
            self._ready.set()

    def _watch(self, watched: tuple[str, ...], last_probe: Hashable) -> Hashable:
        """Watch `watched` until its set of folders changes; the last probe seen."""
        if not watched:
            # Nothing to watch yet: probe until a root appears.
            self._ready.set()
            while not self._stop.wait(self._poll_ms / 1000):
                now = self._fingerprint()
                if now != last_probe:
                    if self._call(self._on_change, frozenset()) is False:
                        self._stop.set()
                    return now
            return last_probe
        events = self._watchfiles.watch(
            *watched,
            debounce=self._debounce_ms,
            step=self._step_ms,
            rust_timeout=self._poll_ms,
            yield_on_timeout=True,
            stop_event=self._stop,
            raise_interrupt=False,
            ignore_permission_denied=True,
            force_polling=self._polling or None,
            poll_delay_ms=FALLBACK_POLL_MS,
        )
        first = True
        try:
            for changes in events:
                if self._stop.is_set():
                    break
                now = self._fingerprint()
                touched: Touched = frozenset(path for _change, path in changes)
                if first:
                    # Events before the watch took hold are lost: catch up once
                    # (a refresh that finds nothing new reports nothing).
                    first = False
                    touched = None
                    self._ready.set()
                elif not changes and now == last_probe:
                    continue
                last_probe = now
                if self._call(self._on_change, touched) is False:
                    self._stop.set()
                    break
                paths = self._call(self._paths)
                if paths is None:
                    self._stop.set()
                    break
                if tuple(sorted(set(paths))) != watched:
                    break  # roots appeared or went: watch the new set
        except FileNotFoundError:
            # A root went away before its watch began: read the folders again.
            self._stop.wait(self._step_ms / 1000)
        except OSError as exc:
            # Typically the OS's limit on watched folders: poll instead.
            if self._polling:
                log.warning("skillpack watcher: cannot watch %s (%s)", watched, exc)
                self._stop.wait(self._poll_ms / 1000)
            else:
                log.warning("skillpack watcher: file events unavailable (%s); polling", exc)
                self._polling = True
        finally:
            events.close()
        return last_probe
