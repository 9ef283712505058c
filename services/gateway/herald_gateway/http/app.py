"""The HTTP application: routes are thin; the work is in `handlers`."""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated

import orjson
from fastapi import Depends, FastAPI, Header, Query, Request
from starlette.responses import Response
from starlette.routing import Match

from herald.telemetry.metrics import HTTP_SECONDS
from herald.v1 import common_pb2, ledger_pb2
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator, Principal
from herald_gateway.errors import Invalid
from herald_gateway.handlers import Handlers, WebhookInput
from herald_gateway.http import problems
from herald_gateway.http.schemas import (
    CHANNEL_VALUES,
    PLAN_NAMES,
    PLAN_VALUES,
    PRIORITY_VALUES,
    STATUS_NAMES,
    STATUS_VALUES,
    JobAccepted,
    JobList,
    JobOut,
    TenantCreated,
    TenantIn,
    WebhookIn,
    job_out,
)

MAX_REQUEST_BYTES = 8 * 1024 * 1024


async def current_tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    authenticator: ApiKeyAuthenticator = request.app.state.tenants
    return await authenticator.authenticate(authorization)


def current_operator(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
    authenticator: OperatorAuthenticator = request.app.state.operators
    authenticator.authenticate(authorization)


Tenant = Annotated[Principal, Depends(current_tenant)]


def create_app(handlers: Handlers, tenants: ApiKeyAuthenticator, operators: OperatorAuthenticator) -> FastAPI:
    app = FastAPI(
        title="Herald",
        version="0.1.0",
        description="Multi-tenant notification delivery: webhooks and email, delivered through flaky receivers "
        "and providers without losing a request.",
    )
    app.state.tenants = tenants
    app.state.operators = operators
    problems.install(app)

    @app.middleware("http")
    async def observe(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_REQUEST_BYTES):
            return problems.problem(413, "payload-too-large", "Payload too large", "the request body is too large")
        started = time.perf_counter()
        response = await call_next(request)
        route = next(
            (r.path for r in app.router.routes if r.matches(request.scope)[0] == Match.FULL),  # type: ignore[attr-defined]
            "unmatched",
        )
        HTTP_SECONDS.labels("gateway", request.method, route, str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response

    @app.post("/v1/webhooks", status_code=202, response_model=JobAccepted, tags=["webhooks"])
    async def send_webhook(
        body: WebhookIn,
        principal: Tenant,
        response: Response,
        idempotency_key: Annotated[str | None, Header()] = None,
    ) -> JobAccepted:
        """Accepts a webhook for delivery. The job is durable when this answers 202."""
        has_json = "payload" in body.model_fields_set
        if has_json == (body.payload_base64 is not None):
            raise Invalid([("payload", "give exactly one of payload and payload_base64")])
        if body.payload_base64 is not None:
            try:
                raw = base64.b64decode(body.payload_base64, validate=True)
            except (binascii.Error, ValueError) as error:
                raise Invalid([("payload_base64", "is not valid base64")]) from error
            content_type = body.content_type or "application/octet-stream"
        else:
            raw = orjson.dumps(body.payload)
            content_type = body.content_type or "application/json"
        job = await handlers.send_webhook(
            principal,
            WebhookInput(
                url=body.url,
                body=raw,
                content_type=content_type,
                headers=body.headers,
                priority=PRIORITY_VALUES.get(body.priority or "", common_pb2.PRIORITY_UNSPECIFIED),
                idempotency_key=idempotency_key or "",
            ),
        )
        response.headers["Location"] = f"/v1/jobs/{job.id}"
        return JobAccepted(id=job.id, status=STATUS_NAMES.get(job.status, "pending"))

    @app.get("/v1/jobs/{job_id}", response_model=JobOut, tags=["jobs"])
    async def get_job(job_id: str, principal: Tenant) -> JobOut:
        job, attempts = await handlers.get_job(principal, job_id)
        return job_out(job, attempts)

    @app.get("/v1/jobs", response_model=JobList, tags=["jobs"])
    async def list_jobs(
        principal: Tenant,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Query(max_length=200)] = None,
        status: Annotated[str | None, Query(pattern="^(pending|queued|delivering|delivered|failed)$")] = None,
        channel: Annotated[str | None, Query(pattern="^(webhook|email|platform_email)$")] = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> JobList:
        request = ledger_pb2.ListJobsRequest(
            page_size=limit,
            cursor=cursor or "",
            status=STATUS_VALUES.get(status or "", 0),  # type: ignore[arg-type]
            channel=CHANNEL_VALUES.get(channel or "", 0),  # type: ignore[arg-type]
        )
        if created_after is not None:
            request.created_after.FromDatetime(created_after)
        if created_before is not None:
            request.created_before.FromDatetime(created_before)
        page = await handlers.list_jobs(principal, request)
        return JobList(data=[job_out(j) for j in page.jobs], next_cursor=page.next_cursor or None)

    @app.post(
        "/admin/v1/tenants",
        status_code=201,
        response_model=TenantCreated,
        tags=["admin"],
        dependencies=[Depends(current_operator)],
    )
    async def create_tenant(body: TenantIn) -> TenantCreated:
        tenant, api_key = await handlers.create_tenant(body.name, PLAN_VALUES[body.plan])
        return TenantCreated(tenant_id=tenant.id, name=tenant.name, plan=PLAN_NAMES[tenant.plan], api_key=api_key)

    return app
