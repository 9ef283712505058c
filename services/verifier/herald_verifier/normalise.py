"""Turns a verified provider body into Herald's normalised events. Called only after the scheme verified the
raw body; anything unexpected in an authentic body becomes `other` (recorded, acted on by nobody) rather
than an error, so a provider adding a field or an event type never makes it retry forever.

Email events: delivered, deferred, bounced_hard, bounced_soft, complained, opened, clicked, unsubscribed.
Payment events: payment_succeeded, payment_failed, subscription_created, subscription_cancelled.

A payment event names its tenant in its metadata, which Herald sets when it creates the checkout or the
subscription: `metadata.tenant_id` (Polar: `data.metadata`; Paystack: `data.metadata`, also looked for in
`data.subscription.metadata` / `data.customer.metadata`). An event naming no tenant is acknowledged and
dropped (logged). The plan bought is NOT read from metadata (the payer can write it): it is the operator's
mapping of the provider's own identifier (Paystack `plan_code`, Polar `product_id`), checked against the
amount and currency paid (see `catalogue`).

Cancellations that let the paid period run out (Paystack `subscription.not_renew`, Polar
`subscription.canceled`) carry when that period ends (`plan_ends_at`); the plan ends then, not at once.
`subscription.disable` / `subscription.revoked` end it at once.

Every payment event is dated by its own time: Paystack's charge by `paid_at`, Paystack's subscription
events (which carry only the subscription's creation time, older than any of its charges) by their
arrival; Polar's by the event's `timestamp`. So a later downgrade is never dropped as older than the
payment before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from herald_verifier.catalogue import Catalogue
from herald_verifier.schemes import MalformedPayload


@dataclass(frozen=True, slots=True)
class Normalised:
    provider: str
    tenant_id: str
    event_id: str
    type: str
    provider_message_id: str = ""
    recipient: str = ""
    occurred_at: datetime | None = None
    plan: str = ""
    # A cancellation at the end of the paid period: when it ends (None: at once).
    plan_ends_at: datetime | None = None
    raw: bytes = b""


def _one_event(
    provider: str,
    tenant_id: str,
    body: bytes,
    ids: list[str],
    type: str,
    provider_message_id: str,
    recipient: str,
    occurred_at: datetime | None,
    plan: str = "",
    plan_ends_at: datetime | None = None,
) -> list[Normalised]:
    """A body that is one event (not a batch): that event under the provider's first
    de-duplication id, its raw bytes kept as they came."""
    # Positional, in the fields' order.
    return [
        Normalised(
            provider, tenant_id, ids[0], type, provider_message_id, recipient, occurred_at, plan, plan_ends_at, body
        )
    ]


def _loads(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        raise MalformedPayload("body is not JSON") from None


def _text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return ""
    return str(value)


def _time(value: Any) -> datetime | None:
    """Unix seconds or an ISO 8601 string; None when absent or unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


# --- SendGrid -------------------------------------------------------------

_SENDGRID_TYPES = {
    "delivered": "delivered",
    "deferred": "deferred",
    "open": "opened",
    "click": "clicked",
    "spamreport": "complained",
    "unsubscribe": "unsubscribed",
    "group_unsubscribe": "unsubscribed",
}


def sendgrid(tenant_id: str, body: bytes, ids: list[str]) -> list[Normalised]:
    events = _loads(body)
    out = []
    for event, event_id in zip(events, ids, strict=True):
        kind = _text(event.get("event"))
        if kind == "bounce":
            # `type` is "bounce" (permanent) or "blocked" (temporary, e.g. a receiving server refusing for now).
            normalised = "bounced_soft" if _text(event.get("type")) == "blocked" else "bounced_hard"
        else:
            normalised = _SENDGRID_TYPES.get(kind, "other")
        # sg_message_id is the X-Message-Id the send returned, followed by ".filter..." routing parts.
        message_id = _text(event.get("sg_message_id")).split(".", 1)[0]
        out.append(
            Normalised(
                provider="sendgrid",
                tenant_id=tenant_id,
                event_id=event_id,
                type=normalised,
                provider_message_id=message_id,
                recipient=_text(event.get("email")),
                occurred_at=_time(event.get("timestamp")),
                raw=orjson.dumps(event),
            )
        )
    return out


# --- Resend ---------------------------------------------------------------

_RESEND_TYPES = {
    "email.delivered": "delivered",
    "email.delivery_delayed": "deferred",
    "email.complained": "complained",
    "email.opened": "opened",
    "email.clicked": "clicked",
}


def resend(tenant_id: str, body: bytes, ids: list[str]) -> list[Normalised]:
    event = _dict(_loads(body))
    data = _dict(event.get("data"))
    kind = _text(event.get("type"))
    if kind == "email.bounced":
        bounce_type = _text(_dict(data.get("bounce")).get("type"))
        normalised = "bounced_hard" if bounce_type == "Permanent" else "bounced_soft"
    else:
        normalised = _RESEND_TYPES.get(kind, "other")
    to = data.get("to")
    recipient = _text(to[0]) if isinstance(to, list) and to else _text(to)
    occurred = _time(event.get("created_at"))
    return _one_event("resend", tenant_id, body, ids, normalised, _text(data.get("email_id")), recipient, occurred)


# --- Postmark -------------------------------------------------------------

_POSTMARK_HARD = frozenset({"HardBounce", "BadEmailAddress", "ManuallyDeactivated", "SpamNotification"})
_POSTMARK_TYPES = {"Delivery": "delivered", "SpamComplaint": "complained", "Open": "opened", "Click": "clicked"}
_POSTMARK_TIME = ("DeliveredAt", "BouncedAt", "ReceivedAt", "ChangedAt")


