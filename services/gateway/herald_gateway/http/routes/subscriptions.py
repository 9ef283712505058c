"""Webhook subscriptions: targets (where), filters (which event types) and subscriptions (a
target + a filter, active or not). Each tenant sees only its own: another tenant's id is 404.
Lists are oldest first, cursor-paginated. A change reaches every router's fan-out cache
within milliseconds (the ledger announces it on the bus)."""

from __future__ import annotations

from datetime import UTC
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from herald.v1 import common_pb2, ledger_pb2
from herald_gateway.errors import Invalid
from herald_gateway.http.admission import Counted
from herald_gateway.http.deps import HandlersDep, Tenant
from herald_gateway.http.schemas import (
    FilterIn,
    FilterList,
    FilterOut,
    FilterPatch,
    RecoverIn,
    RecoverOut,
    RetryScheduleIn,
    RetryScheduleOut,
    SubscriptionIn,
    SubscriptionList,
    SubscriptionOut,
    SubscriptionPatch,
    TargetIn,
    TargetList,
    TargetOut,
    TargetPatch,
    filter_out,
    retry_schedule_out,
    subscription_out,
    target_out,
)
from herald_gateway.subscriptions import Subscriptions

router = APIRouter(prefix="/v1/webhooks", tags=["subscriptions"])
Limit = Annotated[int, Query(ge=1, le=200)]
Cursor = Annotated[str | None, Query(max_length=200)]


def subscriptions_of(request: Request, handlers: HandlersDep) -> Subscriptions:
    found: Subscriptions | None = getattr(request.app.state, "subscriptions", None)
    if found is None:
        found = Subscriptions(handlers.ledger, handlers.router, handlers.target_check)
        request.app.state.subscriptions = found
    return found


# Targets


@router.post("/targets", status_code=201, response_model=TargetOut)
async def create_target(body: TargetIn, principal: Tenant, handlers: HandlersDep, request: Request) -> TargetOut:
    """A receiver URL with its own headers (same rules as POST /v1/webhooks). The optional
    rate limit (per minute) spaces deliveries evenly. A URL that is not http(s), or whose host
    is or resolves to a private, loopback, link-local or metadata address, is refused (422)
    unless the operator allow-listed it; the sender checks again when it connects."""
    target = common_pb2.WebhookTarget(
        url=body.url,
        description=body.description,
        headers=body.headers,
        enabled=body.enabled,
        disabled_reason=body.disabled_reason or "",
    )
    if body.rate_limit_per_min is not None:
        target.rate_limit_per_min = body.rate_limit_per_min
    created = await subscriptions_of(request, handlers).create_target(principal.tenant_id, target)
    return target_out(created)


@router.get("/targets", response_model=TargetList)
async def list_targets(
    principal: Tenant, handlers: HandlersDep, request: Request, limit: Limit = 50, cursor: Cursor = None
) -> TargetList:
    targets, next_cursor = await subscriptions_of(request, handlers).list_targets(
        principal.tenant_id, limit, cursor or ""
    )
    return TargetList(data=[target_out(t) for t in targets], next_cursor=next_cursor or None)


@router.get("/targets/{target_id}", response_model=TargetOut)
async def get_target(target_id: str, principal: Tenant, handlers: HandlersDep, request: Request) -> TargetOut:
    return target_out(await subscriptions_of(request, handlers).get_target(principal.tenant_id, target_id))


@router.patch("/targets/{target_id}", response_model=TargetOut)
async def update_target(
    target_id: str, body: TargetPatch, principal: Tenant, handlers: HandlersDep, request: Request
) -> TargetOut:
    given = body.model_fields_set
    for name in ("url", "description", "enabled"):
        if name in given and getattr(body, name) is None:
            raise Invalid([(name, "cannot be null")])
    update = ledger_pb2.UpdateWebhookTargetRequest(target_id=target_id)
    if body.url is not None:
        update.url = body.url
    if body.description is not None:
        update.description = body.description
    if "headers" in given:
        update.replace_headers = True
        update.headers.update(body.headers or {})
    if "rate_limit_per_min" in given:
        update.rate_limit_per_min = body.rate_limit_per_min or 0
    if body.enabled is not None:
        update.enabled = body.enabled
    if "disabled_reason" in given:
        update.disabled_reason = body.disabled_reason or ""
    updated = await subscriptions_of(request, handlers).update_target(principal.tenant_id, update)
    return target_out(updated)


@router.post("/targets/{target_id}/recover", status_code=202, response_model=RecoverOut)
async def recover_target(
    target_id: str, body: RecoverIn, principal: Counted, handlers: HandlersDep, request: Request
) -> RecoverOut:
    """Replays what the target missed: its deliveries that failed (or were dead-lettered)
    since `since` run again from PENDING, each as POST /v1/jobs/{id}/retry would. The target
    must be enabled again first (409 while disabled)."""
    since = body.since if body.since.tzinfo is not None else body.since.replace(tzinfo=UTC)
    job_ids = await subscriptions_of(request, handlers).recover_target(principal.tenant_id, target_id, since)
    return RecoverOut(target_id=target_id, recovered=len(job_ids), job_ids=job_ids)


@router.get("/retry-schedule", response_model=RetryScheduleOut)
async def get_retry_schedule(principal: Tenant, handlers: HandlersDep, request: Request) -> RetryScheduleOut:
    """The retry schedule in effect for your webhooks: your own, or the default."""
    return retry_schedule_out(await subscriptions_of(request, handlers).retry_schedule(principal.tenant_id))


