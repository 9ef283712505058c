"""Webhook targets, event filters, subscriptions and the retry schedule."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from herald.v1 import common_pb2, gateway_pb2
from herald_gateway.http.schemas.common import Page, Text, time_of


class TargetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: Text = Field(max_length=2048, examples=["https://example.com/hooks/orders"])
    description: Text = Field(default="", max_length=1000)
    headers: dict[Text, Text] = Field(default_factory=dict)
    rate_limit_per_min: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000,
        description="Deliveries per minute, spaced evenly; deliveries over it wait (they are not failures).",
    )
    max_in_flight: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description=(
            "Calls to this target in flight at most, per sender replica (null: the operator's default, "
            "HERALD_WEBHOOK_TARGET_IN_FLIGHT); at most the operator's HERALD_WEBHOOK_TARGET_IN_FLIGHT_MAX. "
            "Deliveries beyond it wait (they are not failures) without holding up other targets."
        ),
    )
    enabled: bool = True
    disabled_reason: Text | None = Field(default=None, max_length=1000)
    signing_key: str | None = Field(
        default=None,
        max_length=200,
        description="The target's own signing secret (whsec_ + base64 of 24-64 bytes); omitted: Herald makes one. "
        "GET /v1/webhooks/targets/{id}/secret reads it.",
    )


class TargetPatch(BaseModel):
    """Only the fields given change. `headers` replaces all headers; `rate_limit_per_min`
    null removes the limit, `max_in_flight` null the target's own bound; `enabled: true` clears
    the reason."""

    model_config = ConfigDict(extra="forbid")

    url: Text | None = Field(default=None, max_length=2048)
    description: Text | None = Field(default=None, max_length=1000)
    headers: dict[Text, Text] | None = None
    rate_limit_per_min: int | None = Field(default=None, ge=1, le=1_000_000)
    max_in_flight: int | None = Field(default=None, ge=1, le=1000)
    enabled: bool | None = None
    disabled_reason: Text | None = Field(default=None, max_length=1000)


class TargetOut(BaseModel):
    id: str
    url: str
    description: str
    headers: dict[str, str]
    rate_limit_per_min: int | None
    max_in_flight: int | None = Field(
        default=None, description="The target's own bound of calls in flight; null: the operator's default."
    )
    enabled: bool
    disabled_reason: str | None
    created_at: datetime | None
    updated_at: datetime | None
    failing_since: datetime | None = Field(
        default=None, description="The first failed delivery since the last success; null when not failing."
    )
    last_success_at: datetime | None = Field(
        default=None,
        description="When the receiver last accepted a delivery, to the minute; null: never.",
    )
    breaker: Literal["open", "closed"] = Field(
        default="closed",
        description="open: a webhook-sender holds this target's deliveries back (no call, no attempt spent) "
        "because its circuit breaker opened after repeated outages (timeouts, failed connections, 5xx); one "
        "probe goes through when the cool-down ends. As the senders last noted it on a waiting delivery.",
    )


class TargetList(Page[TargetOut]):
    pass


def target_out(target: common_pb2.WebhookTarget) -> TargetOut:
    return TargetOut(
        id=target.id,
        url=target.url,
        description=target.description,
        headers=dict(target.headers),
        rate_limit_per_min=target.rate_limit_per_min if target.HasField("rate_limit_per_min") else None,
        max_in_flight=target.max_in_flight if target.HasField("max_in_flight") else None,
        enabled=target.enabled,
        disabled_reason=target.disabled_reason or None,
        created_at=time_of(target, "created_at"),
        updated_at=time_of(target, "updated_at"),
        failing_since=time_of(target, "failing_since"),
        last_success_at=time_of(target, "last_success_at"),
        breaker="open" if target.breaker == "open" else "closed",
    )


class RecoverIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    since: datetime = Field(
        description="Run again the deliveries to this target that failed, or were skipped (the target disabled, "
        "the subscription paused), at or after this time."
    )
    until: datetime | None = Field(default=None, description="And before this time (default: now).")


class RecoverOut(BaseModel):
    target_id: str
    recovered: int
    job_ids: list[str] = Field(description="The jobs run again (GET /v1/jobs/{id} follows each).")


class RetryScheduleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    delays_s: list[float] | None = Field(
        default=None,
        max_length=20,
        description="Seconds before each retry (1 s to 24 h each, 3 days in all); null or []: the default.",
        examples=[[10, 60, 600, 3600]],
    )
    retry_statuses: list[int] = Field(
        default_factory=list, max_length=100, description="4xx codes (not 410) to retry like 5xx."
    )


class RetryScheduleOut(BaseModel):
    delays_s: list[float]
    retry_statuses: list[int]
    custom: bool = Field(description="False when the operator's default applies.")
    max_attempts: int


def retry_schedule_out(schedule: gateway_pb2.WebhookRetrySchedule) -> RetryScheduleOut:
    return RetryScheduleOut(
        delays_s=list(schedule.delays_s),
        retry_statuses=list(schedule.retry_statuses),
        custom=schedule.custom,
        max_attempts=schedule.max_attempts,
    )


class FilterIn(BaseModel):
    """Event types: exact (`orders.created.v1`), a prefix wildcard (`orders.*` matches any
    type with at least one more token after `orders.`), or `*` (every type)."""

    model_config = ConfigDict(extra="forbid")

    event_types: list[Text] = Field(min_length=1, max_length=100, examples=[["orders.created.v1", "payments.*"]])
    description: Text = Field(default="", max_length=1000)


class FilterPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_types: list[Text] | None = Field(default=None, min_length=1, max_length=100)
    description: Text | None = Field(default=None, max_length=1000)


class FilterOut(BaseModel):
    id: str
    description: str
    event_types: list[str]
    created_at: datetime | None
    updated_at: datetime | None


class FilterList(Page[FilterOut]):
    pass


def filter_out(event_filter: common_pb2.EventFilter) -> FilterOut:
    return FilterOut(
        id=event_filter.id,
        description=event_filter.description,
        event_types=list(event_filter.event_types),
        created_at=time_of(event_filter, "created_at"),
        updated_at=time_of(event_filter, "updated_at"),
    )


class SubscriptionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_id: Text = Field(max_length=64)
    filter_id: Text = Field(max_length=64)
    active: bool = True


class SubscriptionPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_id: Text | None = Field(default=None, max_length=64)
    filter_id: Text | None = Field(default=None, max_length=64)
    active: bool | None = None


class SubscriptionOut(BaseModel):
    id: str
    target_id: str
    filter_id: str
    active: bool
    created_at: datetime | None
    updated_at: datetime | None


class SubscriptionList(Page[SubscriptionOut]):
    pass


def subscription_out(subscription: common_pb2.Subscription) -> SubscriptionOut:
    return SubscriptionOut(
        id=subscription.id,
        target_id=subscription.target_id,
        filter_id=subscription.filter_id,
        active=subscription.active,
        created_at=time_of(subscription, "created_at"),
        updated_at=time_of(subscription, "updated_at"),
    )


class TargetSecretOut(BaseModel):
    key: str = Field(description="The target's current signing secret: whsec_ + base64.")
    public_key: str | None = Field(
        default=None, description="whpk_ + base64 of the target's Ed25519 public key (signatures v1a), if it has one."
    )


class RotateSecretIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str | None = Field(
        default=None, max_length=200, description="The new secret (whsec_ + base64 of 24-64 bytes); omitted: a new one."
    )
    overlap_s: float | None = Field(
        default=None,
        description="How long the previous keys keep signing beside the new one: 0 to 604800 (7 days); "
        "omitted: 86400. 0 stops every previous key at once.",
    )
    algorithm: Literal["hmac", "ed25519"] = Field(
        default="hmac", description="ed25519: a new Ed25519 key pair signing v1a; the answer is its public key."
    )


class TargetTestOut(BaseModel):
    ping_id: str = Field(description="The ping's webhook-id.")
    sent_at: datetime | None
    status_code: int | None = Field(description="What the receiver answered; null when no answer came.")
    duration_ms: int
    response_excerpt: str = Field(description="The start of the receiver's answer (at most 1 KiB).")
    error: str | None = Field(description="Why no answer came: refused by the target guard, a timeout, ...")


class RotatedSecretOut(BaseModel):
    key: str = Field(description="The new whsec_ secret, or for ed25519 the new whpk_ public key.")