def postmark(tenant_id: str, body: bytes, ids: list[str]) -> list[Normalised]:
    event = _dict(_loads(body))
    kind = _text(event.get("RecordType"))
    if kind == "Bounce":
        bounce_type = _text(event.get("Type"))
        normalised = "bounced_hard" if bounce_type in _POSTMARK_HARD else "bounced_soft"
    elif kind == "SubscriptionChange":
        normalised = "unsubscribed" if event.get("SuppressSending") is True else "other"
    else:
        normalised = _POSTMARK_TYPES.get(kind, "other")
    recipient = _text(event.get("Recipient")) or _text(event.get("Email"))
    occurred = next((t for t in (_time(event.get(name)) for name in _POSTMARK_TIME) if t is not None), None)
    return _one_event("postmark", tenant_id, body, ids, normalised, _text(event.get("MessageID")), recipient, occurred)


# --- Payments -------------------------------------------------------------

_PAYSTACK_TYPES = {
    "charge.success": "payment_succeeded",
    "invoice.payment_failed": "payment_failed",
    "charge.failed": "payment_failed",
    "subscription.create": "subscription_created",
    "subscription.disable": "subscription_cancelled",
    "subscription.not_renew": "subscription_cancelled",
}

_POLAR_TYPES = {
    "order.paid": "payment_succeeded",
    "order.created": "other",
    "subscription.created": "subscription_created",
    "subscription.active": "subscription_created",
    "subscription.canceled": "subscription_cancelled",
    "subscription.revoked": "subscription_cancelled",
}


def _metadata(data: Mapping[str, Any]) -> Mapping[str, Any]:
    for candidate in (
        data.get("metadata"),
        _dict(data.get("subscription")).get("metadata"),
        _dict(data.get("customer")).get("metadata"),
    ):
        found = _dict(candidate)
        if found.get("tenant_id") or found.get("herald_tenant"):
            return found
    return {}


def _tenant(data: Mapping[str, Any]) -> str:
    metadata = _metadata(data)
    return _text(metadata.get("tenant_id")) or _text(metadata.get("herald_tenant"))


@dataclass(frozen=True)
class _Billing:
    """A payment provider's event as Paystack and Polar both shape it: a `data` object whose
    metadata names the tenant, the provider's own event type, and Herald's type for it."""

    event: Mapping[str, Any]
    data: Mapping[str, Any]
    kind: str
    tenant_id: str
    type: str

    @classmethod
    def read(cls, body: bytes, kind_field: str, types: Mapping[str, str]) -> _Billing | None:
        """The event, or None when its metadata names no tenant (not one of Herald's)."""
        event = _dict(_loads(body))
        data = _dict(event.get("data"))
        kind = _text(event.get(kind_field))
        tenant_id = _tenant(data)
        if not tenant_id:
            return None
        return cls(event, data, kind, tenant_id, types.get(kind, "other"))

    @property
    def names_plan(self) -> bool:
        """A payment or a new subscription: the catalogue says which plan it buys."""
        return self.type in ("payment_succeeded", "subscription_created")

    def normalised(
        self,
        provider: str,
        body: bytes,
        ids: list[str],
        occurred_at: datetime | None,
        plan: str,
        plan_ends_at: datetime | None,
    ) -> list[Normalised]:
        recipient = _text(_dict(self.data.get("customer")).get("email"))
        return _one_event(
            provider, self.tenant_id, body, ids, self.type, "", recipient, occurred_at, plan, plan_ends_at
        )


# Paystack events that end the plan when the paid period is over, and where that end is written.
_PAYSTACK_PERIOD_END = {"subscription.not_renew": "next_payment_date"}
_PAYSTACK_CHARGES = frozenset({"charge.success", "charge.failed", "invoice.payment_failed"})


def paystack(body: bytes, ids: list[str], catalogue: Catalogue | None = None) -> list[Normalised]:
    billing = _Billing.read(body, "event", _PAYSTACK_TYPES)
    if billing is None:
        return []
    data, kind = billing.data, billing.kind
    plan_object = _dict(data.get("plan"))
    plan = ""
    if billing.names_plan and catalogue is not None:
        currency = data.get("currency") or plan_object.get("currency")
        plan = catalogue.plan_for(_text(plan_object.get("plan_code")), data.get("amount"), currency)
    occurred = None  # subscription events: their arrival (see the module's docstring)
    if kind in _PAYSTACK_CHARGES:
        occurred = _time(data.get("paid_at")) or _time(data.get("paidAt")) or _time(data.get("created_at"))
    ends = _PAYSTACK_PERIOD_END.get(kind)
    return billing.normalised("paystack", body, ids, occurred, plan, _time(data.get(ends)) if ends else None)


def polar(body: bytes, ids: list[str], catalogue: Catalogue | None = None) -> list[Normalised]:
    billing = _Billing.read(body, "type", _POLAR_TYPES)
    if billing is None:
        return []
    data = billing.data
    plan = ""
    if billing.names_plan and catalogue is not None:
        product = _text(data.get("product_id")) or _text(_dict(data.get("product")).get("id"))
        amount = data.get("total_amount", data.get("amount"))
        plan = catalogue.plan_for(product, amount, data.get("currency"))
    ends_at = None
    if billing.kind == "subscription.canceled":
        ends_at = _time(data.get("current_period_end")) or _time(data.get("ends_at"))
    occurred = _time(billing.event.get("timestamp")) or _time(data.get("modified_at"))
    return billing.normalised("polar", body, ids, occurred, plan, ends_at)
