"""Whether a standard stream is one `skillpack mcp` serves itself (no SDK, no asyncio)."""

from __future__ import annotations

import os
import stat


def is_stream(fd: int) -> bool:
    """Whether `fd` is a pipe, socket or terminal (not a regular file, not closed)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)
