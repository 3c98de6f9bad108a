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
(`MAX_LINE_BYTES`); a line that is too long, not JSON or not JSON-RPC is answered with
a JSON-RPC error (`-32600`, `-32700`), and serving goes on. A request nested deeper
than `MAX_FRAME_DEPTH` reaches the SDK with its deep parts cut (`clip_request`): a tool
call's deep argument is then refused by the tool's check, with the call's id.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from ..runtime._tool_args import clip_request
from ._pipes import is_stream

MAX_LINE_BYTES: Final = 4 * 1024 * 1024
"""The longest request line read (the HTTP transport's body limit too)."""


class _Lines:
    """stdin as the async iterator of request lines `stdio_server` reads.

    A line that is not JSON gets a `-32700` parse error, one that is not a JSON-RPC
    message or is over `MAX_LINE_BYTES` a `-32600`, answered here; the next line is
    read as if nothing happened.
    """

    def __init__(self, reader: asyncio.StreamReader, out: _Out) -> None:
        self._reader = reader
        self._out = out

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                if not end.partial.strip():
                    raise StopAsyncIteration from None
                line = end.partial
            except asyncio.LimitOverrunError as over:
                await self._skip_line(over.consumed)
                await self._error(
                    None, -32600, f"Invalid request: a line over {MAX_LINE_BYTES} bytes"
                )
                continue
            if not line.strip():
                continue
            line = clip_request(line)  # the SDK's parser drops it past 200 levels
            refusal = _refusal(line)
            if refusal is None:
                return line.decode("utf-8", errors="replace")
            await self._error(*refusal)

    async def _error(self, request_id: Any, code: int, message: str) -> None:
        reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        await self._out.write(json.dumps(reply) + "\n")
        await self._out.flush()

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


def _refusal(line: bytes) -> tuple[Any, int, str] | None:
    """(id, code, message) of the error a line gets, None when it is a JSON-RPC message."""
    try:
        message = json.loads(line)
    except ValueError as exc:
        return None, -32700, f"Parse error: {exc}"
    except RecursionError:  # 100,000 nested brackets: the parser's stack, not the line
        return None, -32700, "Parse error: nested too deeply"
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None, -32600, "Invalid request: not a JSON-RPC 2.0 message"
    if "method" not in message and "id" not in message:
        return None, -32600, "Invalid request: neither a method nor an id"
    request_id = message.get("id")
    if "method" in message and not isinstance(message["method"], str):
        valid_id = request_id if isinstance(request_id, str | int) else None
        return valid_id, -32600, "Invalid request: `method` is not a string"
    return None


class _Out:
    """stdout as the `write`/`flush` pair `stdio_server` writes with; the reply to
    `drop_id` (the front's replayed `initialize`, see `_front`) is not written."""

    def __init__(self, writer: asyncio.StreamWriter, drop_id: str | None = None) -> None:
        self._writer = writer
        self._drop = None if drop_id is None else f'"id":{json.dumps(drop_id)},'

    async def write(self, text: str) -> None:
        if self._drop is not None and self._drop in text[:200]:
            self._drop = None  # one reply: the SDK writes it before anything else
            return
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def stdio_streams(
    prefix: bytes = b"", drop_id: str | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """`stdio_server`'s (read, write) stream pair over non-blocking stdin and stdout.

    `prefix` is read before stdin (the stdio front's replay, `_front`), and the
    reply to `drop_id` is not written.
    """
    from mcp.server.stdio import stdio_server

    if not (is_stream(0) and is_stream(1)):
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
    if prefix:
        reader.feed_data(prefix)
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
        out = _Out(writer, drop_id)
        async with stdio_server(_Lines(reader, out), out) as streams:  # type: ignore[arg-type]
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
