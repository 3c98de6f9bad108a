"""JSON frames: the size limits, and encoding replies (a cached result embedded as is)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""A larger message is refused without being read whole (both transports)."""
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""A larger result is replaced by a `response-too-large` error."""
MAX_BATCH = 100
"""Most requests in one batch."""

Sink = Callable[[str, bytes], None]
"""Receives `(method, frame)` for each notification the server sends."""


class Encoded(bytes):
    """A result already encoded as JSON (a cached listing); replies embed it as is."""


def encode(message: Any) -> bytes:
    """One compact JSON frame, UTF-8, no newline inside (strings escape theirs)."""
    if isinstance(message, list):
        return b"[" + b",".join(map(encode, message)) + b"]"
    if isinstance(message, dict):
        result = message.get("result")
        if isinstance(result, Encoded):
            head = encode({k: v for k, v in message.items() if k != "result"})
            return head[:-1] + b',"result":' + result + b"}"
    text: str = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode()


def error_frame(request_id: Any, code: int, message: str) -> bytes:
    """A whole error response, for transports that refuse a message before parsing it."""
    return encode({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
