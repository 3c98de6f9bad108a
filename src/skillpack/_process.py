"""Child processes skillpack starts: the one way they are reaped."""

from __future__ import annotations

import subprocess


def reap(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait up to `timeout` seconds for a child that was told to stop (its input
    closed, or asked to), kill it if it has not exited by then, and close its output."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
