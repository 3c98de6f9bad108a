"""Atomic file writes: a temp file in the same directory, fsync, `os.replace`.

A reader sees the old file or the new one, never half of either, and a failed
write leaves the old file and no temp file behind. Config files, lock files and
written skills all go through `write_atomic`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .._errors import SkillIOError


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform (Windows).
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str, *, what: str = "config file") -> None:
    """Replace `path` with `text` atomically: the old file or the new, never half.

    `what` names the file in error messages ("config file", "skill file").

    Raises:
        SkillIOError: the directory or file could not be written; `path` is intact
            and no temp file is left behind.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile

        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise SkillIOError(
            f"Cannot create {path.parent} to write {path.name} ({error.strerror or error}). "
            "Check the directory's permissions, then retry."
        ) from error
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(error, OSError):
            raise SkillIOError(
                f"Cannot write {what} {path} ({error.strerror or error}); the old "
                f"file is unchanged. Check the disk and permissions, then retry."
            ) from error
        raise
    _fsync_dir(path.parent)
