"""One OpenTelemetry server span per HTTP request, so a trace starts where the request enters Herald (the
gateway's API, the verifier's receivers) and runs on through the gRPC hops and the bus.

A plain ASGI middleware: one span, a wrapped `send` to see the status, nothing else per request. The span is
named by the route template the router matched ("POST /v1/jobs/{job_id}"), never the raw path, so names stay
few and carry no ids. Attributes are the method, the route and the status: no headers, query string or body,
which may hold API keys, signatures or a tenant's data.

Without an exporter (`tracing.exporting()` false) no span is made: it would be dropped unread, and
the context it would carry downstream would be unsampled, so nothing downstream records a span for it
either. The request's duration is still observed for `/metrics`.

These are public entry points: a `traceparent` a caller sends is not continued (it would let anyone on the
internet choose our trace ids and sampling); the request's span starts a new trace, linked to the caller's
when one was given, so the two can still be found together.
"""

from __future__ import annotations

import time
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from herald.telemetry import tracing
from herald.telemetry.metrics import HTTP_SECONDS

Scope = dict[str, Any]
Message = dict[str, Any]
ASGIApp = Any

_tracer = trace.get_tracer("herald.http.server")
# Anything else a client sends as a method is "_OTHER" (as OpenTelemetry's conventions say): a span name and a
# metric label must not take whatever the internet puts there.
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_EMPTY = context.Context()


class _Answering:
    """The app's `send`, remembering the status it answered with (0 until it starts an answer)."""

    __slots__ = ("send", "status")

    def __init__(self, send: Any) -> None:
        self.send = send
        self.status = 0

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        await self.send(message)


class ServerSpans:
    """Wraps an ASGI app (outside its routing, so every call the request makes is a child of its span).

    With `metrics_service`, it also records `herald_http_request_duration_seconds` for that service (the
    gateway records its own, next to its admission middleware, and passes none).
    """

    def __init__(self, app: ASGIApp, metrics_service: str | None = None) -> None:
        self.app = app
        self.metrics_service = metrics_service

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "")
        method = method if method in HTTP_METHODS else "_OTHER"
        started = time.perf_counter()
        if not tracing.exporting():
            await self._unspanned(scope, receive, send, method, started)
            return
        with _tracer.start_as_current_span(
            method,
            context=_EMPTY,
            kind=SpanKind.SERVER,
            links=_caller_link(scope),
            attributes={"http.request.method": method},
            record_exception=True,
            set_status_on_exception=True,
        ) as span:
            answer = _Answering(send)
            try:
                await self.app(scope, receive, answer)
            finally:
                status = answer.status
                # The router records the route it matched in the (shared) scope.
                route = getattr(scope.get("route"), "path", None)
                if route:
                    span.update_name(f"{method} {route}")
                    span.set_attribute("http.route", route)
                if status:
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(Status(StatusCode.ERROR))
                self._observe(method, route, status, started)

    async def _unspanned(self, scope: Scope, receive: Any, send: Any, method: str, started: float) -> None:
        if self.metrics_service is None:
            await self.app(scope, receive, send)
            return
        answer = _Answering(send)
        try:
            await self.app(scope, receive, answer)
        finally:
            self._observe(method, getattr(scope.get("route"), "path", None), answer.status, started)

    def _observe(self, method: str, route: str | None, status: int, started: float) -> None:
        if self.metrics_service is not None:
            HTTP_SECONDS.labels(self.metrics_service, method, route or "unmatched", str(status or 500)).observe(
                time.perf_counter() - started
            )


def _caller_link(scope: Scope) -> list[Link]:
    """A link to the caller's span when the request carries a valid `traceparent` (nothing else is read)."""
    for name, value in scope.get("headers", ()):
        if name == b"traceparent":
            carrier = {"traceparent": value.decode("latin-1")}
            caller = trace.get_current_span(propagate.extract(carrier)).get_span_context()
            return [Link(caller)] if caller.is_valid else []
    return []
