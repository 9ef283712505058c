"""Serving an ASGI app inside a service's event loop, next to its gRPC server.

uvicorn normally owns SIGINT/SIGTERM; here the service runtime owns them, and
the HTTP server stops when the runtime's `stopping` event is set, finishing the
requests it is answering. Every request gets an OpenTelemetry server span
(`herald.telemetry.http_spans`), the root of the trace it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Generator
from typing import Any

import uvicorn

from herald.http_health import Health
from herald.http_limits import GuardedHttpToolsProtocol, HttpLimits
from herald.telemetry.http_spans import ServerSpans


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


async def serve_asgi(
    app: Any,
    host: str,
    port: int,
    stopping: asyncio.Event,
    limits: HttpLimits | None = None,
    metrics_service: str | None = None,
    health: Health | None = None,
) -> None:
    """Serves `app` until `stopping` is set. `limits` bound headers, body and the time a client takes to send
    its request (see http_limits). `metrics_service`: record HTTP request metrics under that name (for apps
    that do not record their own). `health`: /healthz and /readyz, answered before spans and metrics (a
    probe is not traffic)."""
    limits = limits or HttpLimits()
    served = ServerSpans(app, metrics_service)
    server = _EmbeddedServer(
        uvicorn.Config(
            health.wrap(served) if health is not None else served,
            host=host,
            port=port,
            http=GuardedHttpToolsProtocol.with_limits(limits),
            log_config=None,
            access_log=False,
            # Herald does not use client addresses; parsing X-Forwarded-* costs every request.
            proxy_headers=False,
            timeout_graceful_shutdown=10,
            limit_concurrency=10_000,
            timeout_keep_alive=math.ceil(limits.keep_alive_s),
        )
    )
    serving = asyncio.create_task(server.serve())
    stop = asyncio.create_task(stopping.wait())
    await asyncio.wait({serving, stop}, return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    stop.cancel()
    await serving
