"""The HTTP application: routes are thin; the work is in `handlers`."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from starlette.responses import Response

from herald.telemetry.metrics import HTTP_SECONDS
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator
from herald_gateway.handlers import Handlers
from herald_gateway.http import problems
from herald_gateway.http.admission import rate_limit_headers, with_idempotency
from herald_gateway.http.routes import (
    admin,
    api_keys,
    batches,
    domains,
    emails,
    events,
    inbound,
    jobs,
    providers,
    subscriptions,
    suppressions,
    usage,
    webhook_secret,
    webhooks,
)
from herald_gateway.idempotency import Idempotency
from herald_gateway.rate_limit import RateLimiter

MAX_REQUEST_BYTES = 8 * 1024 * 1024


def create_app(
    handlers: Handlers,
    tenants: ApiKeyAuthenticator,
    operators: OperatorAuthenticator,
    rate_limiter: RateLimiter,
    idempotency: Idempotency,
) -> FastAPI:
    app = FastAPI(
        title="Herald",
        version="0.1.0",
        description="Multi-tenant notification delivery: webhooks and email, delivered through flaky receivers "
        "and providers without losing a request.",
    )
    app.state.handlers = handlers
    app.state.tenants = tenants
    app.state.operators = operators
    app.state.rate_limiter = rate_limiter
    problems.install(app)
    for module in (
        batches,
        webhooks,
        subscriptions,
        events,
        emails,
        jobs,
        usage,
        suppressions,
        api_keys,
        providers,
        domains,
        webhook_secret,
        inbound,
        admin,
    ):
        app.include_router(module.router)
    app.include_router(inbound.admin_router)

    @app.middleware("http")
    async def observe(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_REQUEST_BYTES):
            return problems.problem(413, "payload-too-large", "Payload too large", "the request body is too large")
        started = time.perf_counter()
        response = await with_idempotency(request, call_next, tenants, idempotency)
        await rate_limit_headers(request, response, tenants, rate_limiter)
        # The router records the route it matched in the scope: label by its template, never the raw path.
        matched = request.scope.get("route")
        route = getattr(matched, "path", None) or "unmatched"
        HTTP_SECONDS.labels("gateway", request.method, route, str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response

    return app
