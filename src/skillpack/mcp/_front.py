"""The stdio front of `skillpack mcp`: the handshake and first pages before the SDK loads.

Importing the MCP SDK takes longer than discovering 10,000 skills from a warm index, and
a host waits for `initialize` before it asks anything. So over stdio a `Core` answers
the start of the conversation itself, with no SDK: discovery starts on a thread as the
process starts; `initialize` is answered (its result does not depend on the
catalog unless `--catalog-instructions` puts the catalog in it) once the catalog is
there, or `HANDSHAKE_WAIT_S` after the front started, whichever comes first; `ping`,
`notifications/initialized` (with the log message naming what is left out) and
`skills/list` pages are answered from `_pages`, the server's own SDK-free half, as
soon as the catalog is there. The discovery thread goes on to build the first page's
entries, so a host asking for it right after the handshake does not wait for them.

The SDK is imported only after the first `skills/list` page has gone out, when a line
comes that the front does not answer (any other method, a notification it does not
know, anything malformed or unusual: the SDK's answer is the reference), or when the
client has been idle for `IDLE_S` after the handshake. Then the stream is handed over:
the client's `initialize` is replayed to the SDK server under a private id (its reply
is dropped), then its `notifications/initialized` if it sent one, then every byte not
yet answered, and the SDK serves from there (`_server.run_stdio`). The front answers
each line before it reads the next, so answers keep the order of requests however the
client pipelines them. What the front sends is what the SDK server sends for the same
lines, for every protocol version of the handshake era (`tests/mcp/test_front.py` runs
both and compares the messages): the pages are `_pages`', as the SDK server's are, and
the `initialize` result is the SDK server's own, recorded (`_handshake`).

`SKILLPACK_MCP_FAST_START=0` turns the front off (the SDK serves from the start).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from ._handshake import recorded
from ._pages import (
    INSTRUCTIONS,
    LOGGER_NAME,
    Pages,
    Told,
    decode_cursor,
    left_out_news,
)
from ._pipes import is_stream

if TYPE_CHECKING:
    from ..render._catalog import CatalogMode
    from ..runtime._session import Session
    from ._server import SkillServer

FAST_START_ENV: Final = "SKILLPACK_MCP_FAST_START"
REPLAY_ID: Final = "skillpack-front/initialize"
"""The id the client's `initialize` is replayed to the SDK under (its reply dropped)."""
HANDSHAKE_WAIT_S: Final = 0.25
"""How long after the front starts `initialize` may wait for the catalog. A host asks
for the catalog right after the handshake, so a reply sent before the catalog is ready
only moves the wait into that first request; past this bound the handshake is answered
anyway, so a large catalog does not hold a host's connection attempt (start-up stays
within half a second)."""
INDEX_WRITE_WAIT_S: Final = 2.0
"""How long after the catalog is ready the discovery thread holds back the index writes
of a cold start (`index._cache.HeldWrites`) for the first page to go out first (the
encoding holds the GIL for ~100 ms at 10,000 skills): they are written once the SDK
starts loading (after that page, an idle client, or a line for the SDK), or at this
bound."""
IDLE_S: Final = 0.25
"""After the handshake, a client quiet this long gets the SDK loaded (so that catalog
changes reach it as notifications) without waiting for its next request."""
MAX_PENDING_BYTES: Final = 4 * 1024 * 1024
"""A line longer than this goes to the SDK server, which refuses it (`_stdio`)."""
_CAPABILITY_MAPS: Final = ("experimental", "extensions")
_CAPABILITY_FLAGS: Final = ("sampling", "elicitation", "tasks")
_IMPLEMENTATION_TEXT: Final = ("title", "description", "websiteUrl")


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while the catalog is built, and what was built frozen
    out of its sight before it is back on.

    Discovery allocates one long-lived object after another (about 50 per skill): at
    10,000 skills the collector rescanned them for some 95 ms of a 580 ms start, and
    merely switching it back on afterwards moved that scan to the first requests (the
    first collection of the young generation held all of them: some 90 ms of the first
    `skills/list` page). Frozen (`gc.freeze`), they are never scanned again. Reference
    counting still frees each of them when dropped; only a cycle among the objects
    alive now would never be collected, a bound of one start-up's worth that does not
    grow with a server's uptime (what the picker does too, `cli._ui_cmds.settle_heap`).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the front serves (`SKILLPACK_MCP_FAST_START` is not `0`)."""
    env = os.environ if environ is None else environ
    return env.get(FAST_START_ENV, "1").strip() != "0"


