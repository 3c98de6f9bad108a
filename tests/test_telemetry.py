"""OpenTelemetry spans of skill use (`_telemetry`): an in-memory exporter sees each
tool call, catalog render and prepared turn; the servers export over OTLP/HTTP with
only `OTEL_*` variables set; nothing is imported for it when no one traces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from skillpack import Session
from skillpack._telemetry import exporter_wanted
from skillpack.runtime._tools import SkillTools

SKILL = (
    "---\nname: alpha\ndescription: Fill in PDF forms and extract their fields. Use for "
    "fillable PDF forms.\n---\n# alpha\nDo.\n"
)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()


def session_of(tmp_path: Path) -> Session:
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alpha" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    return Session.open(
        cwd=str(tmp_path),
        roots=[str(tmp_path)],
        include_user=False,
        include_system=False,
        use_cache=False,
    )


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def test_each_tool_call_is_an_execute_tool_span_with_its_skill_and_outcome(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    session = session_of(tmp_path)
    tools = SkillTools(session)
    digest = session.skills.digest(session.catalog.skills[0])
    assert tools.call("skill_load", {"name": "alpha"})["ok"]
    assert tools.call("skill_read_file", {"skill": "alpha", "path": "SKILL.md"})["ok"]
    assert not tools.call("skill_load", {"name": "missing"})["ok"]
    loaded, failed = named(spans, "execute_tool skill_load")
    assert loaded.kind is trace.SpanKind.INTERNAL
    assert dict(loaded.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "skill_load",
        "gen_ai.tool.type": "function",
        "gen_ai.skill.name": "alpha",
        "gen_ai.skill.version": digest,
        "skillpack.tool.outcome": "ok",
    }
    (read,) = named(spans, "execute_tool skill_read_file")
    assert (read.attributes or {})["gen_ai.skill.name"] == "alpha"
    attributes = dict(failed.attributes or {})
    assert attributes["skillpack.tool.outcome"] == "error"
    assert attributes["error.type"] == "NOT_FOUND"
    assert "gen_ai.skill.name" not in attributes
    assert failed.status.status_code is trace.StatusCode.ERROR


def test_a_catalog_render_and_a_turn_record_what_they_did(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    session = session_of(tmp_path)
    rendered = session.render_catalog(budget_chars=10_000)
    session.prepare_turn("$alpha now")
    (render,) = named(spans, "skillpack.render_catalog")
    assert dict(render.attributes or {}) == {
        "skillpack.catalog.total": 1,
        "skillpack.catalog.shown": 1,
        "skillpack.catalog.shortened": 0,
        "skillpack.catalog.omitted": 0,
        "skillpack.catalog.chars": rendered.report.used_chars,
    }
    suggested = session.prepare_turn("fill in the fields of this PDF form for me")
    assert suggested.suggestions, "the request fits alpha"
    (turn, asked) = named(spans, "skillpack.prepare_turn")
    assert (asked.attributes or {})["skillpack.turn.suggestions"] == tuple(
        s.id for s in suggested.suggestions
    )
    assert (turn.attributes or {})["skillpack.turn.activations"] == 1
    assert (turn.attributes or {})["skillpack.turn.skills"] == (
        session.catalog.skills[0].qualified_name,
    )


def test_nothing_of_opentelemetry_is_imported_when_no_one_traces(tmp_path: Path) -> None:
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alpha" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    code = (
        "import sys\n"
        "from skillpack import Session\n"
        "from skillpack.runtime._tools import SkillTools\n"
        f"s = Session.open(cwd={str(tmp_path)!r}, roots=[{str(tmp_path)!r}], "
        "include_user=False, include_system=False, use_cache=False)\n"
        "assert SkillTools(s).call('skill_load', {'name': 'alpha'})['ok']\n"
        "s.render_catalog(); s.prepare_turn('$alpha')\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("environ", "wanted"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
    ],
)
def test_the_otel_variables_decide_whether_a_server_exports(
    environ: dict[str, str], wanted: bool
) -> None:
    assert exporter_wanted(environ) is wanted


class Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: decodes each protobuf export request."""

    received: list[Any]

    def do_POST(self) -> None:  # noqa: N802 - the http.server naming
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        type(self).received.append((self.path, request))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def test_skillpack_mcp_exports_its_spans_with_only_otel_variables(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    pytest.importorskip("mcp")
    handler: type[Receiver] = type("Handler", (Receiver,), {"received": []})
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=receiver.serve_forever, daemon=True)
    thread.start()
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "otel", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "skill_load", "arguments": {"name": "alpha"}},
        },
    ]
    environ = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_address[1]}",
        "OTEL_SERVICE_NAME": "skills-fleet",
    }
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]
            + ["--root", str(tmp_path / "skills"), "--no-user", "--no-system"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
        )
        assert process.stdin is not None and process.stdout is not None
        for message in messages:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            if "id" in message:
                answer = json.loads(process.stdout.readline())
                assert "result" in answer, answer
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        process.stdout.close()
        assert process.stderr is not None
        process.stderr.close()
    finally:
        receiver.shutdown()
        receiver.server_close()
    paths = {path for path, _request in handler.received}
    assert paths == {"/v1/traces"}
    exported = [
        (resource_spans.resource, span)
        for _path, request in handler.received
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]
    tool_spans = [(r, s) for r, s in exported if s.name == "execute_tool skill_load"]
    assert len(tool_spans) == 1
    resource, span = tool_spans[0]
    attributes = {a.key: a.value.string_value for a in span.attributes}
    assert attributes["gen_ai.tool.name"] == "skill_load"
    assert attributes["gen_ai.skill.name"] == "alpha"
    assert attributes["gen_ai.skill.version"].startswith("sha256:")
    service = {a.key: a.value.string_value for a in resource.attributes}["service.name"]
    assert service == "skills-fleet"
