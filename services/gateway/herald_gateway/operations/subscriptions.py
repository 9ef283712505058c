"""Webhook subscriptions (targets, filters, subscriptions), the retry schedule and tenant
events: what each checks, then the ledger keeps the state (through `Crud`) and the router fans
events out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import grpc

from herald.config import get_settings
from herald.crypto import webhook_secret_problem
from herald.ids import TenantId, parse_id
from herald.v1 import common_pb2, gateway_pb2, ledger_pb2, ledger_subscriptions_pb2, router_pb2
from herald.webhooks.retry_policy import retry_status_problems, schedule_problems
from herald_gateway.auth import Principal
from herald_gateway.errors import Invalid, NotFound, TargetDisabled, ask, refuse_invalid, refused
from herald_gateway.operations.base import OperationsBase
from herald_gateway.operations.crud import Resource
from herald_gateway.operations.validation import MAX_BODY_BYTES, keys_problems, webhook_problems

TARGETS: Resource[common_pb2.WebhookTarget] = Resource(
    "target", "subscriptions", "WebhookTarget", "target", "targets", "target_id", (("with_breaker", True),)
)
FILTERS: Resource[common_pb2.EventFilter] = Resource(
    "filter", "subscriptions", "EventFilter", "filter", "filters", "filter_id"
)
SUBSCRIPTIONS: Resource[common_pb2.Subscription] = Resource(
    "subscription", "subscriptions", "Subscription", "subscription", "subscriptions", "subscription_id"
)

# Dot-separated tokens of letters, digits, "_" and "-": `orders.created.v1`.
EVENT_TYPE = re.compile(r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$")
MAX_EVENT_TYPE = 255
MAX_EVENT_TYPES = 100
# A recovery runs at most this many batches (of up to 1000 failed deliveries each).
MAX_RECOVER_ROUNDS = 20


# Herald's own event types (operational events); a tenant cannot send them.
HERALD_PREFIX = "herald."


def event_type_ok(value: str) -> bool:
    return len(value) <= MAX_EVENT_TYPE and EVENT_TYPE.fullmatch(value) is not None


def event_id_ok(value: str) -> bool:
    """1-255 printable ASCII characters without spaces."""
    return 0 < len(value) <= 255 and all(33 <= ord(c) < 127 for c in value)


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


def _schedule_view(settings: ledger_subscriptions_pb2.WebhookSettings) -> gateway_pb2.WebhookRetrySchedule:
    """The schedule in effect: the tenant's own, or the operator's default."""
    delays = list(settings.retry_schedule_s) or list(get_settings().webhook_retry_schedule_s)
    statuses = list(settings.retry_statuses) or list(get_settings().webhook_retry_statuses)
    return gateway_pb2.WebhookRetrySchedule(
        delays_s=delays, retry_statuses=statuses, custom=bool(settings.retry_schedule_s), max_attempts=len(delays) + 1
    )


def target_problems(url: str, headers: dict[str, str]) -> list[tuple[str, str]]:
    """The same URL and header rules as a direct webhook (POST /v1/webhooks)."""
    return webhook_problems(url, headers)


@dataclass
class EventInput:
    event_type: str
    payload: bytes
    content_type: str
    event_id: str = ""
    ordering_key: str = ""


# The ledger's FAILED_PRECONDITION on a target's failures: the target is disabled.
DISABLED = {grpc.StatusCode.FAILED_PRECONDITION: lambda e: TargetDisabled(e.details() or "the target is disabled")}
# A subscription's update names the target or filter the ledger did not find.
MISSING_PART = {grpc.StatusCode.NOT_FOUND: lambda e: NotFound(e.details() or "subscription not found")}


class SubscriptionOperations(OperationsBase):
    # Targets

    async def create_target(
        self, tenant_id: TenantId, target: common_pb2.WebhookTarget, signing_key: str = ""
    ) -> common_pb2.WebhookTarget:
        """`signing_key`: the target's own secret, if the tenant brings one (else Herald makes it)."""
        problems = target_problems(target.url, dict(target.headers))
        why = webhook_secret_problem(signing_key) if signing_key else None
        if why is not None:
            problems.append(("signing_key", why))
        if target.HasField("max_in_flight"):
            problems += self._bound_problems(target.max_in_flight, allow_clear=False)
        refuse_invalid(problems or await self._url_problems(target.url))
        return await self.crud(TARGETS).create(tenant_id, target, signing_key=signing_key)

    async def update_target(
        self, tenant_id: TenantId, request: ledger_subscriptions_pb2.UpdateWebhookTargetRequest
    ) -> common_pb2.WebhookTarget:
        current = await self.crud(TARGETS).get(tenant_id, request.target_id)
        url = request.url if request.HasField("url") else current.url
        headers = dict(request.headers) if request.replace_headers else {}
        problems = target_problems(url, headers)
        if not problems and request.HasField("url"):
            problems = await self._url_problems(url)
        if request.HasField("max_in_flight"):
            problems += self._bound_problems(request.max_in_flight, allow_clear=True)
        refuse_invalid(problems)
        return await self.crud(TARGETS).update(tenant_id, request)

    def _bound_problems(self, bound: int, *, allow_clear: bool) -> list[tuple[str, str]]:
        """A target's `max_in_flight`: 1 to the operator's maximum (0 clears it on an update)."""
        if (allow_clear and bound == 0) or 1 <= bound <= self.target_in_flight_max:
            return []
        return [("max_in_flight", f"must be between 1 and {self.target_in_flight_max} (the operator's maximum)")]

    async def recover_target(
        self, tenant_id: TenantId, target_id: str, since: datetime, until: datetime | None = None
    ) -> list[str]:
        """Runs the target's FAILED and SKIPPED deliveries in [since, until) again, each from
        PENDING with a fresh attempt budget, exactly as POST /v1/jobs/{id}/retry does (a skipped
        one counts against the quota then). The target must be enabled (409 otherwise).
        Returns the jobs run again, oldest first."""
        if until is not None and until < since:
            raise Invalid([("until", "must not be before since")])
        if parse_id(target_id) is None:
            raise NotFound("target not found")
        recovered: list[str] = []
        seen: set[str] = set()
        for _ in range(MAX_RECOVER_ROUNDS):
            request = ledger_subscriptions_pb2.ListTargetFailuresRequest(tenant_id=tenant_id, target_id=target_id)
            request.since.FromDatetime(since)
            if until is not None:
                request.until.FromDatetime(until)
            failures = await ask(self.ledger.subscriptions.ListTargetFailures(request), "target", DISABLED)
            batch = [job_id for job_id in failures.job_ids if job_id not in seen]
            if not batch:
                break
            seen.update(batch)
            retried = await ask(
                self.router.RetryJobs(router_pb2.RouterServiceRetryJobsRequest(tenant_id=tenant_id, job_ids=batch)),
                "deliveries",
            )
            recovered.extend(o.job_id for o in retried.outcomes if o.retried)
        return recovered

    # Retry schedule

    async def retry_schedule(self, tenant_id: TenantId) -> gateway_pb2.WebhookRetrySchedule:
        found = await ask(
            self.ledger.subscriptions.GetWebhookSettings(
                ledger_subscriptions_pb2.GetWebhookSettingsRequest(tenant_id=tenant_id)
            ),
            "webhook settings",
        )
        return _schedule_view(found.settings)

    async def set_retry_schedule(
        self, tenant_id: TenantId, delays_s: list[float], retry_statuses: list[int]
    ) -> gateway_pb2.WebhookRetrySchedule:
        """Empty delays: back to the operator's default. Bounded (see retry_policy)."""
        problems = [("delays_s", why) for why in schedule_problems(delays_s)] if delays_s else []
        problems += [("retry_statuses", why) for why in retry_status_problems(retry_statuses)]
        refuse_invalid(problems)
        request = ledger_subscriptions_pb2.SetWebhookSettingsRequest(
            tenant_id=tenant_id,
            settings=ledger_subscriptions_pb2.WebhookSettings(retry_schedule_s=delays_s, retry_statuses=retry_statuses),
        )
        stored = await ask(self.ledger.subscriptions.SetWebhookSettings(request), "webhook settings")
        return _schedule_view(stored.settings)

    # Filters

    async def create_filter(self, tenant_id: TenantId, event_filter: common_pb2.EventFilter) -> common_pb2.EventFilter:
        refuse_invalid(event_types_problems(list(event_filter.event_types)))
        return await self.crud(FILTERS).create(tenant_id, event_filter)

    async def update_filter(
        self, tenant_id: TenantId, request: ledger_subscriptions_pb2.UpdateEventFilterRequest
    ) -> common_pb2.EventFilter:
        if request.replace_event_types:
            refuse_invalid(event_types_problems(list(request.event_types)))
        return await self.crud(FILTERS).update(tenant_id, request)

    # Subscriptions: both the target and the filter must be the tenant's own.

    async def create_subscription(
        self, tenant_id: TenantId, subscription: common_pb2.Subscription
    ) -> common_pb2.Subscription:
        return await self.crud(SUBSCRIPTIONS).create(tenant_id, subscription, what="target or filter")

    async def update_subscription(
        self, tenant_id: TenantId, request: ledger_subscriptions_pb2.UpdateSubscriptionRequest
    ) -> common_pb2.Subscription:
        return await self.crud(SUBSCRIPTIONS).update(tenant_id, request, MISSING_PART)

    # Events

    async def publish_event(self, principal: Principal, event: EventInput) -> router_pb2.PublishEventResponse:
        problems: list[tuple[str, str]] = []
        if not event_type_ok(event.event_type):
            problems.append(("event_type", "dot-separated tokens of letters, digits, _ and - (orders.created.v1)"))
        elif event.event_type.startswith(HERALD_PREFIX):
            problems.append(
                ("event_type", f"types starting with {HERALD_PREFIX} are Herald's own: only Herald sends them")
            )
        problems += [p for p in keys_problems(0, "", event.ordering_key) if p[0] == "ordering_key"]
        if event.event_id and not event_id_ok(event.event_id):
            problems.append(("event_id", "1-255 printable ASCII characters without spaces"))
        if len(event.payload) > MAX_BODY_BYTES:
            problems.append(("payload", f"must be at most {MAX_BODY_BYTES} bytes"))
        if any(c in event.content_type for c in "\r\n\0") or len(event.content_type) > 255:
            problems.append(("content_type", "one line of at most 255 characters"))
        refuse_invalid(problems)
        response = await ask(
            self.router.PublishEvent(
                router_pb2.PublishEventRequest(
                    tenant_id=principal.tenant_id,
                    plan=principal.plan,  # type: ignore[arg-type]
                    event_type=event.event_type,
                    event_id=event.event_id,
                    payload=event.payload,
                    content_type=event.content_type,
                    ordering_key=event.ordering_key,
                )
            ),
            "event",
        )
        if response.rejection != ledger_pb2.REJECTION_UNSPECIFIED:
            raise refused(response.rejection, response.detail)
        return response
