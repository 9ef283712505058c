"""OpenTelemetry wiring. The exporter is chosen by the standard OTEL_* variables;
with none set, spans are created (so context still propagates) but not exported."""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def configure_tracing(service: str) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": f"herald-{service}"}))
    exporter_name = os.environ.get("OTEL_TRACES_EXPORTER", "otlp" if _otlp_configured() else "none")
    if exporter_name == "otlp":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    elif exporter_name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)


def _otlp_configured() -> bool:
    return any(k in os.environ for k in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def tracer(name: str) -> trace.Tracer:
    return trace.get_tracer(name)