def _dump(message: dict[str, Any]) -> bytes:
    """One message as compact JSON and a newline, as the SDK writes it on stdio.

    Written by `json`: importing pydantic_core (some 50-80 ms) would hold the GIL from
    discovery as the server starts. A float is written as Python writes it (`1e-07`
    where pydantic writes `1e-7`: the same number to any JSON reader). What `json`
    cannot write as JSON (NaN, the infinities, a lone surrogate) goes to pydantic_core,
    which writes the SDK's answer to it (`null` for the numbers)."""
    with contextlib.suppress(ValueError):  # UnicodeEncodeError is one too
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8") + b"\n"
    import pydantic_core

    return pydantic_core.to_json(message, inf_nan_mode="null") + b"\n"


def _plain_initialize(params: object) -> str | None:
    """The protocol version an `initialize` asks for, when its params are plainly
    valid (None: let the SDK judge them)."""
    if not isinstance(params, dict) or "_meta" in params:
        return None
    version, capabilities, client = (
        params.get("protocolVersion"),
        params.get("capabilities"),
        params.get("clientInfo"),
    )
    if not (isinstance(version, str) and isinstance(capabilities, dict)):
        return None
    if not isinstance(client, dict) or "icons" in client:
        return None
    if not (isinstance(client.get("name"), str) and isinstance(client.get("version"), str)):
        return None
    if any(not isinstance(client.get(key, ""), str) for key in _IMPLEMENTATION_TEXT):
        return None
    for key in _CAPABILITY_MAPS:
        value = capabilities.get(key, {})
        if not (isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())):
            return None
    if any(capabilities.get(key, {}) != {} for key in _CAPABILITY_FLAGS):
        return None
    roots = capabilities.get("roots", {})
    if not isinstance(roots, dict) or set(roots) - {"listChanged"}:
        return None
    if not isinstance(roots.get("listChanged", False), bool):
        return None
    return version


def _plain_params(params: object, allowed: frozenset[str]) -> bool:
    """Params absent, or an object of only `allowed` keys (no `_meta`)."""
    return params is None or (isinstance(params, dict) and not set(params) - allowed)


