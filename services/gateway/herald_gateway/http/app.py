"""The HTTP application: routes are thin; the work is in `herald_gateway.operations`."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

from herald import http_health
from herald_gateway import console
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator
from herald_gateway.http import docs_pages, problems
from herald_gateway.http.audit import AuditTrail
from herald_gateway.http.lean import LeanSubmitRoutes
from herald_gateway.http.middleware import GatewayMiddleware
from herald_gateway.http.routes import (
    admin,
    api_keys,
    audit,
    batches,
    domains,
    emails,
    events,
    inbound,
    jobs,
    providers,
    subscriptions,
    suppressions,
    target_secrets,
    usage,
    webhook_secret,
    webhooks,
)
from herald_gateway.idempotency import Idempotency
from herald_gateway.operations import Operations
from herald_gateway.rate_limit import RateLimiter

OPENAPI_PATH = "/openapi.json"


def create_app(
    operations: Operations,
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
        # FastAPI's own OpenTelemetry (on whenever a tracer provider is set) is off: every HTTP entry point gets
        # one server span from herald.telemetry.http_spans (see herald.asgi), which starts a new trace rather
        # than continuing one an internet caller chose. Profiled, FastAPI's (with its per-dependency,
        # per-endpoint and serialization spans) cost a fifth of the gateway's CPU per request.
        openapi_url=OPENAPI_PATH,
        docs_url=None,
        redoc_url=None,
        telemetry={"tracing": False, "operation_spans": False, "metrics": False, "logs": False},
    )
    app.state.operations = operations
    app.state.tenants = tenants
    app.state.operators = operators
    app.state.rate_limiter = rate_limiter
    problems.install(app)
    for module in (
        batches,
        webhooks,
        subscriptions,
        target_secrets,
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
        audit,
    ):
        app.include_router(module.router)
    app.include_router(inbound.admin_router)
    app.include_router(audit.admin_router)
    console.mount(app)
    docs_pages.mount(app, OPENAPI_PATH)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            # FastAPI builds the document and caches it on the app; the errors are declared once, on the cache.
            # /healthz and /readyz are served in front of the app (herald.http_health), documented here.
            http_health.document(docs_pages.declare_bearer(problems.document(FastAPI.openapi(app))))
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]
    document_built = asyncio.Lock()

    async def serve_openapi(request: Request) -> Response:
        # The first build takes about half a second of CPU: in a thread, so that the event loop keeps answering
        # the submit routes meanwhile instead of every tenant's requests stalling behind one GET /openapi.json.
        if app.openapi_schema is None:
            async with document_built:
                if app.openapi_schema is None:
                    await asyncio.to_thread(app.openapi)
        return Response(orjson.dumps(app.openapi_schema), media_type="application/json")

    app.router.routes = [route for route in app.router.routes if getattr(route, "path", None) != OPENAPI_PATH]
    app.add_route(OPENAPI_PATH, serve_openapi, include_in_schema=False)
    # Inside the gateway middleware (added after it, so it wraps this): the submit routes' lean path.
    app.add_middleware(
        LeanSubmitRoutes, api=app, routers=(batches.router, webhooks.router, emails.router, events.router)
    )
    # Between the two: records configuration changes (submissions pass straight through).
    app.add_middleware(AuditTrail, api=app)
    app.add_middleware(GatewayMiddleware, tenants=tenants, rate_limiter=rate_limiter, idempotency=idempotency)
    return app
