"""A lock that serializes read-modify-write of one file across threads and processes.

`file_lock(path)` holds an exclusive lock on `<path>.lock` (created beside the file,
never deleted: deleting it would let two processes lock two different files) for
the duration of a `with` block. POSIX uses `fcntl.flock`, Windows `msvcrt.locking`;
both are released by the OS when the process dies, so a crash never leaves a stale
lock. Within one process a lock per path also serializes threads (`flock` would
not, on some systems, for descriptors of the same process).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .._errors import SkillIOError

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for another writer before giving up with an error."""

_POLL = 0.01
_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(key: str) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(key, threading.Lock())


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def file_lock(
    path: Path | str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Hold the lock of `path` (a file that may not exist yet) inside the block.

    `on_wait` is called once when the lock is held elsewhere and this call starts
    waiting for it (a caller's progress line).

    Raises:
        SkillIOError: the lock file cannot be created, or another writer held the
            lock for longer than `timeout` seconds.
    """
    target = Path(path)
    lock_path = target.with_name(target.name + ".lock")
    key = os.path.abspath(lock_path)
    local = _thread_lock(key)
    deadline = time.monotonic() + timeout
    if not local.acquire(blocking=False):
        if on_wait is not None:
            on_wait()
            on_wait = None
        if not local.acquire(timeout=timeout):
            raise SkillIOError(_busy(target, timeout))
    try:
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise SkillIOError(
                f"Cannot create the lock file {lock_path} ({error.strerror or error}). "
                "Check that its folder is writable."
            ) from error
        try:
            while not _try_lock(fd):
                if on_wait is not None:
                    on_wait()
                    on_wait = None
                if time.monotonic() >= deadline:
                    raise SkillIOError(_busy(target, timeout))
                time.sleep(_POLL)
            try:
                yield
            finally:
                _unlock(fd)
        finally:
            os.close(fd)
    finally:
        local.release()


def _busy(target: Path, timeout: float) -> str:
    return (
        f"Another skillpack process has been writing {target} for over {timeout:g} s; "
        "nothing was changed. Retry when it has finished."
    )
