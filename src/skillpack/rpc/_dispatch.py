"""JSON-RPC 2.0 framing, shared by both transports: one frame in, one frame out.

`Dispatcher.handle` takes the bytes of one message (a request, a notification or a
batch) and returns the bytes of the reply, or None when nothing is owed (only
notifications). It never raises: malformed JSON is -32700, a malformed request -32600,
an unknown method -32601, bad params -32602 naming the field, a handler's error its
mapped code (`_codes`). `Hub` fans the server's own notifications out to whichever
transports listen.

Over HTTP with JWT auth, `handle` runs a message for its caller (`_auth.Caller`): the
methods read it (`current_caller`) to serve the request through the caller's grant,
and each request is one audit line (`_auth.audit`). A notification about skills goes
to each listener as its grant may see it (`Hub.publish(scoped=...)`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from .._auth import Caller, audit
from ..runtime._tool_args import clip_request
from ._caller import CALLER
from ._codes import PROTOCOL_CODES, RPC_CODES, ParamError, RpcFailure, error_object, invalid_params
from ._frame import MAX_BATCH, MAX_RESPONSE_BYTES, Sink, encode, error_frame
from ._methods import Methods
from ._params import check_params
from ._schema import METHODS


class Hub:
    """The server's notifications, delivered to every subscribed transport."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sinks: list[tuple[Sink, Any]] = []

    def subscribe(self, sink: Sink, *, grant: Any = None) -> Callable[[], None]:
        """Deliver notifications to `sink`, as `grant` (a `SkillGrant`) may see them."""
        entry = (sink, grant)
        with self._lock:
            self._sinks.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._sinks:
                    self._sinks.remove(entry)

        return unsubscribe

    def publish(
        self,
        method: str,
        params: dict[str, Any],
        *,
        scoped: Callable[[Any], dict[str, Any]] | None = None,
    ) -> None:
        """Send a notification; `scoped(grant)` gives its params for a listener with
        a grant (encoded once per grant)."""
        frames: dict[Any, bytes] = {}

        def frame_for(grant: Any) -> bytes:
            if scoped is None:
                grant = None
            found = frames.get(grant)
            if found is None:
                shown = params if grant is None or scoped is None else scoped(grant)
                found = frames[grant] = encode(
                    {"jsonrpc": "2.0", "method": method, "params": shown}
                )
            return found

        with self._lock:
            sinks = list(self._sinks)
        for sink, grant in sinks:
            try:
                sink(method, frame_for(grant))
            except Exception:  # noqa: BLE001 - one broken listener never stops the others
                continue


class Dispatcher:
    """Parses frames, calls `Methods`, builds replies."""

    def __init__(self, methods: Methods) -> None:
        self.methods = methods

    def handle(self, frame: bytes, *, caller: Caller | None = None) -> bytes | None:
        """The reply to one message (None: nothing is owed), handled for `caller`."""
        token = CALLER.set(caller)
        try:
            return self._handle(frame)
        finally:
            CALLER.reset(token)

    def _handle(self, frame: bytes) -> bytes | None:
        try:
            try:
                message = json.loads(frame)
            except RecursionError:
                # Nesting deeper than the parser goes: a request (a 1,000-deep argument)
                # is read cut, so the tool's check refuses it with its id; anything
                # else stays the parse error.
                clipped = clip_request(frame)
                if clipped is frame:
                    raise
                message = json.loads(clipped)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            # RecursionError: nesting deeper than the parser goes (a 100,000-deep body).
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            return error_frame(
                None,
                PROTOCOL_CODES["parse-error"],
                f"Parse error: the message is not valid JSON ({reason}). Send one JSON-RPC "
                "object (or a batch array) per message.",
            )
        if isinstance(message, list):
            return self._batch(message)
        reply = self._one(message)
        return None if reply is None else self._encode_reply(reply)

    def _batch(self, messages: list[Any]) -> bytes | None:
        if not messages or len(messages) > MAX_BATCH:
            return error_frame(
                None,
                PROTOCOL_CODES["invalid-request"],
                f"Invalid request: a batch must hold 1 to {MAX_BATCH} requests, "
                f"this one holds {len(messages)}.",
            )
        replies = [r for r in map(self._one, messages) if r is not None]
        return self._encode_reply(replies) if replies else None

    def _encode_reply(self, reply: Any) -> bytes:
        data = encode(reply)
        if len(data) <= MAX_RESPONSE_BYTES:
            return data
        replies = reply if isinstance(reply, list) else [reply]
        message = (
            f"The result is {len(data)} bytes, over the {MAX_RESPONSE_BYTES} byte limit; "
            "ask for less (fewer cwds, a session, skills.search)."
        )
        too_large = [
            {
                "jsonrpc": "2.0",
                "id": r.get("id"),
                "error": {"code": RPC_CODES["response-too-large"], "message": message},
            }
            for r in replies
        ]
        return encode(too_large if isinstance(reply, list) else too_large[0])

    def _one(self, message: Any) -> dict[str, Any] | None:
        if not isinstance(message, dict):
            return _error(None, invalid_request("a request must be a JSON object"))
        request_id = message.get("id")
        notification = "id" not in message
        if not notification and (
            isinstance(request_id, bool) or not isinstance(request_id, str | int | None)
        ):
            return _error(None, invalid_request("`id` must be a string, an integer or null"))
        method = message.get("method")
        try:
            if message.get("jsonrpc") != "2.0":
                raise invalid_request('`jsonrpc` must be "2.0"')
            if not isinstance(method, str):
                raise invalid_request("`method` must be a string")
            result = self._call(method, message.get("params"))
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error reply
            return None if notification else _error(request_id, exc, method)
        return None if notification else {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _call(self, method: str, params: Any) -> Any:
        handler = self.methods.table.get(method)
        spec = METHODS.get(method)
        if handler is None or spec is None:
            known = ", ".join(sorted(METHODS))
            raise RpcFailure(
                PROTOCOL_CODES["method-not-found"],
                f"Method not found: {method!r}. This server has {known}.",
            )
        checked = check_params(spec.checked, params)
        caller = CALLER.get()
        if caller is not None:
            skill = next(
                (checked[k] for k in ("name", "skill", "ref", "path") if k in checked), None
            )
            audit("serve", caller.principal, method=method, skill=skill)
        return self.methods.run(handler, checked)


def invalid_request(problem: str) -> RpcFailure:
    return RpcFailure(
        PROTOCOL_CODES["invalid-request"],
        f"Invalid request: {problem}. A request is "
        '{"jsonrpc": "2.0", "id": 1, "method": "...", "params": {...}}.',
    )


def _error(request_id: Any, exc: BaseException, method: Any = None) -> dict[str, Any]:
    if isinstance(exc, ParamError):
        exc = invalid_params(str(method), exc.field, exc.problem)
    return {"jsonrpc": "2.0", "id": request_id, "error": error_object(exc)}
