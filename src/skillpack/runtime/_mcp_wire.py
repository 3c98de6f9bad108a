"""The wire to an `[[mcp_servers]]` upstream, bounded while it streams.

The SDK's transports read a whole message before anyone can look at its size: an
upstream answering a 5-byte file with 300 MB would have all of it held. Here every
message is counted as it arrives and the connection is dropped the moment one passes
`MESSAGE_MAX_BYTES` (the largest read skillpack accepts, `MCP_SKILL_MAX_BYTES`, as
base64, plus room for the JSON around it), so an upstream can make skillpack hold
at most a few times that, whatever it sends.

- **stdio**: the child's stdout is split into lines here (the SDK's own transport
  buffers a line of any length); a line past the bound is an error for the request it
  answers, and ends the connection (the next call reconnects).
- **HTTP**: the SDK's own transport, over an HTTP client whose responses count their
  bytes per server-sent event (or per body, for a JSON answer) and fail past the bound
  with an error the SDK turns into an error answer for the request (any other
  exception there only says "Connection closed" or "SSE stream ended without a
  response"); the SDK's own limit on one event is set to the same bound
  (`max_sse_event_size`), not its default 1 MiB, which refused files well under the
  read limit.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final, TextIO

from .._errors import SkillIOError
from .._limits import MCP_SKILL_MAX_BYTES

MESSAGE_MAX_BYTES: Final = MCP_SKILL_MAX_BYTES * 4 // 3 + 1024 * 1024
"""One message from an upstream at most: the largest file skillpack reads, as base64
in a `resources/read` answer, and 1 MiB for the rest of the JSON."""
STOP_SECONDS: Final = 2.0
_ID_WINDOW: Final = 256
_ID: Final = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,100}")')


TOO_LARGE: Final = "The server sent a message over"


def too_large(limit: int) -> SkillIOError:
    return SkillIOError(
        f"{TOO_LARGE} {limit} bytes, the most skillpack reads in one; "
        "the connection was closed (check what the server publishes)"
    )


def too_large_reason(text: str) -> str | None:
    """The too-large sentence inside an error's text (the SDK wraps it in its own words,
    which differ by transport: "Failed to parse JSON response: ", "SSE stream failed:
    "), so every transport reports it alike; None when it is not there."""
    at = text.find(TOO_LARGE)
    return text[at:] if at >= 0 else None


@asynccontextmanager
async def bounded_stdio(
    command: str,
    args: list[str],
    *,
    env: dict[str, str] | None,
    cwd: str | None,
    errlog: TextIO,
    limit: int = MESSAGE_MAX_BYTES,
) -> AsyncIterator[tuple[Any, Any]]:
    """An MCP transport over a child process's stdin and stdout, each line at most
    `limit` bytes (else the read stream gets a `SkillIOError` and closes)."""
    import shutil

    import anyio
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    program = shutil.which(command) or command
    process = await anyio.open_process(
        [program, *args],
        env=get_default_environment() | (env or {}),
        cwd=cwd,
        stderr=errlog,
    )
    read_send, read_stream = anyio.create_memory_object_stream[Any](0)
    flooded = anyio.Event()  # the server sent a line over `limit`: nothing more is read
    write_stream, write_receive = anyio.create_memory_object_stream[Any](0)

    async def deliver(line: bytes) -> None:
        try:
            message: Any = SessionMessage(jsonrpc_message_adapter.validate_json(line))
        except ValueError as exc:
            message = exc
        await read_send.send(message)

    async def refuse(head: bytes) -> None:
        """Answer the request a too-large line replied to with an error (its id is near
        the start), so the caller learns why; the connection then ends (the next call
        reconnects) rather than read the rest."""
        found = _ID.search(head[:_ID_WINDOW])
        if found is None:
            await read_send.send(too_large(limit))
            return
        error = {
            "jsonrpc": "2.0",
            "id": json.loads(found.group(1)),
            "error": {"code": -32603, "message": str(too_large(limit))},
        }
        await deliver(json.dumps(error).encode())

    async def reader() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        async with read_send:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in process.stdout:
                    start = 0
                    while (end := chunk.find(b"\n", start)) >= 0:
                        buffer += chunk[start:end]
                        start = end + 1
                        if len(buffer) > limit:
                            break
                        if buffer.strip():
                            await deliver(bytes(buffer))
                        buffer.clear()
                    else:
                        buffer += chunk[start:]
                    if len(buffer) > limit:
                        flooded.set()
                        await refuse(bytes(buffer[:_ID_WINDOW]))
                        return

    async def writer() -> None:
        assert process.stdin is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with write_receive:
                async for message in write_receive:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(text.encode("utf-8") + b"\n")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, wait_first=not flooded.is_set())
            tasks.cancel_scope.cancel()


async def _stop(process: Any, *, wait_first: bool = True) -> None:
    """Close stdin, give the server `STOP_SECONDS` to exit, then terminate, then kill.

    Without `wait_first` (a server whose too-large line was left unread, so it sits
    blocked writing the rest and cannot exit), terminate it at once."""
    import anyio

    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    steps: tuple[Any, ...] = (process.terminate, process.kill)
    for signal in (None, *steps) if wait_first else steps:
        if signal is not None:
            with contextlib.suppress(ProcessLookupError):
                signal()
        with anyio.move_on_after(STOP_SECONDS):
            await process.wait()
            break
    with contextlib.suppress(Exception):
        await process.aclose()


def bounded_http_client(headers: dict[str, str], *, limit: int = MESSAGE_MAX_BYTES) -> Any:
    """The SDK's HTTP client (its timeouts), with every response bounded: a server-sent
    event, or a whole body that is not an event stream, of more than `limit` bytes
    fails the read."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    class TooLarge(httpx2.StreamError, httpx2.SSEError):
        """Past the bound: the SDK answers the request with an error naming it (it
        catches a stream error while reading a JSON body, an SSE error in an event
        stream)."""

    class Bounded(httpx2.AsyncByteStream):
        def __init__(self, inner: Any, events: bool) -> None:
            self.inner = inner
            self.events = events

        async def __aiter__(self) -> AsyncIterator[bytes]:
            count = 0
            tail = b""
            async for chunk in self.inner:
                count += len(chunk)
                if self.events:
                    # An event ends at a blank line (`\n\n` or `\r\n\r\n`): count
                    # from the last one, which may straddle two chunks.
                    seen = tail + chunk
                    end = max(seen.rfind(b"\n\n"), seen.rfind(b"\n\r\n"))
                    if end >= 0:
                        count = len(seen) - end
                    tail = seen[-2:]
                if count > limit:  # checked before the SDK sees the chunk: its own
                    raise TooLarge(str(too_large(limit)))  # count never passes the bound
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class BoundedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            response = await self.inner.handle_async_request(request)
            kind = response.headers.get("content-type", "")
            response.stream = Bounded(response.stream, kind.startswith("text/event-stream"))
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx2.AsyncClient(headers=headers, timeout=timeout, transport=BoundedTransport())
