"""The stdio transport: one JSON message per line on stdin, replies and notifications
one per line on stdout.

Requests run on worker threads, so a slow one never holds up the next and replies
can come out of order (match them by `id`). A line is read at most 4 MiB at a time:
a longer one is answered with `message-too-large` and skipped to its end without being
held in memory. At most `max_pending` requests wait at once; the reader stops reading
until one finishes, so a flood cannot grow memory. End of input ends the server once
the requests under way are answered.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

from ._codes import RPC_CODES
from ._dispatch import Dispatcher, Hub
from ._frame import MAX_MESSAGE_BYTES, error_frame

_SKIP_CHUNK = 64 * 1024


def read_frame(stream: BinaryIO, limit: int = MAX_MESSAGE_BYTES) -> bytes | None:
    """The next line without its line break, `b""` for a blank or over-long line
    (the rest of which is read and dropped), None at end of input."""
    line = stream.readline(limit + 1)
    if not line:
        return None
    if line.endswith(b"\n"):
        return line.rstrip(b"\r\n")
    if len(line) <= limit:
        return line  # the last line, without a line break
    while line and not line.endswith(b"\n"):
        line = stream.readline(_SKIP_CHUNK)
    raise FrameTooLarge


class FrameTooLarge(Exception):
    """A line longer than the limit was skipped."""


def serve_stdio(
    dispatcher: Dispatcher,
    hub: Hub,
    *,
    stdin: BinaryIO,
    stdout: BinaryIO,
    workers: int = 8,
    max_pending: int = 64,
    max_message: int = MAX_MESSAGE_BYTES,
) -> None:
    """Serve until stdin ends (or stdout closes)."""
    write_lock = threading.Lock()
    closed = threading.Event()

    def write(frame: bytes) -> None:
        if closed.is_set():
            return
        with write_lock:
            try:
                stdout.write(frame + b"\n")
                stdout.flush()
            except (BrokenPipeError, ValueError, OSError):
                closed.set()  # the client is gone: stop writing, stop reading

    unsubscribe = hub.subscribe(lambda _method, frame: write(frame))
    pending = threading.BoundedSemaphore(max_pending)

    def work(frame: bytes) -> None:
        try:
            reply = dispatcher.handle(frame)
            if reply is not None:
                write(reply)
        finally:
            pending.release()

    too_large = error_frame(
        None,
        RPC_CODES["message-too-large"],
        f"Message too large: a message may hold at most {max_message} bytes; it was "
        "skipped. Split the request, or send large text in several turns.",
    )
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="skillpack-rpc") as pool:
        try:
            while not closed.is_set():
                try:
                    frame = read_frame(stdin, max_message)
                except FrameTooLarge:
                    write(too_large)
                    continue
                if frame is None:
                    break
                if not frame.strip():
                    continue
                pending.acquire()
                pool.submit(work, frame)
        finally:
            unsubscribe()
