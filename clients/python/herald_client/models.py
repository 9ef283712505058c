"""What the API answers, as typed objects. Hand-written over the gateway's OpenAPI document
(`clients/openapi.json`, the one the SDKs were built from); `tests/test_python_sdk.py`
checks every field here against it, and that it is still the gateway's.

Each model takes the fields it knows from an answer and ignores the rest, so a newer gateway
that adds a field does not break an older client.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

T = TypeVar("T")
M = TypeVar("M", bound="_Model")


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


class _Model:
    """A model read from an answer: the fields it declares, the others ignored."""

    @classmethod
    def from_api(cls: type[M], data: dict[str, Any]) -> M:
        return cls(**_known(cls, data))


@dataclass(frozen=True)
class JobAccepted(_Model):
    """A job the gateway accepted (202): its id, and its status then (usually `queued`)."""

    id: str
    status: str


@dataclass(frozen=True)
class Attempt(_Model):
    """One delivery attempt: the receiver's answer (status code, headers, an excerpt) or the error."""

    number: int
    target: str
    outcome: str
    status_code: int | None
    duration_ms: int
    error: str | None
    started_at: str | None
    error_class: str | None = None
    response_headers: dict[str, str] | None = None
    response_excerpt: str | None = None
    provider_id: str | None = None
    provider_message_id: str | None = None
    walk: int | None = None


@dataclass(frozen=True)
class Job(_Model):
    """A webhook or email job with its status and (when read alone) every attempt."""

    id: str
    channel: str
    status: str
    priority: str
    attempt_count: int
    last_error: str | None
    idempotency_key: str | None
    created_at: str | None
    updated_at: str | None
    url: str | None = None
    run: int = 0
    attempts: list[Attempt] = field(default_factory=list)

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Job:
        known = _known(cls, data)
        known["attempts"] = [Attempt.from_api(a) for a in data.get("attempts") or []]
        return cls(**known)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list; `next_cursor` (None on the last page) asks for the next one."""

    data: list[T]
    next_cursor: str | None


@dataclass(frozen=True)
class Target(_Model):
    """Where an event's deliveries go."""

    id: str
    url: str
    description: str
    headers: dict[str, str]
    rate_limit_per_min: int | None
    enabled: bool
    disabled_reason: str | None
    created_at: str | None
    updated_at: str | None
    failing_since: str | None = None
    max_in_flight: int | None = None


@dataclass(frozen=True)
class TargetSecret(_Model):
    """A target's own signing secret: its receiver verifies that target's deliveries with `key`
    (`whsec_...`), or with `public_key` (`whpk_...`, Ed25519) when the target has a key pair."""

    key: str
    public_key: str | None = None


@dataclass(frozen=True)
class RotatedSecret(_Model):
    """A target's new key after a rotation: the `whsec_` secret, or an Ed25519 pair's `whpk_`
    public key; the previous keys keep signing beside it for the overlap asked."""

    key: str


@dataclass(frozen=True)
class TargetTest(_Model):
    """A signed ping sent to a target now: what its receiver answered (or why nothing came)."""

    ping_id: str
    sent_at: str | None
    status_code: int | None
    duration_ms: int
    response_excerpt: str
    error: str | None


@dataclass(frozen=True)
class Filter(_Model):
    """Which event types a subscription takes (`orders.*` patterns allowed)."""

    id: str
    description: str
    event_types: list[str]
    created_at: str | None
    updated_at: str | None


@dataclass(frozen=True)
class Subscription(_Model):
    """A target and a filter joined: every matching event is delivered to the target."""

    id: str
    target_id: str
    filter_id: str
    active: bool
    created_at: str | None
    updated_at: str | None


@dataclass(frozen=True)
class Delivery(_Model):
    """One job an event fanned out to, and its target."""

    job_id: str
    target_id: str


@dataclass(frozen=True)
class EventAccepted(_Model):
    """A published event: its id, whether it repeated one already accepted, and its deliveries."""

    event_id: str
    replayed: bool
    deliveries: list[Delivery]

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> EventAccepted:
        return cls(data["event_id"], data["replayed"], [Delivery.from_api(d) for d in data["deliveries"]])


@dataclass(frozen=True)
class SecretStatus(_Model):
    """Whether the tenant signs its deliveries, and when the secret was made and rotated."""

    exists: bool
    created_at: str | None = None
    rotated_at: str | None = None
    previous_expires_at: str | None = None


@dataclass(frozen=True)
class SigningSecret(SecretStatus):
    """A new signing secret, shown once: store it where the receiver verifies (`whsec_...`)."""

    secret: str = ""


@dataclass(frozen=True)
class ApiKey(_Model):
    """An API key as listed: its name and public part, never the key itself."""

    id: str
    name: str
    public_id: str
    created_at: str | None
    revoked_at: str | None = None
    last_used_at: str | None = None


@dataclass(frozen=True)
class CreatedApiKey(ApiKey):
    """A new API key, shown once (`api_key`); only its SHA-256 is kept by Herald."""

    api_key: str = ""


# Model -> the OpenAPI schema it reads (the SDK's tests check the fields against it).
SCHEMAS: dict[type, str] = {
    JobAccepted: "JobAccepted",
    Attempt: "AttemptOut",
    Job: "JobOut",
    Target: "TargetOut",
    TargetSecret: "TargetSecretOut",
    RotatedSecret: "RotatedSecretOut",
    TargetTest: "TargetTestOut",
    Filter: "FilterOut",
    Subscription: "SubscriptionOut",
    Delivery: "EventDeliveryOut",
    EventAccepted: "EventAccepted",
    SecretStatus: "WebhookSecretStatusOut",
    SigningSecret: "WebhookSecretCreated",
    ApiKey: "ApiKeyOut",
    CreatedApiKey: "ApiKeyCreated",
}
