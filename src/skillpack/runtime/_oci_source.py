"""Skills from an OCI tag, kept current: what `--from oci://… --poll N` serves.

`OciSource` pulls the collection a reference names into a folder of its digest
(`install._oci_pull`: the install's client, digests and signature policy), hands that
folder to the server's session as an extra root (`roots`, given to `Session.open` as
`extra_roots_from`), and every `poll` seconds resolves the tag again:

- **the same digest**: nothing to do (a failure episode before it ends here);
- **a new digest**: pulled and verified into its own folder while the old one is
  still served; only a complete folder is swapped in, in one step (the session's
  next discovery sees the new folder and none of the old: its catalog is swapped
  whole, and list-changed notifications and the catalog version follow as for any
  change); subscribers are told at once;
- **a failure** (registry down, a refused digest or signature): the last good
  folder stays served; the first failure of an episode is logged once (a warning
  naming the reference and the error), and `state()` says the source is stale (the
  digest served, the last error and when), which `/readyz` shows without turning
  503: the replica still serves.

Folders are shared by the servers of one cache (one per digest): each server holds
a shared lock on the folders it serves (the current one, and after a swap the one
before it until the next check, while a request may still be reading it), and a
folder is removed, with its lock file, only when an exclusive lock on it can be
taken, i.e. when no server serves it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .._errors import SkillIOError, UsageError

if TYPE_CHECKING:
    from ..install._oci_resolve import OciOptions
    from ..install._values import Limits

log = logging.getLogger("skillpack.oci")

MIN_POLL = 1.0
"""Seconds: the shortest `--poll` (a registry asked more often gains nothing)."""

ABANDONED_PULL = 3600.0
"""Seconds after which a pull's temporary folder (`.pull-*`, last changed that long
ago) is taken for one a crashed server left, and removed at a check: a pull that is
still running writes into it far more often than that."""

PollOutcome = Literal["unchanged", "swapped", "failed"]


class Fetcher(Protocol):
    """How a reference is resolved and pulled (a registry, or a test's fake)."""

    def digest(self, reference: str) -> str:
        """The digest the reference names now."""
        ...

    def pull(self, reference: str, digest: str, target: Path) -> None:
        """Write the skills of `digest` into `target`, which ends complete or absent."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class RegistryFetcher:
    """A `Fetcher` over the install's OCI client (`install._oci_pull`)."""

    options: OciOptions
    limits: Limits

    def digest(self, reference: str) -> str:
        from ..install._oci_pull import tag_digest

        return tag_digest(reference, options=self.options, limits=self.limits)

    def pull(self, reference: str, digest: str, target: Path) -> None:
        from ..install._oci_pull import pull_digest

        pull_digest(reference, digest, target=target, options=self.options, limits=self.limits)


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceState:
    """What an `OciSource` serves and how current it is (the `/readyz` detail)."""

    reference: str
    """The reference as given (`oci://REGISTRY/REPO:TAG`)."""
    digest: str
    """The digest of the collection served."""
    poll: float | None
    """Seconds between two checks of the tag (None: pinned, never checked again)."""
    checked_at: float | None
    """When the tag last resolved (epoch seconds), None before the first check."""
    error: str | None = None
    """The last check's error while stale, else None."""
    failing_since: float | None = None
    """When the current failure episode began (epoch seconds)."""
    failed_at: float | None = None
    """When the last check failed (epoch seconds)."""
    failures: int = 0
    """Failed checks in the current episode."""

    @property
    def stale(self) -> bool:
        """The last check failed: the digest served may not be the tag's any more."""
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form `/readyz` shows under `source`."""
        data: dict[str, Any] = {
            "reference": self.reference,
            "digest": self.digest,
            "state": "stale" if self.stale else "fresh",
            "poll": self.poll,
            "checked": _iso(self.checked_at),
        }
        if self.stale:
            data |= {
                "error": self.error,
                "failing_since": _iso(self.failing_since),
                "failed": _iso(self.failed_at),
                "failures": self.failures,
            }
        return data


def _iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def check_poll(reference: str, poll: float | None) -> None:
    """Refuse a `poll` that cannot work for `reference`.

    Raises:
        UsageError: a poll below `MIN_POLL`, or one for a reference pinned by digest
            (it never changes).
    """
    if poll is None:
        return
    if "@" in reference:
        raise UsageError(
            f"--poll checks a tag for a new digest, and {reference} is pinned by digest, "
            "so it never changes; give a tag (oci://REGISTRY/REPO:TAG) or drop --poll."
        )
    if poll < MIN_POLL:
        raise UsageError(
            f"--poll {poll:g} is below {MIN_POLL:g} second; give --poll {MIN_POLL:g} or more "
            "(30 suits a fleet)."
        )


class OciSource:
    """One OCI reference served as skills, re-checked every `poll` seconds."""

    def __init__(
        self,
        reference: str,
        *,
        fetcher: Fetcher,
        base: Path,
        poll: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_poll(reference, poll)
        self.reference = reference
        self.poll = poll
        self._fetcher = fetcher
        self._base = base
        self._clock = clock
        self._lock = threading.Lock()
        self._held: dict[Path, int | None] = {}
        """Folders served (current last), each with its shared lock's descriptor."""
        self._state: SourceState | None = None
        self._subscribers: list[Callable[[], object]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- what is served -------------------------------------------------------------

    def roots(self) -> tuple[str, ...]:
        """The folder served now (empty before `start`): the session's extra root."""
        with self._lock:
            current = list(self._held)[-1:] if self._held else []
        return tuple(str(folder) for folder in current)

    def state(self) -> SourceState:
        """What is served and how current it is.

        Raises:
            UsageError: `start()` has not succeeded yet.
        """
        with self._lock:
            state = self._state
        if state is None:
            raise UsageError(f"{self.reference} has not been pulled yet; call start() first.")
        return state

    def detail(self) -> dict[str, Any]:
        """`state()` as `/readyz` shows it under `source`."""
        return self.state().to_dict()

    def subscribe(self, callback: Callable[[], object]) -> None:
        """Call `callback` (on the polling thread) after each swap (what it returns
        is ignored: a session's `refresh`, for one)."""
        with self._lock:
            self._subscribers.append(callback)

    # -- the first pull and each check ----------------------------------------------

    def start(self) -> None:
        """Resolve the reference and pull its collection: the first catalog.

        Raises:
            SkillIOError: the registry cannot be reached, or refused the reference,
                its digest or its signature (the message says what, where and the fix).
        """
        try:
            digest = self._fetcher.digest(self.reference)
            folder = self._take(digest)
        except Exception as exc:  # the server cannot start without its skills
            raise SkillIOError(
                f"Cannot serve skills from {self.reference}: {exc} A server starts only "
                "with its first pull: fix the reference or the registry (or --verify-key, "
                "for a signed collection), then start it again."
            ) from exc
        with self._lock:
            self._state = SourceState(
                reference=self.reference, digest=digest, poll=self.poll, checked_at=self._clock()
            )
        log.info("skillpack: serving %s at %s from %s", self.reference, digest, folder)
        self._retire()  # what earlier runs left and no server holds

    def check(self) -> PollOutcome:
        """Resolve the tag once: swap in a new digest, or record the failure."""
        self._retire()
        state = self.state()
        try:
            digest = self._fetcher.digest(self.reference)
            if digest == state.digest:
                self._fresh(state, digest, swapped=False)
                return "unchanged"
            self._take(digest)
        except Exception as exc:  # noqa: BLE001 - keep serving the last good catalog
            self._failed(state, exc)
            return "failed"
        self._fresh(state, digest, swapped=True)
        with self._lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one subscriber never stops the polling
                log.exception("skillpack: a subscriber of %s raised", self.reference)
        return "swapped"

    def _fresh(self, state: SourceState, digest: str, *, swapped: bool) -> None:
        if state.stale:
            log.warning(
                "skillpack: %s answers again after %d failed check(s); serving %s",
                self.reference,
                state.failures,
                digest,
            )
        elif swapped:
            log.info("skillpack: %s moved to %s", self.reference, digest)
        with self._lock:
            self._state = SourceState(
                reference=self.reference, digest=digest, poll=self.poll, checked_at=self._clock()
            )

    def _failed(self, state: SourceState, exc: BaseException) -> None:
        now = self._clock()
        error = str(exc) or type(exc).__name__
        if not state.stale:
            log.warning(
                "skillpack: checking %s failed; still serving %s until it answers: %s",
                self.reference,
                state.digest,
                error,
            )
        with self._lock:
            self._state = SourceState(
                reference=self.reference,
                digest=state.digest,
                poll=self.poll,
                checked_at=state.checked_at,
                error=error,
                failing_since=state.failing_since if state.stale else now,
                failed_at=now,
                failures=state.failures + 1,
            )

    def _take(self, digest: str) -> Path:
        """Hold the folder of `digest` and have it complete; it becomes the current one."""
        from ..install._oci_pull import digest_folder

        folder = digest_folder(self._base, digest)
        self._base.mkdir(parents=True, exist_ok=True)
        held = _hold(folder)
        try:
            if not folder.is_dir():
                self._fetcher.pull(self.reference, digest, folder)
            if not folder.is_dir():
                raise SkillIOError(f"the pull of {digest} left no folder at {folder}")
        except BaseException:
            _release(held)
            raise
        with self._lock:
            old = self._held.pop(folder, None)
            self._held[folder] = held
        _release(old)
        return folder

    def _retire(self) -> None:
        """Release every folder but the current one, and remove every folder of the
        cache that no server holds. Run before each check: the folder a swap replaced
        is released one poll period after it, when the session has moved on."""
        with self._lock:
            served = list(self._held)
            dropped = served[:-1]
            for folder in dropped:
                _release(self._held.pop(folder))
            kept = set(self._held)
        if not self._base.is_dir():
            return
        now = time.time()
        for entry in sorted(self._base.iterdir()):
            if entry in kept:
                continue
            if entry.name.endswith(".lock") and not entry.name.startswith("."):
                folder = entry.with_name(entry.name.removesuffix(".lock"))
                if folder not in kept and not folder.exists():
                    _remove_unused(folder)  # the lock file of a pull that never finished
                continue
            if not entry.is_dir():
                continue
            if not entry.name.startswith("."):
                _remove_unused(entry)
            elif entry.name.startswith(".pull-") and _changed_before(entry, now - ABANDONED_PULL):
                shutil.rmtree(entry, ignore_errors=True)

    # -- polling --------------------------------------------------------------------

    def start_polling(self) -> None:
        """Check every `poll` seconds on a daemon thread until `close()` (no poll: none)."""
        if self.poll is None or self._thread is not None:
            return
        interval = self.poll

        def run() -> None:
            while not self._stop.wait(interval):
                try:
                    self.check()
                except Exception:  # noqa: BLE001 - the thread outlives a broken cache folder
                    log.exception("skillpack: checking %s failed unexpectedly", self.reference)

        self._thread = threading.Thread(target=run, name="skillpack-oci-poll", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop polling and release the folders (they stay for the next start)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5)
        with self._lock:
            held, self._held = self._held, {}
        for fd in held.values():
            _release(fd)


# --- the shared locks of served folders (POSIX `flock`; elsewhere folders are kept) ---


def _lock_path(folder: Path) -> Path:
    return folder.with_name(folder.name + ".lock")


def _hold(folder: Path) -> int | None:
    """A shared lock on `folder` (waits while a server removes it); its descriptor.

    The remover deletes the lock file with the folder, so a lock won on a file no
    longer at its path guards nothing: the lock is taken again on the one there now.
    """
    if sys.platform == "win32":
        return None
    import fcntl

    path = _lock_path(folder)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if _still_at(fd, path):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _still_at(fd: int, path: Path) -> bool:
    """Whether the file open as `fd` is still the one at `path`."""
    try:
        there = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def _release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the descriptor drops its lock


def _changed_before(folder: Path, moment: float) -> bool:
    """Whether nothing in `folder` (the folder itself and its entries, one level
    down) changed since `moment` (epoch seconds)."""
    try:
        times = [folder.stat().st_mtime]
        times.extend(entry.stat().st_mtime for entry in folder.iterdir())
    except OSError:
        return False  # gone meanwhile, or unreadable: leave it
    return max(times) < moment


def _remove_unused(folder: Path) -> bool:
    """Remove `folder`, and its lock file, when no server holds it; whether the
    folder is gone. A lock file whose folder is gone and that nobody holds (a pull
    that never finished) is removed the same way."""
    if sys.platform == "win32":
        return False
    import fcntl

    path = _lock_path(folder)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a server serves it
        if not _still_at(fd, path):
            return False  # another server removed it meanwhile
        with contextlib.suppress(OSError):
            shutil.rmtree(folder)
        gone = not folder.exists()
        if gone:
            # Under the exclusive lock: a server waiting to hold the folder wakes on
            # the deleted file, finds it gone from its path and locks the new one.
            with contextlib.suppress(OSError):
                path.unlink()
        return gone
    finally:
        os.close(fd)


def open_oci_source(reference: str, *, poll: float | None, options: OciOptions) -> OciSource:
    """An `OciSource` over the registry, its first pull done and its polling started
    (folders under `_paths.oci_skills_dir()`).

    Raises:
        UsageError: `reference` is not an OCI reference, or `poll` cannot work for it.
        SkillIOError: the first pull failed (see `OciSource.start`).
    """
    from .._paths import oci_skills_dir
    from ..install._oci import parse_reference
    from ..install._values import Limits

    parse_reference(reference)
    given = reference if reference.startswith("oci://") else f"oci://{reference}"
    source = OciSource(
        given,
        fetcher=RegistryFetcher(options=options, limits=Limits()),
        base=oci_skills_dir(),
        poll=poll,
    )
    source.start()
    source.start_polling()
    return source
