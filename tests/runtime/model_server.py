"""A scripted model server on 127.0.0.1: OpenAI's chat completions and Anthropic's
messages, over a real socket, for the SDKs to talk to in tests.

Each request is answered from the `Script` by the text of the user's message: a
failing status first when one is queued, a delay (for timeouts), then the next of
the query's answers (a skill to load, or None for a reply in words).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    answers: dict[str, list[str | None]] = field(default_factory=dict)
    """Query -> what successive calls do: load that skill (None: answer in words)."""
    failures: dict[str, list[int]] = field(default_factory=dict)
    """Query -> statuses the next calls fail with, in order, before the answers."""
    delay: dict[str, float] = field(default_factory=dict)
    """Query -> seconds each call waits before answering."""
    search_first: set[str] = field(default_factory=set)
    """Queries whose first call searches (the load comes after the result)."""
    status_all: int | None = None
    """Every call fails with this status (a refused key: 401)."""
    tool: str = "skill_load"
    """The loading tool the model calls: skill_load, use_skill or skill_read_file."""
    texts: dict[tuple[str, bool], str] = field(default_factory=dict)
    """(user message, with a system prompt) -> a reply in words (task evals)."""
    grade: Callable[[str], str] | None = None
    """The grader: its user message -> its reply (a system prompt starting "You grade")."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every request body received, with its `_path`."""
    calls: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, query: str, searched: bool) -> tuple[int, str | None, bool]:
        """(status, skill to load, search now) for the next call on `query`."""
        with self.lock:
            if self.status_all is not None:
                return self.status_all, None, False
            queued = self.failures.get(query)
            if queued:
                return queued.pop(0), None, False
            if query in self.search_first and not searched:
                return 200, None, True
            n = self.calls.get(query, 0)
            self.calls[query] = n + 1
            answers = self.answers.get(query, [None])
            return 200, answers[n % len(answers)], False


def _arguments(tool: str, skill: str) -> dict[str, Any]:
    if tool == "use_skill":
        return {"skill": skill, "args": None}
    if tool == "skill_read_file":
        return {"skill": skill, "path": "SKILL.md"}
    return {"name": skill, "path": None, "args": None}


WORDS = "I can do that myself."


def _openai(call: tuple[str, dict[str, Any]] | None, text: str = WORDS) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if call is not None:
        name, args = call
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            ],
        }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if call else "stop",
                "message": message,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _anthropic(call: tuple[str, dict[str, Any]] | None, text: str = WORDS) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if call is not None:
        name, args = call
        content = [{"type": "tool_use", "id": "toolu_1", "name": name, "input": args}]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": content,
        "stop_reason": "tool_use" if call else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _query_and_searched(path: str, body: dict[str, Any]) -> tuple[str, bool]:
    messages = body.get("messages", [])
    user = next(m for m in messages if m["role"] == "user")
    query = user["content"] if isinstance(user["content"], str) else ""
    if path.endswith("/messages"):
        searched = any(
            isinstance(m["content"], list)
            and any(part.get("type") == "tool_result" for part in m["content"])
            for m in messages
        )
    else:
        searched = any(m["role"] == "tool" for m in messages)
    return query, searched


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        script = self.server.script
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with script.lock:
            script.requests.append({**body, "_path": self.path})
        query, searched = _query_and_searched(self.path, body)
        anthropic = self.path.endswith("/messages")
        system = (
            body.get("system", "")
            if anthropic
            else next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        )
        if script.status_all is None and not body.get("tools"):
            if system.startswith("You grade") and script.grade is not None:
                text = script.grade(query)
            else:
                text = script.texts.get((query, bool(system)), WORDS)
            self._send(200, _anthropic(None, text) if anthropic else _openai(None, text))
            return
        status, skill, search = script.take(query, searched)
        time.sleep(script.delay.get(query, 0.0))
        if status != 200:
            self._send(
                status,
                {"type": "error", "error": {"type": "scripted", "message": f"scripted {status}"}},
            )
            return
        call: tuple[str, dict[str, Any]] | None = None
        if search:
            call = ("skill_search", {"query": query, "limit": None, "scope": None})
        elif skill is not None:
            call = (script.tool, _arguments(script.tool, skill))
        self._send(200, _anthropic(call) if anthropic else _openai(call))

    def _send(self, status: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.send_header("retry-after-ms", "5")  # the SDKs' backoff, kept short
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script


@contextmanager
def serve(script: Script) -> Iterator[str]:
    """Serve `script`; yields the root URL (`http://127.0.0.1:PORT`: Anthropic's
    base URL; OpenAI's is that with `/v1`)."""
    server = _Server(script)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
