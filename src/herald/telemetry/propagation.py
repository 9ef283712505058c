"""Trace context across the bus: a work message carries the publisher's W3C trace
context in its headers, so one trace runs from the HTTP request through the gRPC
hops and JetStream to the receiver or provider call and the ledger update."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import context, propagate


def inject_headers(headers: dict[str, str]) -> dict[str, str]:
    """Adds `traceparent` (and `tracestate`) for the current span, if any."""
    propagate.inject(headers)
    return headers


def extract_context(headers: Mapping[str, str] | None) -> context.Context:
    return propagate.extract(dict(headers or {}))
