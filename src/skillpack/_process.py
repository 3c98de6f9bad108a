"""Child processes skillpack starts: the one way they are told to stop and reaped."""

from __future__ import annotations

import contextlib
import subprocess


def close_input(process: subprocess.Popen[bytes]) -> None:
    """Close the child's input, which tells a child that reads it to exit; closing a
    pipe the child already closed is no error."""
    stdin = process.stdin
    if stdin is not None and not stdin.closed:
        with contextlib.suppress(OSError):
            stdin.close()


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
