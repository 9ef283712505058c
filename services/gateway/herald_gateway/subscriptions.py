"""Webhook subscriptions (targets, filters, subscriptions) and tenant events: validation and
the calls behind both surfaces. The ledger keeps the state; the router fans events out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import grpc

from herald.config import get_settings
from herald.ids import parse_id
from herald.v1 import common_pb2, gateway_pb2, ledger_pb2, ledger_pb2_grpc, router_pb2, router_pb2_grpc
from herald.webhooks.retry_policy import retry_status_problems, schedule_problems
from herald_gateway.auth import Principal
from herald_gateway.errors import Invalid, NotFound, QuotaExceeded, TargetDisabled
from herald_gateway.handlers import MAX_BODY_BYTES, WebhookInput, _translate, validate_webhook
from herald_gateway.target_check import TargetCheck

# Dot-separated tokens of letters, digits, "_" and "-": `orders.created.v1`.
EVENT_TYPE = re.compile(r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$")
MAX_EVENT_TYPE = 255
MAX_EVENT_TYPES = 100
# A recovery runs at most this many batches (of up to 1000 failed deliveries each).
MAX_RECOVER_ROUNDS = 20


def event_type_ok(value: str) -> bool:
    return len(value) <= MAX_EVENT_TYPE and EVENT_TYPE.fullmatch(value) is not None


def pattern_ok(value: str) -> bool:
    """An exact type, a prefix wildcard (`orders.*`) or `*`."""
    if value == "*":
        return True
    if value.endswith(".*"):
        return event_type_ok(value[:-2])
    return event_type_ok(value)


def event_types_problems(types: list[str]) -> list[tuple[str, str]]:
    if not types or len(types) > MAX_EVENT_TYPES:
        return [("event_types", f"1-{MAX_EVENT_TYPES} event types")]
    return [
        (f"event_types[{i}]", "an event type (orders.created.v1), a prefix wildcard (orders.*) or *")
        for i, t in enumerate(types)
        if not pattern_ok(t)
    ]


def _schedule_view(settings: ledger_pb2.WebhookSettings) -> gateway_pb2.WebhookRetrySchedule:
    """The schedule in effect: the tenant's own, or the operator's default."""
    delays = list(settings.retry_schedule_s) or list(get_settings().webhook_retry_schedule_s)
    statuses = list(settings.retry_statuses) or list(get_settings().webhook_retry_statuses)
    return gateway_pb2.WebhookRetrySchedule(
        delays_s=delays, retry_statuses=statuses, custom=bool(settings.retry_schedule_s), max_attempts=len(delays) + 1
    )


def target_problems(url: str, headers: dict[str, str]) -> list[tuple[str, str]]:
    """The same URL and header rules as a direct webhook (POST /v1/webhooks)."""
    return validate_webhook(WebhookInput(url=url, body=b"", headers=headers))


@dataclass
class EventInput:
    event_type: str
    payload: bytes
    content_type: str
    event_id: str = ""


class Subscriptions:
    def __init__(
        self,
        ledger: ledger_pb2_grpc.LedgerServiceAsyncStub,
        router: router_pb2_grpc.RouterServiceAsyncStub,
        target_check: TargetCheck | None = None,
    ) -> None:
        self.ledger = ledger
        self.router = router
        self.target_check = target_check

    async def _url_problems(self, url: str) -> list[tuple[str, str]]:
        return await self.target_check.problems(url) if self.target_check is not None else []

    # Targets

    async def create_target(self, tenant_id: str, target: common_pb2.WebhookTarget) -> common_pb2.WebhookTarget:
        problems = target_problems(target.url, dict(target.headers)) or await self._url_problems(target.url)
        if problems:
            raise Invalid(problems)
        target.tenant_id = tenant_id
        try:
            response = await self.ledger.CreateWebhookTarget(ledger_pb2.CreateWebhookTargetRequest(target=target))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "target") from error
        created: common_pb2.WebhookTarget = response.target
        return created

    async def get_target(self, tenant_id: str, target_id: str) -> common_pb2.WebhookTarget:
        try:
            response = await self.ledger.GetWebhookTarget(
                ledger_pb2.GetWebhookTargetRequest(tenant_id=tenant_id, target_id=target_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "target") from error
        found: common_pb2.WebhookTarget = response.target
        return found

    async def list_targets(self, tenant_id: str, limit: int, cursor: str) -> tuple[list[common_pb2.WebhookTarget], str]:
        try:
            response = await self.ledger.ListWebhookTargets(
                ledger_pb2.ListWebhookTargetsRequest(tenant_id=tenant_id, page_size=limit, cursor=cursor)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "targets") from error
        return list(response.targets), response.next_cursor

    async def update_target(
        self, tenant_id: str, request: ledger_pb2.UpdateWebhookTargetRequest
    ) -> common_pb2.WebhookTarget:
        current = await self.get_target(tenant_id, request.target_id)
        url = request.url if request.HasField("url") else current.url
        headers = dict(request.headers) if request.replace_headers else {}
        problems = target_problems(url, headers)
        if not problems and request.HasField("url"):
            problems = await self._url_problems(url)
        if problems:
            raise Invalid(problems)
        request.tenant_id = tenant_id
        try:
            response = await self.ledger.UpdateWebhookTarget(request)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "target") from error
        updated: common_pb2.WebhookTarget = response.target
        return updated

    async def delete_target(self, tenant_id: str, target_id: str) -> None:
        try:
            await self.ledger.DeleteWebhookTarget(
                ledger_pb2.DeleteWebhookTargetRequest(tenant_id=tenant_id, target_id=target_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "target") from error

    async def recover_target(self, tenant_id: str, target_id: str, since: datetime) -> list[str]:
        """Runs the target's FAILED deliveries since `since` again, each from PENDING with a
        fresh attempt budget, exactly as POST /v1/jobs/{id}/retry does. The target must be
        enabled (409 otherwise). Returns the jobs run again, oldest failure first."""
        if parse_id(target_id) is None:
            raise NotFound("target not found")
        recovered: list[str] = []
        seen: set[str] = set()
        for _ in range(MAX_RECOVER_ROUNDS):
            request = ledger_pb2.ListTargetFailuresRequest(tenant_id=tenant_id, target_id=target_id)
            request.since.FromDatetime(since)
            try:
                failures = await self.ledger.ListTargetFailures(request)
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    raise TargetDisabled(error.details() or "the target is disabled") from error
                raise _translate(error, "target") from error
            batch = [job_id for job_id in failures.job_ids if job_id not in seen]
            if not batch:
                break
            seen.update(batch)
            try:
                retried = await self.router.RetryJobs(
                    router_pb2.RouterServiceRetryJobsRequest(tenant_id=tenant_id, job_ids=batch)
                )
            except grpc.aio.AioRpcError as error:
                raise _translate(error, "deliveries") from error
            recovered.extend(o.job_id for o in retried.outcomes if o.retried)
        return recovered

    # Retry schedule

    async def retry_schedule(self, tenant_id: str) -> gateway_pb2.WebhookRetrySchedule:
        try:
            found = await self.ledger.GetWebhookSettings(ledger_pb2.GetWebhookSettingsRequest(tenant_id=tenant_id))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "webhook settings") from error
        return _schedule_view(found.settings)

    async def set_retry_schedule(
        self, tenant_id: str, delays_s: list[float], retry_statuses: list[int]
    ) -> gateway_pb2.WebhookRetrySchedule:
        """Empty delays: back to the operator's default. Bounded (see retry_policy)."""
        problems = [("delays_s", why) for why in schedule_problems(delays_s)] if delays_s else []
        problems += [("retry_statuses", why) for why in retry_status_problems(retry_statuses)]
        if problems:
            raise Invalid(problems)
        request = ledger_pb2.SetWebhookSettingsRequest(
            tenant_id=tenant_id,
            settings=ledger_pb2.WebhookSettings(retry_schedule_s=delays_s, retry_statuses=retry_statuses),
        )
        try:
            stored = await self.ledger.SetWebhookSettings(request)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "webhook settings") from error
        return _schedule_view(stored.settings)

    # Filters

    async def create_filter(self, tenant_id: str, event_filter: common_pb2.EventFilter) -> common_pb2.EventFilter:
        problems = event_types_problems(list(event_filter.event_types))
        if problems:
            raise Invalid(problems)
        event_filter.tenant_id = tenant_id
        try:
            response = await self.ledger.CreateEventFilter(ledger_pb2.CreateEventFilterRequest(filter=event_filter))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "filter") from error
        created: common_pb2.EventFilter = response.filter
        return created

    async def get_filter(self, tenant_id: str, filter_id: str) -> common_pb2.EventFilter:
        try:
            response = await self.ledger.GetEventFilter(
                ledger_pb2.GetEventFilterRequest(tenant_id=tenant_id, filter_id=filter_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "filter") from error
        found: common_pb2.EventFilter = response.filter
        return found

    async def list_filters(self, tenant_id: str, limit: int, cursor: str) -> tuple[list[common_pb2.EventFilter], str]:
        try:
            response = await self.ledger.ListEventFilters(
                ledger_pb2.ListEventFiltersRequest(tenant_id=tenant_id, page_size=limit, cursor=cursor)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "filters") from error
        return list(response.filters), response.next_cursor

    async def update_filter(
        self, tenant_id: str, request: ledger_pb2.UpdateEventFilterRequest
    ) -> common_pb2.EventFilter:
        if request.replace_event_types:
            problems = event_types_problems(list(request.event_types))
            if problems:
                raise Invalid(problems)
        request.tenant_id = tenant_id
        try:
            response = await self.ledger.UpdateEventFilter(request)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "filter") from error
        updated: common_pb2.EventFilter = response.filter
        return updated

    async def delete_filter(self, tenant_id: str, filter_id: str) -> None:
        try:
            await self.ledger.DeleteEventFilter(
                ledger_pb2.DeleteEventFilterRequest(tenant_id=tenant_id, filter_id=filter_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "filter") from error

    # Subscriptions

    async def create_subscription(
        self, tenant_id: str, subscription: common_pb2.Subscription
    ) -> common_pb2.Subscription:
        subscription.tenant_id = tenant_id
        try:
            response = await self.ledger.CreateSubscription(
                ledger_pb2.CreateSubscriptionRequest(subscription=subscription)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "target or filter") from error
        created: common_pb2.Subscription = response.subscription
        return created

    async def get_subscription(self, tenant_id: str, subscription_id: str) -> common_pb2.Subscription:
        try:
            response = await self.ledger.GetSubscription(
                ledger_pb2.GetSubscriptionRequest(tenant_id=tenant_id, subscription_id=subscription_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "subscription") from error
        found: common_pb2.Subscription = response.subscription
        return found

    async def list_subscriptions(
        self, tenant_id: str, limit: int, cursor: str
    ) -> tuple[list[common_pb2.Subscription], str]:
        try:
            response = await self.ledger.ListSubscriptions(
                ledger_pb2.ListSubscriptionsRequest(tenant_id=tenant_id, page_size=limit, cursor=cursor)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "subscriptions") from error
        return list(response.subscriptions), response.next_cursor

    async def update_subscription(
        self, tenant_id: str, request: ledger_pb2.UpdateSubscriptionRequest
    ) -> common_pb2.Subscription:
        request.tenant_id = tenant_id
        try:
            response = await self.ledger.UpdateSubscription(request)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise NotFound(error.details() or "subscription not found") from error
            raise _translate(error, "subscription") from error
        updated: common_pb2.Subscription = response.subscription
        return updated

    async def delete_subscription(self, tenant_id: str, subscription_id: str) -> None:
        try:
            await self.ledger.DeleteSubscription(
                ledger_pb2.DeleteSubscriptionRequest(tenant_id=tenant_id, subscription_id=subscription_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "subscription") from error

    # Events

    async def publish_event(self, principal: Principal, event: EventInput) -> router_pb2.PublishEventResponse:
        problems: list[tuple[str, str]] = []
        if not event_type_ok(event.event_type):
            problems.append(("event_type", "dot-separated tokens of letters, digits, _ and - (orders.created.v1)"))
        if event.event_id and (len(event.event_id) > 255 or not all(33 <= ord(c) < 127 for c in event.event_id)):
            problems.append(("event_id", "1-255 printable ASCII characters without spaces"))
        if len(event.payload) > MAX_BODY_BYTES:
            problems.append(("payload", f"must be at most {MAX_BODY_BYTES} bytes"))
        if any(c in event.content_type for c in "\r\n\0") or len(event.content_type) > 255:
            problems.append(("content_type", "one line of at most 255 characters"))
        if problems:
            raise Invalid(problems)
        try:
            response = await self.router.PublishEvent(
                router_pb2.PublishEventRequest(
                    tenant_id=principal.tenant_id,
                    plan=principal.plan,  # type: ignore[arg-type]
                    event_type=event.event_type,
                    event_id=event.event_id,
                    payload=event.payload,
                    content_type=event.content_type,
                )
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "event") from error
        if response.rejection != ledger_pb2.REJECTION_UNSPECIFIED:
            raise QuotaExceeded(response.detail or "monthly quota reached")
        return response
