"""Inbound payment webhooks (Paystack, Polar) on the platform's own secrets: forged, stale and modified requests
refused, and a verified payment or subscription event changing the tenant's plan once, in event-time order, to
what was actually paid for, a cancellation ending it at the paid period's end."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from herald.cli.stack import Stack
from tests.support.api import TenantKey, create_tenant, remember_secret
from tests.support.inbound import stored_events
from tests.verifier import corpus

PAYSTACK_KEY = "sk_test_" + "5f3c1a9e" * 5
POLAR_SECRET = "polar_whs_" + "Q2xhc3NpY1BvbGFyU2VjcmV0" + "x7"
# The operator's price list: what each provider plan / product buys (HERALD_PAYSTACK_PLANS, HERALD_POLAR_PRODUCTS).
PAYSTACK_PLANS = {"indie": ("PLN_indie_monthly", 500_000), "startup": ("PLN_startup_monthly", 2_000_000)}
POLAR_PRODUCTS = {
    "indie": ("3b4c6f0e-1d2a-4e8b-9c7d-5a6b7c8d9e01", 900),
    "startup": ("7f8e9d0c-2b3a-4c5d-8e9f-0a1b2c3d4e02", 2900),
}


@pytest.fixture(scope="module")
def payments_verifier(stack: Stack) -> str:
    """A verifier replica that holds the platform's Paystack and Polar secrets (settings), on its own port."""
    remember_secret(PAYSTACK_KEY)
    remember_secret(POLAR_SECRET)
    replica = stack.add_replica(
        "verifier",
        {
            "HERALD_PAYSTACK_SECRET_KEY": PAYSTACK_KEY,
            "HERALD_POLAR_WEBHOOK_SECRET": POLAR_SECRET,
            "HERALD_PAYSTACK_PLANS": ",".join(f"{c}={p}:{a}:NGN" for p, (c, a) in PAYSTACK_PLANS.items()),
            "HERALD_POLAR_PRODUCTS": " ".join(f"{i}={p}:{a}:usd" for p, (i, a) in POLAR_PRODUCTS.items()),
        },
    )
    return f"http://127.0.0.1:{replica.env['HERALD_HTTP_PORT']}"


def plan_of(gateway: str, operator_token: str, tenant: TenantKey) -> str:
    response = httpx.get(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}",
        headers={"authorization": f"Bearer {operator_token}"},
        timeout=10,
    )
    response.raise_for_status()
    plan: str = response.json()["plan"]
    return plan


def paystack_body(
    tenant: TenantKey, plan: str, paid_at: str, reference: str, amount: int | None = None, claimed: str = ""
) -> bytes:
    """A charge of `plan`'s Paystack plan (at its price unless `amount`); `claimed`: a plan written in the
    checkout metadata, which proves nothing."""
    code, price = PAYSTACK_PLANS[plan]
    return json.dumps(
        {
            "event": "charge.success",
            "data": {
                "id": 302961,
                "reference": reference,
                "status": "success",
                "amount": price if amount is None else amount,
                "currency": "NGN",
                "paid_at": paid_at,
                "plan": {"plan_code": code, "name": plan},
                "customer": {"email": "owner@example.com"},
                "metadata": {"tenant_id": tenant.tenant_id, **({"plan": claimed} if claimed else {})},
            },
        }
    ).encode()


def wait_for_plan(gateway: str, operator_token: str, tenant: TenantKey, plan: str) -> None:
    deadline = time.monotonic() + 5
    while plan_of(gateway, operator_token, tenant) != plan:
        assert time.monotonic() < deadline, f"plan is not {plan}"
        time.sleep(0.1)


