"""OpenTelemetry spans of skill use: optional (`skillpack[otel]`), API only.

The library never configures OpenTelemetry: it asks the global tracer provider the
host set (`trace.set_tracer_provider`) for the `skillpack` tracer, so the host's own
pipeline receives the spans. Nothing is imported for it: when no module has imported
`opentelemetry.trace`, no provider can have been set, and tracing is off at the cost
of one dictionary lookup; when the provider is still the API's proxy or a no-op one,
it is off too. What is recorded (names after the GenAI semantic conventions):

- each tool call: an `execute_tool <tool>` span (kind INTERNAL) with
  `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.type` =
  `function`, the skill it used (`gen_ai.skill.name`, `gen_ai.skill.version` = the
  SKILL.md's `sha256:` digest), `skillpack.tool.outcome` (`ok` or `error`) and, on
  an error, `error.type` (the envelope's error code) and an ERROR status;
- a catalog render: a `skillpack.render_catalog` span with
  `skillpack.catalog.total`, `.shown`, `.shortened`, `.omitted` and `.chars`;
- a prepared turn: a `skillpack.prepare_turn` span with `skillpack.turn.activations`
  (how many skills it activated), `skillpack.turn.skills` (their names) and
  `skillpack.turn.suggestions` (the ids of the skills it suggested).

A base module: the runtime records, the servers configure an exporter (`cli._otel`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

TRACER_NAME: Final = "skillpack"
_TRACE_MODULE: Final = "opentelemetry.trace"
_cached: tuple[object, Any] | None = None
"""(the provider, its `skillpack` tracer): asked again only when the provider changes."""


_UNKNOWN: Final = object()
_env_provider: bool | None = None
"""Whether `OTEL_PYTHON_TRACER_PROVIDER` names a provider (read once)."""


def tracer() -> Any | None:
    """The `skillpack` tracer of the global provider, or None when tracing is off.

    The API's `get_tracer_provider` looks the environment up on every call (about a
    microsecond), so while no provider is set its module global is read instead (the
    public call when that global is gone in some release).
    """
    global _cached, _env_provider
    trace = sys.modules.get(_TRACE_MODULE)
    if trace is None:
        return None
    provider = trace.__dict__.get("_TRACER_PROVIDER", _UNKNOWN)
    if provider is None:
        if _env_provider is None:
            _env_provider = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
        if not _env_provider:
            return None
    if provider is None or provider is _UNKNOWN:
        provider = trace.get_tracer_provider()
    cached = _cached
    if cached is not None and cached[0] is provider:
        return cached[1]
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    from ._version import __version__

    found = provider.get_tracer(TRACER_NAME, __version__)
    _cached = (provider, found)
    return found


def tool_span(active: Any, tool: str) -> Any:
    """The `execute_tool <tool>` span of `active` (a `tracer()`), as a context manager
    yielding the span."""
    from opentelemetry.trace import SpanKind

    return active.start_as_current_span(
        f"execute_tool {tool}",
        kind=SpanKind.INTERNAL,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
        },
    )


def record_outcome(
    span: Any, envelope: Mapping[str, Any], *, skill: str | None, digest: str | None
) -> None:
    """Put a tool call's skill and outcome (its envelope) on its span."""
    if skill is not None:
        span.set_attribute("gen_ai.skill.name", skill)
    if digest is not None:
        span.set_attribute("gen_ai.skill.version", digest)
    if envelope.get("ok"):
        span.set_attribute("skillpack.tool.outcome", "ok")
        return
    from opentelemetry.trace import Status, StatusCode

    error = envelope.get("error") or {}
    code = str(error.get("code") or "_OTHER")
    span.set_attribute("skillpack.tool.outcome", "error")
    span.set_attribute("error.type", code)
    span.set_status(Status(StatusCode.ERROR, str(error.get("message", code))))


def record_catalog(*, total: int, shown: int, shortened: int, omitted: int, chars: int) -> None:
    """A `skillpack.render_catalog` span with what the budget did (tracing on only)."""
    active = tracer()
    if active is None:
        return
    attributes = {
        "skillpack.catalog.total": total,
        "skillpack.catalog.shown": shown,
        "skillpack.catalog.shortened": shortened,
        "skillpack.catalog.omitted": omitted,
        "skillpack.catalog.chars": chars,
    }
    with active.start_as_current_span("skillpack.render_catalog", attributes=attributes):
        pass


def record_turn(skills: Sequence[str], *, suggested: Sequence[str] = ()) -> None:
    """A `skillpack.prepare_turn` span naming the skills a turn activated and those it
    suggested."""
    active = tracer()
    if active is None:
        return
    attributes = {
        "skillpack.turn.activations": len(skills),
        "skillpack.turn.skills": list(skills),
        "skillpack.turn.suggestions": list(suggested),
    }
    with active.start_as_current_span("skillpack.prepare_turn", attributes=attributes):
        pass


def exporter_wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the standard `OTEL_*` variables ask for an OTLP trace exporter: an OTLP
    endpoint is set or `OTEL_TRACES_EXPORTER` says `otlp`, and the SDK is not
    disabled (`OTEL_SDK_DISABLED`) nor the exporter `none`."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = [e.strip() for e in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if e]
    if "none" in exporters:
        return False
    if "otlp" in exporters:
        return True
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