class Core:
    """The front's state: the catalog being discovered, what was answered, what to replay.

    `answer(line)` gives the reply lines for one client line, or None when the line is
    the SDK server's to answer (it and all after it are handed over).
    """

    def __init__(
        self,
        open_session: Callable[[], Session],
        *,
        catalog_chars: int | None = None,
        catalog_instructions: bool = False,
        catalog_mode: CatalogMode | None = None,
    ) -> None:
        """Args:
        open_session: Opens the session to serve (discovery; run on a thread).
        catalog_chars: `skillpack mcp --catalog-chars`.
        catalog_instructions: `skillpack mcp --catalog-instructions`.
        catalog_mode: `skillpack mcp --catalog-mode`.
        """
        self._open_session = open_session
        self._catalog_chars = catalog_chars
        self._catalog_instructions = catalog_instructions
        self._catalog_mode = catalog_mode
        self._pages: Pages | None = None
        self._failure: BaseException | None = None
        self._ready = threading.Event()
        self._index_free = threading.Event()
        self.initialize_line: bytes | None = None
        """The client's `initialize`, re-addressed to `REPLAY_ID`."""
        self.initialized_line: bytes | None = None
        self.told: Told | None = None
        """What the client was told is left out (the SDK server must not repeat it)."""
        self.pages_answered = 0
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._discover, name="skillpack-mcp-front")
        self._thread.daemon = True
        self._thread.start()

    def _discover(self) -> None:
        from ..index._cache import HeldWrites

        # The index is written for the next start once this one's first page is out.
        held = HeldWrites()
        try:
            with _collector_paused(), held:
                self._discover_now()
        finally:
            self._ready.set()  # with the collector as it was
        self._index_free.wait(INDEX_WRITE_WAIT_S)
        held.flush()

    def free_index(self) -> None:
        """The front's first answers are out: discovery may write the index now."""
        self._index_free.set()

    def _discover_now(self) -> None:
        try:
            session = self._open_session()
            try:
                pages = Pages(
                    session,
                    catalog_chars=self._catalog_chars,
                    catalog_instructions=self._catalog_instructions,
                    catalog_mode=self._catalog_mode,
                )
                pages.prepare_first_page()
            except BaseException:
                session.close()
                raise
            self._pages = pages
        except BaseException as exc:  # noqa: BLE001 - raised again where it is needed
            self._failure = exc

    @property
    def ready(self) -> bool:
        """Whether discovery is over (successfully or not)."""
        return self._ready.is_set()

    def pages(self) -> Pages:
        """The served pages, once discovery is done; discovery's error, raised here."""
        self._ready.wait()
        if self._failure is not None:
            raise self._failure
        assert self._pages is not None
        return self._pages

    def close(self) -> None:
        """Close the session when the front served the whole conversation (after the
        index writes discovery held back, so the next start finds them)."""
        self._ready.wait()
        self.free_index()
        self._thread.join()
        if self._pages is not None:
            self._pages.session.close()

    # -- lines ------------------------------------------------------------------

    def answer(self, line: bytes) -> list[bytes] | None:
        """The reply lines to one client line; None when the SDK server must answer it."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # the SDK server words the refusal
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, params = message.get("method"), message.get("params")
        if "id" not in message:
            if (
                method == "notifications/initialized"
                and self.initialize_line is not None
                and _plain_params(params, frozenset())
            ):
                return self._initialized(line)
            return None
        request_id = message["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        if set(message) - {"jsonrpc", "id", "method", "params"}:
            return None
        if method == "initialize":
            return self._initialize(message, request_id)
        if self.initialize_line is None:
            return None
        if method == "ping" and _plain_params(params, frozenset()):
            return [_dump({"jsonrpc": "2.0", "id": request_id, "result": {}})]
        if method == "skills/list" and _plain_params(params, frozenset({"cursor"})):
            return self._skills_list(request_id, (params or {}).get("cursor"))
        return None

    def _initialize(self, message: dict[str, Any], request_id: int | str) -> list[bytes] | None:
        if self.initialize_line is not None:
            return None  # a second one: what the SDK says to that is its own
        asked = _plain_initialize(message.get("params"))
        if asked is None:
            return None
        if self._catalog_instructions:
            instructions = self.pages().instructions()
        else:
            instructions = INSTRUCTIONS
            self._ready.wait(max(0.0, HANDSHAKE_WAIT_S - (time.monotonic() - self._started)))
        reply = {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": recorded().result(asked, instructions),
        }
        self.initialize_line = json.dumps({**message, "id": REPLAY_ID}).encode() + b"\n"
        return [_dump(reply)]

    def _initialized(self, line: bytes) -> list[bytes]:
        if self.initialized_line is None:
            self.initialized_line = line.rstrip(b"\r\n") + b"\n"
        return self._log_news()

    def _log_news(self) -> list[bytes]:
        """The log message naming what is left out, when that is news to the client."""
        self.told, data = left_out_news(self.pages().view(), self.told)
        if data is None:
            return []
        params = {"level": "warning", "logger": LOGGER_NAME, "data": data}
        return [_dump({"jsonrpc": "2.0", "method": "notifications/message", "params": params})]

    def _skills_list(self, request_id: int | str, cursor: object) -> list[bytes] | None:
        if cursor is not None and not isinstance(cursor, str):
            return None
        try:
            start = decode_cursor(cursor)
        except Exception:  # noqa: BLE001 - the SDK server words the error
            return None
        pages = self.pages()
        try:
            page = pages.skills_page(start)
        except Exception:  # noqa: BLE001 - the SDK server reports it as it always does
            return None
        replies = self._log_news() if page["_meta"]["io.skillpack/leftOut"]["notListable"] else []
        self.pages_answered += 1
        return [*replies, _dump({"jsonrpc": "2.0", "id": request_id, "result": page})]

    def replay(self, rest: bytes) -> bytes:
        """What the SDK server reads first: the handshake again, then `rest`."""
        return b"".join((self.initialize_line or b"", self.initialized_line or b"", rest))


class _Loader:
    """The SDK and the `SkillServer` built on a thread while the front keeps serving."""

    def __init__(self, core: Core, *, cwd: str | None) -> None:
        self._core = core
        self._cwd = cwd
        self.server: SkillServer | None = None
        self.failure: BaseException | None = None
        self.done = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if self._thread is None:
            self._core.free_index()  # the front's critical path is over
            self._thread = threading.Thread(target=self._load, name="skillpack-mcp-sdk")
            self._thread.daemon = True
            self._thread.start()

    def _load(self) -> None:
        try:
            pages = self._core.pages()
            from ._server import SkillServer

            self.server = SkillServer(
                pages.session,
                cwd=self._cwd,
                catalog_chars=pages.catalog_chars,
                catalog_instructions=pages.catalog_instructions,
                catalog_mode=pages.catalog_mode,
                _pages=pages,
            )
        except BaseException as exc:  # noqa: BLE001 - raised again on the main thread
            self.failure = exc
        finally:
            self.done.set()

    def wait(self) -> SkillServer:
        self.start()
        self.done.wait()
        if self.failure is not None:
            raise self.failure
        assert self.server is not None
        return self.server


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def serve(core: Core, *, cwd: str | None) -> None:
    """Serve stdin/stdout: the front first, then the SDK server over the same stream
    (`_server.run_stdio`) until the client closes it."""
    loader = _Loader(core, cwd=cwd)
    pending = bytearray()
    sys.stdout.flush()
    try:
        rest = _front_loop(core, loader, pending)
    except BaseException:
        core.close()
        raise
    if rest is None:  # the client closed stdin: the conversation is over
        core.close()
        return
    server = loader.wait()
    server.told_first = core.told
    from ._server import run_stdio

    try:
        core.pages().session.set_refresh("watch")
        run_stdio(server, prefix=core.replay(rest), drop_id=REPLAY_ID)
    finally:
        server.close()
        core.close()


def _front_loop(core: Core, loader: _Loader, pending: bytearray) -> bytes | None:
    """Answer lines until the SDK must take over (the bytes it gets), or EOF (None)."""
    while True:
        while (end := pending.find(b"\n")) >= 0:
            line = bytes(pending[: end + 1])
            if line.strip():
                replies = core.answer(line)
                if replies is None:
                    return bytes(pending)
                for reply in replies:
                    _write(1, reply)
                if core.pages_answered and not loader.started:
                    loader.start()
            del pending[: end + 1]
        if loader.done.is_set():
            return bytes(pending)
        if len(pending) > MAX_PENDING_BYTES:
            return bytes(pending)
        if loader.started:
            timeout: float | None = 0.05
        elif core.initialize_line is not None and core.ready:
            timeout = IDLE_S
        else:
            timeout = None if core.initialize_line is None else 0.05
        readable, _, _ = select.select([0], [], [], timeout)
        if not readable:
            if core.initialize_line is not None and core.ready and not loader.started:
                loader.start()
            continue
        data = os.read(0, 65536)
        if not data:
            if pending.strip():  # a last line without its newline
                replies = core.answer(bytes(pending))
                if replies is None:
                    return bytes(pending)
                for reply in replies:
                    _write(1, reply)
            return None
        pending += data


def serve_stdio(
    open_session: Callable[[], Session],
    *,
    cwd: str | None,
    catalog_chars: int | None,
    catalog_instructions: bool,
    catalog_mode: CatalogMode | None = None,
    before_serving: Callable[[], None] = lambda: None,
) -> bool:
    """`skillpack mcp` over stdio through the front; False (nothing done) when the
    front is off (`SKILLPACK_MCP_FAST_START=0`) or stdin/stdout are not pipes.

    `before_serving` runs once discovery has started and before anything is read or
    answered; what it raises ends the server (discovery's thread dies with it)."""
    if not enabled() or not (is_stream(0) and is_stream(1)):
        return False
    core = Core(
        open_session,
        catalog_chars=catalog_chars,
        catalog_instructions=catalog_instructions,
        catalog_mode=catalog_mode,
    )
    before_serving()
    with contextlib.suppress(BrokenPipeError):
        serve(core, cwd=cwd)
    return True
