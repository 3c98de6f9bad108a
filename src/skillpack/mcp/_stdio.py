"""stdin/stdout for `skillpack mcp`, read and written on the event loop itself.

The SDK's `stdio_server` wraps the standard streams with `anyio.wrap_file`, so every
line read and every reply written takes a trip to a worker thread: four thread
switches per request, which on a busy machine cost more than most requests. Here the
same streams are asyncio pipes, handed to `stdio_server` as its explicit `stdin` and
`stdout` (everything else — message parsing, the stream pair — stays the SDK's).

As the SDK does, file descriptors 0 and 1 are pointed away while serving (0 at the
null device, 1 at stderr), so a stray `print` or a child process never writes into
the protocol; both come back on exit. When stdin or stdout is not a pipe, socket or
terminal (a regular file), the SDK's own transport serves instead. Lines are bounded
(`MAX_LINE_BYTES`): a longer one is dropped and answered as a parse error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

MAX_LINE_BYTES: Final = 4 * 1024 * 1024
"""The longest request line read (the HTTP transport's body limit too)."""


class _Lines:
    """stdin as the async iterator of text lines `stdio_server` reads."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                if not end.partial:
                    raise StopAsyncIteration from None
                line = end.partial
            except asyncio.LimitOverrunError as over:
                await self._skip_line(over.consumed)
                return "\x00 request line over the size limit"  # not JSON: a parse error
            return line.decode("utf-8", errors="replace")

    async def _skip_line(self, consumed: int) -> None:
        await self._reader.readexactly(consumed)
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as over:
                await self._reader.readexactly(over.consumed)
            except asyncio.IncompleteReadError:
                return


class _Out:
    """stdout as the `write`/`flush` pair `stdio_server` writes with."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _is_stream(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """`stdio_server`'s (read, write) stream pair over non-blocking stdin and stdout."""
    from mcp.server.stdio import stdio_server

    if not (_is_stream(0) and _is_stream(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    saved = (os.dup(0), os.dup(1))  # to put fds 0 and 1 back
    blocking = (os.get_blocking(0), os.get_blocking(1))
    wire_in, wire_out = os.dup(0), os.dup(1)  # the protocol's ends, for asyncio
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    read_transport: Any = None
    write_transport: Any = None
    try:
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        async with stdio_server(_Lines(reader), _Out(writer)) as streams:  # type: ignore[arg-type]
            yield streams
        with contextlib.suppress(Exception):
            await writer.drain()
    finally:
        for transport in (read_transport, write_transport):
            if transport is not None:
                transport.close()
        for fd, original, was_blocking in zip((0, 1), saved, blocking, strict=True):
            with contextlib.suppress(OSError):
                os.dup2(original, fd)
                os.set_blocking(fd, was_blocking)  # the pipe may be shared (a terminal)
                os.close(original)
