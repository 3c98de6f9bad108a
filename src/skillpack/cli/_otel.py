"""The servers' OpenTelemetry exporter, configured from the standard `OTEL_*`
variables alone (`skillpack[otel]`): no code and no flag.

With `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`, or
`OTEL_TRACES_EXPORTER=otlp`) set, `skillpack mcp` and `skillpack serve` install a
tracer provider whose resource comes from `OTEL_SERVICE_NAME` and
`OTEL_RESOURCE_ATTRIBUTES` (service name `skillpack` by default), exporting in batches
over OTLP/HTTP (the exporter reads the endpoint, headers and timeout variables
itself); the batch is flushed when the command ends (the CLI leaves by `os._exit`,
so through the click context, not `atexit`). A provider the process already has is
kept.
"""

from __future__ import annotations

import os

import click

from .._telemetry import exporter_wanted
from ._output import warn


def configure_tracing() -> bool:
    """Install the OTLP/HTTP exporter when the `OTEL_*` variables ask for one; whether
    one was installed."""
    if not exporter_wanted():
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        warn(
            "OTEL_* variables ask for trace export, but the OpenTelemetry SDK is not "
            "installed; pip install 'skillpack[otel]' (no spans are exported)."
        )
        return False
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False
    defaults = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "skillpack"}
    provider = TracerProvider(resource=Resource.create(defaults))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    click.get_current_context().call_on_close(provider.shutdown)
    return True
