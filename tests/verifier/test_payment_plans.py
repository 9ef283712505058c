"""What a verified payment event buys: the operator's mapping of the provider's own plan or
product id, at its price and currency; never a plan written in checkout metadata. Cancellations
that let the period run out say when it ends; each event is dated by its own time."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from herald_verifier import normalise
from herald_verifier.catalogue import Catalogue

TENANT = "0b9a8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d"
PAYSTACK = Catalogue.parse("PLN_indie=indie:500000:NGN, PLN_startup=startup:2000000:NGN")
POLAR = Catalogue.parse("prod-indie=indie:900:usd prod-startup=startup:2900:usd")


def paystack_event(event: str, **data: object) -> bytes:
    return json.dumps({"event": event, "data": {"metadata": {"tenant_id": TENANT}, **data}}).encode()


def polar_event(kind: str, **data: object) -> bytes:
    body = {"type": kind, "timestamp": "2026-02-01T00:00:00Z", "data": {"metadata": {"tenant_id": TENANT}, **data}}
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("plan_code", "amount", "currency", "bought"),
    [
        ("PLN_startup", 2_000_000, "NGN", "startup"),
        ("PLN_startup", 100, "NGN", ""),  # a charge of 100 does not buy startup
        ("PLN_startup", 2_000_000, "USD", ""),  # nor does the right number in another currency
        ("PLN_unknown", 9_999_999, "NGN", ""),
        ("", 2_000_000, "NGN", ""),
    ],
)
def test_paystack_charges_buy_the_configured_plan_at_its_price(
    plan_code: str, amount: int, currency: str, bought: str
) -> None:
    body = paystack_event(
        "charge.success",
        amount=amount,
        currency=currency,
        plan={"plan_code": plan_code},
        paid_at="2026-01-01T00:00:00Z",
        metadata={"tenant_id": TENANT, "plan": "startup"},
    )
    [event] = normalise.paystack(body, ["e"], PAYSTACK)
    assert event.plan == bought
    assert event.occurred_at == datetime(2026, 1, 1, tzinfo=UTC)


def test_polar_orders_buy_the_configured_product() -> None:
    paid = polar_event("order.paid", product_id="prod-indie", total_amount=900, currency="usd")
    assert normalise.polar(paid, ["o"], POLAR)[0].plan == "indie"
    short = polar_event("order.paid", product_id="prod-startup", total_amount=900, currency="usd")
    assert normalise.polar(short, ["o"], POLAR)[0].plan == ""
    claimed = polar_event("order.paid", metadata={"tenant_id": TENANT, "plan": "startup"})
    assert normalise.polar(claimed, ["o"], POLAR)[0].plan == ""


def test_cancellations_at_the_period_end_carry_it() -> None:
    not_renew = paystack_event(
        "subscription.not_renew", next_payment_date="2026-03-01T00:00:00Z", created_at="2025-01-01T00:00:00Z"
    )
    [event] = normalise.paystack(not_renew, ["n"], PAYSTACK)
    assert event.type == "subscription_cancelled"
    assert event.plan_ends_at == datetime(2026, 3, 1, tzinfo=UTC)
    # Dated by its arrival, not by the subscription's creation (older than any of its charges).
    assert event.occurred_at is None
    [disable] = normalise.paystack(paystack_event("subscription.disable", created_at="2025-01-01T00:00:00Z"), ["d"])
    assert disable.plan_ends_at is None and disable.occurred_at is None
    canceled = polar_event("subscription.canceled", current_period_end="2026-02-28T00:00:00Z")
    [polar_cancel] = normalise.polar(canceled, ["c"], POLAR)
    assert polar_cancel.plan_ends_at == datetime(2026, 2, 28, tzinfo=UTC)
    assert polar_cancel.occurred_at == datetime(2026, 2, 1, tzinfo=UTC)
    [revoked] = normalise.polar(polar_event("subscription.revoked", current_period_end="2026-02-28T00:00:00Z"), ["r"])
    assert revoked.plan_ends_at is None


@pytest.mark.parametrize("entry", ["PLN_x=gold:100:NGN", "PLN_x=indie:cheap:NGN", "PLN_x=indie:100", "=indie:1:NGN"])
def test_a_bad_price_list_fails_at_startup(entry: str) -> None:
    with pytest.raises(ValueError, match="identifier=plan:amount:currency"):
        Catalogue.parse(entry)