def test_paystack_forged_is_refused_and_valid_changes_the_plan_once(
    gateway: str, operator_token: str, payments_verifier: str, infra: dict[str, str]
) -> None:
    tenant = create_tenant(gateway, operator_token, "paystack-payer", plan="free")
    url = f"{payments_verifier}/inbound/paystack"
    body = paystack_body(tenant, "startup", "2026-06-01T10:00:00.000Z", "ref-1")

    forged = corpus.paystack_headers("sk_test_" + "0" * 40, body)
    assert httpx.post(url, content=body, headers=forged, timeout=10).status_code == 401
    assert httpx.post(url, content=body, headers={}, timeout=10).status_code == 401
    genuine = corpus.paystack_headers(PAYSTACK_KEY, body)
    assert httpx.post(url, content=corpus.flip_one_byte(body), headers=genuine, timeout=10).status_code == 401
    assert plan_of(gateway, operator_token, tenant) == "free"
    assert stored_events(infra["database_url"], tenant) == 0

    for _ in range(3):
        assert httpx.post(url, content=body, headers=genuine, timeout=10).status_code == 200
    assert plan_of(gateway, operator_token, tenant) == "startup"
    history = httpx.get(f"{gateway}/v1/billing", headers=tenant.headers, timeout=10).json()["data"]
    assert [(e["provider"], e["type"], e["plan"], e["applied"]) for e in history] == [
        ("paystack", "payment_succeeded", "startup", True)
    ]

    # An older payment arriving late (a different event) is recorded but does not override the newer one.
    older = paystack_body(tenant, "indie", "2026-05-01T10:00:00.000Z", "ref-0")
    assert httpx.post(url, content=older, headers=corpus.paystack_headers(PAYSTACK_KEY, older)).status_code == 200
    assert plan_of(gateway, operator_token, tenant) == "startup"
    history = httpx.get(f"{gateway}/v1/billing", headers=tenant.headers, timeout=10).json()["data"]
    assert [(e["plan"], e["applied"]) for e in history] == [("startup", True), ("indie", False)]
    operators = {"authorization": f"Bearer {operator_token}"}
    admin_view = httpx.get(f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/billing", headers=operators, timeout=10)
    assert admin_view.status_code == 200 and admin_view.json()["data"] == history
    assert httpx.get(f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/billing", timeout=10).status_code == 401


def polar_body(event_type: str, tenant: TenantKey, plan: str, timestamp: str, **data: object) -> bytes:
    product_id, price = POLAR_PRODUCTS[plan]
    return json.dumps(
        {
            "type": event_type,
            "timestamp": timestamp,
            "data": {
                "id": str(uuid.uuid4()),
                "product_id": product_id,
                "amount": price,
                "currency": "usd",
                "metadata": {"tenant_id": tenant.tenant_id},
                **data,
            },
        }
    ).encode()


def test_polar_events_apply_in_event_time_order(
    gateway: str, operator_token: str, payments_verifier: str, infra: dict[str, str]
) -> None:
    tenant = create_tenant(gateway, operator_token, "polar-payer", plan="free")
    url = f"{payments_verifier}/inbound/polar"
    now = int(time.time())
    created = polar_body("subscription.created", tenant, "indie", "2026-03-01T00:00:00Z")
    cancelled = polar_body("subscription.canceled", tenant, "indie", "2026-04-01T00:00:00Z")

    # Forged (another secret), stale and header-less requests change nothing.
    forged = corpus.polar_headers("polar_whs_forged", created, timestamp=now, msg_id="msg_c")
    assert httpx.post(url, content=created, headers=forged, timeout=10).status_code == 401
    stale = corpus.polar_headers(POLAR_SECRET, created, timestamp=now - 3600, msg_id="msg_c")
    assert httpx.post(url, content=created, headers=stale, timeout=10).status_code == 401
    genuine = corpus.polar_headers(POLAR_SECRET, created, timestamp=now, msg_id="msg_c")
    assert httpx.post(url, content=corpus.flip_one_byte(created), headers=genuine, timeout=10).status_code == 401
    missing = corpus.without(corpus.polar_headers(POLAR_SECRET, created, timestamp=now, msg_id="msg_c"), "webhook-id")
    assert httpx.post(url, content=created, headers=missing, timeout=10).status_code == 401
    assert stored_events(infra["database_url"], tenant) == 0

    # The cancellation (newer) arrives first, the creation (older) after it: the tenant stays on free.
    headers = corpus.polar_headers(POLAR_SECRET, cancelled, timestamp=now, msg_id="msg_cancel")
    assert httpx.post(url, content=cancelled, headers=headers, timeout=10).status_code == 200
    headers = corpus.polar_headers(POLAR_SECRET, created, timestamp=now, msg_id="msg_c")
    assert httpx.post(url, content=created, headers=headers, timeout=10).status_code == 200
    assert plan_of(gateway, operator_token, tenant) == "free"

    # A newer subscription does apply, once.
    later = polar_body("subscription.created", tenant, "startup", "2026-05-01T00:00:00Z")
    for _ in range(3):
        headers = corpus.polar_headers(POLAR_SECRET, later, timestamp=int(time.time()), msg_id="msg_later")
        assert httpx.post(url, content=later, headers=headers, timeout=10).status_code == 200
    assert plan_of(gateway, operator_token, tenant) == "startup"
    history = httpx.get(f"{gateway}/v1/billing", headers=tenant.headers, timeout=10).json()["data"]
    assert [(e["type"], e["applied"]) for e in history] == [
        ("subscription_created", True),
        ("subscription_cancelled", True),
        ("subscription_created", False),
    ]


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def test_a_payment_buys_only_what_it_paid_for(gateway: str, operator_token: str, payments_verifier: str) -> None:
    """The plan comes from the provider's plan code at its configured price, never from checkout metadata."""
    tenant = create_tenant(gateway, operator_token, "paystack-bargain-hunter", plan="free")
    url = f"{payments_verifier}/inbound/paystack"
    paid = iso(datetime.now(UTC))

    def post(body: bytes) -> None:
        assert httpx.post(url, content=body, headers=corpus.paystack_headers(PAYSTACK_KEY, body)).status_code == 200

    # A charge of 100 kobo for the startup plan, with "startup" written in the metadata too: nothing changes.
    post(paystack_body(tenant, "startup", paid, "ref-cheap", amount=100, claimed="startup"))
    # The indie plan's code paid in full, while the metadata claims startup: indie it is.
    post(paystack_body(tenant, "indie", paid, "ref-indie", claimed="startup"))
    wait_for_plan(gateway, operator_token, tenant, "indie")
    history = httpx.get(f"{gateway}/v1/billing", headers=tenant.headers, timeout=10).json()["data"]
    assert sorted((e["plan"] or "", e["applied"]) for e in history) == [("", False), ("indie", True)]


def test_a_cancellation_ends_the_plan_at_the_period_end(
    gateway: str, operator_token: str, payments_verifier: str
) -> None:
    tenant = create_tenant(gateway, operator_token, "polar-canceller", plan="free")
    url = f"{payments_verifier}/inbound/polar"
    now = datetime.now(UTC)

    def post(body: bytes, msg_id: str) -> None:
        headers = corpus.polar_headers(POLAR_SECRET, body, timestamp=int(time.time()), msg_id=msg_id)
        assert httpx.post(url, content=body, headers=headers, timeout=10).status_code == 200

    post(polar_body("subscription.active", tenant, "startup", iso(now.replace(microsecond=0))), "msg_active")
    wait_for_plan(gateway, operator_token, tenant, "startup")
    period_end = datetime.now(UTC) + timedelta(seconds=4)
    cancelled = polar_body(
        "subscription.canceled", tenant, "startup", iso(datetime.now(UTC)), current_period_end=iso(period_end)
    )
    post(cancelled, "msg_cancel_at_period_end")
    # The paid period is not over: the tenant keeps what it paid for...
    assert plan_of(gateway, operator_token, tenant) == "startup"
    while datetime.now(UTC) < period_end:
        time.sleep(0.2)
    # ...and is on free once it is.
    deadline = time.monotonic() + 15
    while plan_of(gateway, operator_token, tenant) != "free":
        assert time.monotonic() < deadline, "the plan did not end at the period's end"
        time.sleep(0.2)


def test_a_later_downgrade_is_never_dropped_as_older(gateway: str, operator_token: str, payments_verifier: str) -> None:
    """Paystack's subscription events carry the subscription's creation time, older than its charges:
    each event is dated by its own time, so the cancellation after a charge applies."""
    tenant = create_tenant(gateway, operator_token, "paystack-leaver", plan="free")
    url = f"{payments_verifier}/inbound/paystack"
    charge = paystack_body(tenant, "startup", iso(datetime.now(UTC) - timedelta(minutes=1)), "ref-renewal")
    assert httpx.post(url, content=charge, headers=corpus.paystack_headers(PAYSTACK_KEY, charge)).status_code == 200
    wait_for_plan(gateway, operator_token, tenant, "startup")
    disabled = json.dumps(
        {
            "event": "subscription.disable",
            "data": {
                "subscription_code": "SUB_vsyqdmlzble3uii",
                "status": "complete",
                "created_at": iso(datetime.now(UTC) - timedelta(days=90)),
                "plan": {"plan_code": PAYSTACK_PLANS["startup"][0]},
                "customer": {"email": "owner@example.com"},
                "metadata": {"tenant_id": tenant.tenant_id},
            },
        }
    ).encode()
    answer = httpx.post(url, content=disabled, headers=corpus.paystack_headers(PAYSTACK_KEY, disabled))
    assert answer.status_code == 200
    wait_for_plan(gateway, operator_token, tenant, "free")
