"""What a long-running `skillpack` process (a server) changes in the interpreter.

The CLI's entry point tunes the process for a short run (the cyclic collector off). A
server that runs for weeks undoes that, and asks glibc to hand large buffers back to
the system when they are freed: an upstream answer may take up to 22 MiB while it is
read, and after glibc frees one such mmap'd block it raises its threshold, so the next
ones come from the heap of whichever worker thread read them and stay resident there.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

# mallopt(3): M_MMAP_THRESHOLD. A fixed value also stops glibc's dynamic raising of it.
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 1 << 20
"""Blocks of at least this size are mapped on their own and unmapped when freed."""


def settle_for_a_long_run() -> None:
    """Turn the cyclic collector back on and keep large freed buffers off the heap."""
    gc.enable()
    return_large_buffers_to_the_system()


def return_large_buffers_to_the_system() -> bool:
    """Fix glibc's mmap threshold at `MMAP_THRESHOLD_BYTES`; True when it was set.

    Nothing changes off glibc, or when the user set `MALLOC_MMAP_THRESHOLD_` (their
    value stands).
    """
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        os.confstr("CS_GNU_LIBC_VERSION")  # raises off glibc (musl has no such name)
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
    except (ValueError, OSError, AttributeError):
        return False