@router.put("/retry-schedule", response_model=RetryScheduleOut)
async def set_retry_schedule(
    body: RetryScheduleIn, principal: Tenant, handlers: HandlersDep, request: Request
) -> RetryScheduleOut:
    """Your own retry delays (1-20 of them, each 1 s to 24 h, at most 3 days in all) and the
    4xx codes to retry; `delays_s` null or [] returns to the default. Applies to deliveries'
    next retry decisions within seconds."""
    schedule = await subscriptions_of(request, handlers).set_retry_schedule(
        principal.tenant_id, list(body.delays_s or []), list(body.retry_statuses)
    )
    return retry_schedule_out(schedule)


@router.delete("/targets/{target_id}", status_code=204)
async def delete_target(target_id: str, principal: Tenant, handlers: HandlersDep, request: Request) -> Response:
    """Deletes the target and the subscriptions that use it."""
    await subscriptions_of(request, handlers).delete_target(principal.tenant_id, target_id)
    return Response(status_code=204)


# Filters


@router.post("/filters", status_code=201, response_model=FilterOut)
async def create_filter(body: FilterIn, principal: Tenant, handlers: HandlersDep, request: Request) -> FilterOut:
    event_filter = common_pb2.EventFilter(event_types=body.event_types, description=body.description)
    return filter_out(await subscriptions_of(request, handlers).create_filter(principal.tenant_id, event_filter))


@router.get("/filters", response_model=FilterList)
async def list_filters(
    principal: Tenant, handlers: HandlersDep, request: Request, limit: Limit = 50, cursor: Cursor = None
) -> FilterList:
    filters, next_cursor = await subscriptions_of(request, handlers).list_filters(
        principal.tenant_id, limit, cursor or ""
    )
    return FilterList(data=[filter_out(f) for f in filters], next_cursor=next_cursor or None)


@router.get("/filters/{filter_id}", response_model=FilterOut)
async def get_filter(filter_id: str, principal: Tenant, handlers: HandlersDep, request: Request) -> FilterOut:
    return filter_out(await subscriptions_of(request, handlers).get_filter(principal.tenant_id, filter_id))


@router.patch("/filters/{filter_id}", response_model=FilterOut)
async def update_filter(
    filter_id: str, body: FilterPatch, principal: Tenant, handlers: HandlersDep, request: Request
) -> FilterOut:
    """`event_types` replaces the whole list. Takes effect for the next event."""
    given = body.model_fields_set
    for name in ("event_types", "description"):
        if name in given and getattr(body, name) is None:
            raise Invalid([(name, "cannot be null")])
    update = ledger_pb2.UpdateEventFilterRequest(filter_id=filter_id)
    if body.description is not None:
        update.description = body.description
    if body.event_types is not None:
        update.replace_event_types = True
        update.event_types.extend(body.event_types)
    return filter_out(await subscriptions_of(request, handlers).update_filter(principal.tenant_id, update))


@router.delete("/filters/{filter_id}", status_code=204)
async def delete_filter(filter_id: str, principal: Tenant, handlers: HandlersDep, request: Request) -> Response:
    """Deletes the filter and the subscriptions that use it."""
    await subscriptions_of(request, handlers).delete_filter(principal.tenant_id, filter_id)
    return Response(status_code=204)


# Subscriptions


@router.post("/subscriptions", status_code=201, response_model=SubscriptionOut)
async def create_subscription(
    body: SubscriptionIn, principal: Tenant, handlers: HandlersDep, request: Request
) -> SubscriptionOut:
    """Both the target and the filter must be the tenant's own (404 otherwise)."""
    subscription = common_pb2.Subscription(target_id=body.target_id, filter_id=body.filter_id, active=body.active)
    created = await subscriptions_of(request, handlers).create_subscription(principal.tenant_id, subscription)
    return subscription_out(created)


@router.get("/subscriptions", response_model=SubscriptionList)
async def list_subscriptions(
    principal: Tenant, handlers: HandlersDep, request: Request, limit: Limit = 50, cursor: Cursor = None
) -> SubscriptionList:
    found, next_cursor = await subscriptions_of(request, handlers).list_subscriptions(
        principal.tenant_id, limit, cursor or ""
    )
    return SubscriptionList(data=[subscription_out(s) for s in found], next_cursor=next_cursor or None)


@router.get("/subscriptions/{subscription_id}", response_model=SubscriptionOut)
async def get_subscription(
    subscription_id: str, principal: Tenant, handlers: HandlersDep, request: Request
) -> SubscriptionOut:
    found = await subscriptions_of(request, handlers).get_subscription(principal.tenant_id, subscription_id)
    return subscription_out(found)


@router.patch("/subscriptions/{subscription_id}", response_model=SubscriptionOut)
async def update_subscription(
    subscription_id: str, body: SubscriptionPatch, principal: Tenant, handlers: HandlersDep, request: Request
) -> SubscriptionOut:
    given = body.model_fields_set
    for name in ("target_id", "filter_id", "active"):
        if name in given and getattr(body, name) is None:
            raise Invalid([(name, "cannot be null")])
    update = ledger_pb2.UpdateSubscriptionRequest(subscription_id=subscription_id)
    if body.target_id is not None:
        update.target_id = body.target_id
    if body.filter_id is not None:
        update.filter_id = body.filter_id
    if body.active is not None:
        update.active = body.active
    updated = await subscriptions_of(request, handlers).update_subscription(principal.tenant_id, update)
    return subscription_out(updated)


@router.delete("/subscriptions/{subscription_id}", status_code=204)
async def delete_subscription(
    subscription_id: str, principal: Tenant, handlers: HandlersDep, request: Request
) -> Response:
    await subscriptions_of(request, handlers).delete_subscription(principal.tenant_id, subscription_id)
    return Response(status_code=204)
