"""Webhook subscriptions: targets (where), filters (which event types) and subscriptions (a
target + a filter, active or not). Each tenant sees only its own: another tenant's id is 404.
Lists are oldest first, cursor-paginated. A change reaches every router's fan-out cache
within milliseconds (the ledger announces it on the bus)."""

from __future__ import annotations

from datetime import UTC

from fastapi import APIRouter

from herald.v1 import common_pb2, ledger_subscriptions_pb2
from herald_gateway.access import Counted
from herald_gateway.http.crud import add_crud_routes, refuse_nulls
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.subscriptions import (
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
from herald_gateway.operations.subscriptions import FILTERS, SUBSCRIPTIONS, TARGETS

router = APIRouter(prefix="/v1/webhooks", tags=["subscriptions"])


# Targets


@router.post("/targets", status_code=201, response_model=TargetOut)
async def create_target(body: TargetIn, principal: Tenant, operations: OperationsDep) -> TargetOut:
    """A receiver URL with its own headers (same rules as POST /v1/webhooks). The optional
    rate limit (per minute) spaces deliveries evenly. A URL that is not http(s), or whose host
    is or resolves to a private, loopback, link-local or metadata address, is refused (422)
    unless the operator allow-listed it; the sender checks again when it connects. The target
    gets a signing secret of its own (`signing_key`, or one made here): GET
    /v1/webhooks/targets/{id}/secret reads it."""
    target = common_pb2.WebhookTarget(
        url=body.url,
        description=body.description,
        headers=body.headers,
        enabled=body.enabled,
        disabled_reason=body.disabled_reason or "",
    )
    if body.rate_limit_per_min is not None:
        target.rate_limit_per_min = body.rate_limit_per_min
    if body.max_in_flight is not None:
        target.max_in_flight = body.max_in_flight
    created = await operations.create_target(principal.tenant_id, target, body.signing_key or "")
    return target_out(created)


@router.patch("/targets/{target_id}", response_model=TargetOut)
async def update_target(target_id: str, body: TargetPatch, principal: Tenant, operations: OperationsDep) -> TargetOut:
    refuse_nulls(body, ("url", "description", "enabled"))
    given = body.model_fields_set
    update = ledger_subscriptions_pb2.UpdateWebhookTargetRequest(target_id=target_id)
    if body.url is not None:
        update.url = body.url
    if body.description is not None:
        update.description = body.description
    if "headers" in given:
        update.replace_headers = True
        update.headers.update(body.headers or {})
    if "rate_limit_per_min" in given:
        update.rate_limit_per_min = body.rate_limit_per_min or 0
    if "max_in_flight" in given:
        update.max_in_flight = body.max_in_flight or 0
    if body.enabled is not None:
        update.enabled = body.enabled
    if "disabled_reason" in given:
        update.disabled_reason = body.disabled_reason or ""
    updated = await operations.update_target(principal.tenant_id, update)
    return target_out(updated)


@router.post("/targets/{target_id}/recover", status_code=202, response_model=RecoverOut)
async def recover_target(target_id: str, body: RecoverIn, principal: Counted, operations: OperationsDep) -> RecoverOut:
    """Replays what the target missed: its deliveries that failed (or were dead-lettered) or
    were skipped (it was disabled, or the subscription paused) in [`since`, `until`) run again
    from PENDING, each as POST /v1/jobs/{id}/retry would; a skipped one counts against the
    quota then. The target must be enabled again first (409 while disabled); `until` before
    `since` is 422."""
    since = body.since if body.since.tzinfo is not None else body.since.replace(tzinfo=UTC)
    until = body.until if body.until is None or body.until.tzinfo is not None else body.until.replace(tzinfo=UTC)
    job_ids = await operations.recover_target(principal.tenant_id, target_id, since, until)
    return RecoverOut(target_id=target_id, recovered=len(job_ids), job_ids=job_ids)


@router.get("/retry-schedule", response_model=RetryScheduleOut)
async def get_retry_schedule(principal: Tenant, operations: OperationsDep) -> RetryScheduleOut:
    """The retry schedule in effect for your webhooks: your own, or the default."""
    return retry_schedule_out(await operations.retry_schedule(principal.tenant_id))


@router.put("/retry-schedule", response_model=RetryScheduleOut)
async def set_retry_schedule(body: RetryScheduleIn, principal: Tenant, operations: OperationsDep) -> RetryScheduleOut:
    """Your own retry delays (1-20 of them, each 1 s to 24 h, at most 3 days in all) and the
    4xx codes to retry; `delays_s` null or [] returns to the default. Applies to deliveries'
    next retry decisions within seconds."""
    schedule = await operations.set_retry_schedule(
        principal.tenant_id, list(body.delays_s or []), list(body.retry_statuses)
    )
    return retry_schedule_out(schedule)


# Filters


@router.post("/filters", status_code=201, response_model=FilterOut)
async def create_filter(body: FilterIn, principal: Tenant, operations: OperationsDep) -> FilterOut:
    event_filter = common_pb2.EventFilter(event_types=body.event_types, description=body.description)
    return filter_out(await operations.create_filter(principal.tenant_id, event_filter))


@router.patch("/filters/{filter_id}", response_model=FilterOut)
async def update_filter(filter_id: str, body: FilterPatch, principal: Tenant, operations: OperationsDep) -> FilterOut:
    """`event_types` replaces the whole list. Takes effect for the next event."""
    refuse_nulls(body, ("event_types", "description"))
    update = ledger_subscriptions_pb2.UpdateEventFilterRequest(filter_id=filter_id)
    if body.description is not None:
        update.description = body.description
    if body.event_types is not None:
        update.replace_event_types = True
        update.event_types.extend(body.event_types)
    return filter_out(await operations.update_filter(principal.tenant_id, update))


# Subscriptions


@router.post("/subscriptions", status_code=201, response_model=SubscriptionOut)
async def create_subscription(body: SubscriptionIn, principal: Tenant, operations: OperationsDep) -> SubscriptionOut:
    """Both the target and the filter must be the tenant's own (404 otherwise)."""
    subscription = common_pb2.Subscription(target_id=body.target_id, filter_id=body.filter_id, active=body.active)
    created = await operations.create_subscription(principal.tenant_id, subscription)
    return subscription_out(created)


@router.patch("/subscriptions/{subscription_id}", response_model=SubscriptionOut)
async def update_subscription(
    subscription_id: str, body: SubscriptionPatch, principal: Tenant, operations: OperationsDep
) -> SubscriptionOut:
    refuse_nulls(body, ("target_id", "filter_id", "active"))
    update = ledger_subscriptions_pb2.UpdateSubscriptionRequest(subscription_id=subscription_id)
    if body.target_id is not None:
        update.target_id = body.target_id
    if body.filter_id is not None:
        update.filter_id = body.filter_id
    if body.active is not None:
        update.active = body.active
    updated = await operations.update_subscription(principal.tenant_id, update)
    return subscription_out(updated)


add_crud_routes(
    router, "/targets", TARGETS, target_out, TargetList, "Deletes the target and the subscriptions that use it."
)
add_crud_routes(
    router, "/filters", FILTERS, filter_out, FilterList, "Deletes the filter and the subscriptions that use it."
)
add_crud_routes(router, "/subscriptions", SUBSCRIPTIONS, subscription_out, SubscriptionList)
