"""Inbound provider webhooks end to end: a tenant configures what Herald verifies each provider with, the
verifier's receivers accept genuinely signed requests and refuse forged, modified, stale, incomplete and
misdirected ones (storing nothing), de-duplicate replays, and the ledger acts on what was verified: events on
the job, suppression on hard bounces, plan changes on payments."""

from __future__ import annotations

import base64
import json
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.standins.herald_email import add_provider, email, send, sent_id
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.support.api import TenantKey, create_tenant, remember_secret, wait_for_status
from tests.support.infra import query
from tests.verifier import corpus

PAYSTACK_KEY = "sk_test_" + "5f3c1a9e" * 5
POLAR_SECRET = "polar_whs_" + "Q2xhc3NpY1BvbGFyU2VjcmV0" + "x7"
# The operator's price list: what each provider plan / product buys (HERALD_PAYSTACK_PLANS, HERALD_POLAR_PRODUCTS).
PAYSTACK_PLANS = {"indie": ("PLN_indie_monthly", 500_000), "startup": ("PLN_startup_monthly", 2_000_000)}
POLAR_PRODUCTS = {
    "indie": ("3b4c6f0e-1d2a-4e8b-9c7d-5a6b7c8d9e01", 900),
    "startup": ("7f8e9d0c-2b3a-4c5d-8e9f-0a1b2c3d4e02", 2900),
}


def new_resend_secret() -> str:
    return remember_secret("whsec_" + base64.b64encode(secrets.token_bytes(24)).decode())


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


@pytest.fixture(scope="module")
def verifier(stack: Stack) -> str:
    return stack.endpoints["verifier_http"]


@pytest.fixture(scope="module")
def verifier_metrics(stack: Stack) -> str:
    return f"http://127.0.0.1:{stack.services['verifier'].env['HERALD_METRICS_PORT']}/metrics"


def stored_events(database_url: str, tenant: TenantKey) -> int:
    rows = query(
        database_url, "SELECT count(*) AS n FROM inbound_events WHERE tenant_id = $1", uuid.UUID(tenant.tenant_id)
    )
    return int(rows[0]["n"])


def put(gateway: str, tenant: TenantKey, provider: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.put(f"{gateway}/v1/inbound/{provider}", json=body, headers=tenant.headers, timeout=10)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


@dataclass
class Setup:
    """One provider configured for a tenant: how to sign a body the way the provider does, with this tenant's
    key, and the other ways a request can go wrong."""

    provider: str
    sign: Callable[[bytes, int], dict[str, str]]
    body: Callable[[], bytes]
    # A header the scheme requires.
    required_header: str
    timestamped: bool


def configure(gateway: str, tenant: TenantKey, provider: str) -> Setup:
    if provider == "sendgrid":
        private = ec.generate_private_key(ec.SECP256R1())
        put(gateway, tenant, "sendgrid", {"public_key": corpus.sendgrid_public_key(private)})

        def sendgrid_body() -> bytes:
            event = {
                "email": "ana@example.net",
                "timestamp": int(time.time()),
                "event": "delivered",
                "sg_event_id": secrets.token_urlsafe(16),
                "sg_message_id": "abc.filter0001",
            }
            return json.dumps([event]).encode() + b"\r\n"

        return Setup(
            "sendgrid",
            lambda body, ts: corpus.sendgrid_headers(private, body, timestamp=ts),
            sendgrid_body,
            "X-Twilio-Email-Event-Webhook-Signature",
            True,
        )
    if provider == "resend":
        secret = new_resend_secret()
        put(gateway, tenant, "resend", {"secret": secret})

        def resend_body() -> bytes:
            return json.dumps(
                {
                    "type": "email.delivered",
                    "created_at": datetime.now(UTC).isoformat(),
                    "data": {"email_id": str(uuid.uuid4()), "to": ["ana@example.net"]},
                }
            ).encode()

        return Setup(
            "resend",
            lambda body, ts: corpus.resend_headers(secret, body, timestamp=ts, msg_id=f"msg_{secrets.token_hex(8)}"),
            resend_body,
            "svix-signature",
            True,
        )
    created = put(gateway, tenant, "postmark", {})
    username, password = created["username"], remember_secret(created["password"])

    def postmark_body() -> bytes:
        return json.dumps(
            {
                "RecordType": "Delivery",
                "MessageID": str(uuid.uuid4()),
                "Recipient": "ana@example.net",
                "DeliveredAt": datetime.now(UTC).isoformat(),
            }
        ).encode()

    return Setup(
        "postmark", lambda body, ts: corpus.postmark_headers(username, password), postmark_body, "Authorization", False
    )


def test_inbound_configuration_never_reads_back_a_secret(gateway: str, tenant: TenantKey) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    public_key = corpus.sendgrid_public_key(private)
    secret = new_resend_secret()
    assert put(gateway, tenant, "sendgrid", {"public_key": public_key})["public_key"] == public_key
    assert "secret" not in put(gateway, tenant, "resend", {"secret": secret})
    created = put(gateway, tenant, "postmark", {})
    remember_secret(created["password"])
    assert created["username"].startswith("pm_") and len(created["password"]) > 30
    assert created["webhook_path"] == f"/inbound/postmark/{tenant.tenant_id}"

    listed = httpx.get(f"{gateway}/v1/inbound", headers=tenant.headers, timeout=10)
    assert listed.status_code == 200
    text = listed.text
    assert secret not in text and created["password"] not in text
    assert {c["provider"] for c in listed.json()["data"]} == {"sendgrid", "resend", "postmark"}
    one = httpx.get(f"{gateway}/v1/inbound/postmark", headers=tenant.headers, timeout=10).json()
    assert one["username"] == created["username"] and "password" not in one

    bad = httpx.put(f"{gateway}/v1/inbound/resend", json={"secret": "not base64 at all!"}, headers=tenant.headers)
    assert bad.status_code == 422
    bad = httpx.put(f"{gateway}/v1/inbound/sendgrid", json={"public_key": "SG.notakey"}, headers=tenant.headers)
    assert bad.status_code == 422
    assert httpx.delete(f"{gateway}/v1/inbound/resend", headers=tenant.headers).status_code == 204
    assert httpx.get(f"{gateway}/v1/inbound/resend", headers=tenant.headers).status_code == 404


def test_a_replaced_secret_applies_at_once(gateway: str, tenant: TenantKey, verifier: str) -> None:
    url = f"{verifier}/inbound/resend/{tenant.tenant_id}"
    first, second = new_resend_secret(), new_resend_secret()
    put(gateway, tenant, "resend", {"secret": first})
    body = json.dumps({"type": "email.opened", "data": {"email_id": "e1", "to": ["a@example.net"]}}).encode()
    signed = corpus.resend_headers(first, body, timestamp=int(time.time()), msg_id="msg_first")
    assert httpx.post(url, content=body, headers=signed, timeout=10).status_code == 200

    put(gateway, tenant, "resend", {"secret": second})  # the verifier's cached key is evicted by notification
    deadline = time.monotonic() + 2
    while True:
        stale_key = corpus.resend_headers(first, body, timestamp=int(time.time()), msg_id="msg_old_key")
        if httpx.post(url, content=body, headers=stale_key, timeout=10).status_code == 401:
            break
        assert time.monotonic() < deadline, "the replaced secret is still accepted"
        time.sleep(0.05)
    fresh = corpus.resend_headers(second, body, timestamp=int(time.time()), msg_id="msg_new_key")
    assert httpx.post(url, content=body, headers=fresh, timeout=10).status_code == 200

    assert httpx.delete(f"{gateway}/v1/inbound/resend", headers=tenant.headers).status_code == 204
    time.sleep(0.3)
    again = corpus.resend_headers(second, body, timestamp=int(time.time()), msg_id="msg_after_delete")
    assert httpx.post(url, content=body, headers=again, timeout=10).status_code == 401


@pytest.mark.parametrize("provider", ["sendgrid", "resend", "postmark"])
def test_tenant_receivers_accept_genuine_and_refuse_everything_else(
    gateway: str,
    operator_token: str,
    verifier: str,
    verifier_metrics: str,
    infra: dict[str, str],
    provider: str,
) -> None:
    mine = create_tenant(gateway, operator_token, f"inbound-mine-{provider}")
    theirs = create_tenant(gateway, operator_token, f"inbound-theirs-{provider}")
    setup = configure(gateway, mine, provider)
    other = configure(gateway, theirs, provider)
    url = f"{verifier}/inbound/{provider}/{mine.tenant_id}"
    now = int(time.time())

    def post(body: bytes, headers: dict[str, str], target: str = url) -> int:
        return httpx.post(target, content=body, headers=headers, timeout=10).status_code

    # Refusals first: nothing may be stored for any of them.
    body = setup.body()
    signed = setup.sign(body, now)
    assert post(body, other.sign(body, now)) == 401  # another tenant's key or credentials
    if provider != "postmark":  # Postmark signs nothing: its Basic credentials cover the sender, not the body
        assert post(corpus.flip_one_byte(body), signed) == 401  # modified body
    assert post(body, corpus.without(signed, setup.required_header)) == 401  # missing header
    if setup.timestamped:
        assert post(body, setup.sign(body, now - 3600)) == 401  # stale timestamp
    wrong = configure(gateway, create_tenant(gateway, operator_token, f"inbound-wrong-{provider}"), provider)
    assert post(body, wrong.sign(body, now)) == 401  # wrong secret
    # The refusal says why, as problem details the sender's developer can act on.
    forged = httpx.post(url, content=body, headers=wrong.sign(body, now), timeout=10)
    assert forged.headers["content-type"] == "application/problem+json"
    assert forged.json()["status"] == 401 and "does not match" in forged.json()["detail"]
    unsigned = httpx.post(url, content=body, headers=corpus.without(signed, setup.required_header), timeout=10)
    assert unsigned.json()["status"] == 401 and unsigned.json()["detail"]
    assert post(body, signed, f"{verifier}/inbound/{provider}/{uuid.uuid4()}") == 401  # unknown tenant
    assert post(body, signed, f"{verifier}/inbound/{provider}/not-a-tenant") == 401
    assert stored_events(infra["database_url"], mine) == 0

    # Genuine: accepted and stored once; a replay of the same request is answered 200 and does nothing.
    assert post(body, signed) == 200
    assert stored_events(infra["database_url"], mine) == 1
    assert post(body, signed) == 200
    assert stored_events(infra["database_url"], mine) == 1
    assert stored_events(infra["database_url"], theirs) == 0

    # Too large: 413 before anything is verified, stating the limit.
    too_large = httpx.post(url, content=b"[" + b" " * (2 * 1024 * 1024) + b"]", headers=signed, timeout=10)
    assert too_large.status_code == 413 and "limit of 1 MiB" in too_large.json()["detail"]

    # Every refusal and acceptance is counted by provider and reason.
    metrics = httpx.get(verifier_metrics, timeout=10).text
    for result in ("ok", "bad_signature", "missing_header", "unknown_tenant"):
        assert f'herald_inbound_verifications_total{{provider="{provider}",result="{result}"}}' in metrics
    # And like every HTTP route, by route template and status (no tenant id in the labels).
    route = f"/inbound/{provider}/{{tenant}}"
    for status in ("200", "401", "413"):
        series = f'method="POST",route="{route}",service="verifier",status="{status}"'
        assert f"herald_http_request_duration_seconds_count{{{series}}}" in metrics


def bounce(email_id: str, to: str, permanent: bool) -> bytes:
    return json.dumps(
        {
            "type": "email.bounced",
            "created_at": datetime.now(UTC).isoformat(),
            "data": {
                "email_id": email_id,
                "to": [to],
                "bounce": {"type": "Permanent" if permanent else "Transient", "message": "550 5.1.1"},
            },
        }
    ).encode()


def test_hard_bounce_suppresses_and_soft_bounce_only_records(
    gateway: str, tenant: TenantKey, verifier: str, resend: ResendStandIn
) -> None:
    add_provider(gateway, tenant, resend, priority=1)
    secret = new_resend_secret()
    put(gateway, tenant, "resend", {"secret": secret})
    url = f"{verifier}/inbound/resend/{tenant.tenant_id}"

    hard_job = sent_id(send(gateway, tenant, email(to="gone@example.com")))
    soft_job = sent_id(send(gateway, tenant, email(to="full@example.com")))
    hard = wait_for_status(gateway, tenant, hard_job)
    soft = wait_for_status(gateway, tenant, soft_job)
    assert hard["status"] == soft["status"] == "delivered"

    hard_body = bounce(hard["provider_message_id"], "Gone@Example.com", permanent=True)
    hard_headers = corpus.resend_headers(secret, hard_body, timestamp=int(time.time()), msg_id="msg_hard_1")
    assert httpx.post(url, content=hard_body, headers=hard_headers, timeout=10).status_code == 200
    soft_body = bounce(soft["provider_message_id"], "full@example.com", permanent=False)
    soft_headers = corpus.resend_headers(secret, soft_body, timestamp=int(time.time()), msg_id="msg_soft_1")
    assert httpx.post(url, content=soft_body, headers=soft_headers, timeout=10).status_code == 200

    events = httpx.get(f"{gateway}/v1/jobs/{hard_job}/events", headers=tenant.headers, timeout=10).json()["data"]
    assert [(e["type"], e["event_id"], e["recipient"]) for e in events] == [
        ("bounced_hard", "msg_hard_1", "gone@example.com")
    ]
    events = httpx.get(f"{gateway}/v1/jobs/{soft_job}/events", headers=tenant.headers, timeout=10).json()["data"]
    assert [e["type"] for e in events] == ["bounced_soft"]
    assert job_of(gateway, tenant, hard_job)["status"] == "bounced"
    assert job_of(gateway, tenant, soft_job)["status"] == "delivered"  # a soft bounce is only recorded

    listed = httpx.get(f"{gateway}/v1/suppressions", headers=tenant.headers, timeout=10).json()
    entries = {e["address"]: e for e in listed["data"]}
    assert set(entries) == {"gone@example.com"}
    assert entries["gone@example.com"]["reason"] == "hard_bounce"
    assert entries["gone@example.com"]["source_event_id"] == "resend:msg_hard_1"

    calls = len(resend.received("POST", RESEND_SEND))
    again = sent_id(send(gateway, tenant, email(to="gone@example.com")))
    job = httpx.get(f"{gateway}/v1/jobs/{again}", headers=tenant.headers, timeout=10).json()
    assert job["status"] == "suppressed" and job["attempts"] == []
    soft_again = sent_id(send(gateway, tenant, email(to="full@example.com")))
    assert wait_for_status(gateway, tenant, soft_again)["status"] == "delivered"
    assert len(resend.received("POST", RESEND_SEND)) == calls + 1  # only the soft-bounced address was sent

    # Another tenant's job is not theirs to read.
    other = httpx.get(f"{gateway}/v1/jobs/{uuid.uuid4()}/events", headers=tenant.headers, timeout=10)
    assert other.status_code == 404


def job_of(gateway: str, tenant: TenantKey, job_id: str) -> dict[str, Any]:
    response = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers, timeout=10)
    assert response.status_code == 200, response.text
    job: dict[str, Any] = response.json()
    return job


def resend_event(event_type: str, email_id: str, to: str, at: str, **data: Any) -> bytes:
    return json.dumps(
        {"type": event_type, "created_at": at, "data": {"email_id": email_id, "to": [to], **data}}
    ).encode()


def test_provider_events_move_the_job_forward_never_back(
    stack: Stack, gateway: str, tenant: TenantKey, verifier: str, resend: ResendStandIn
) -> None:
    """delivered confirms; a hard bounce makes the job BOUNCED and a complaint COMPLAINED, the newer of the two
    deciding by the provider's own time; deferred, opens and a late "delivered" only record; replays nothing."""
    add_provider(gateway, tenant, resend, priority=1)
    secret = new_resend_secret()
    put(gateway, tenant, "resend", {"secret": secret})
    url = f"{verifier}/inbound/resend/{tenant.tenant_id}"
    job_id = sent_id(send(gateway, tenant, email(to="reader@example.com", ordering_key="thread-1")))
    accepted = wait_for_status(gateway, tenant, job_id)
    assert accepted["status"] == "delivered" and accepted["provider_delivered_at"] is None
    message_id = accepted["provider_message_id"]

    def deliver(event_id: str, body: bytes) -> None:
        headers = corpus.resend_headers(secret, body, timestamp=int(time.time()), msg_id=event_id)
        assert httpx.post(url, content=body, headers=headers, timeout=10).status_code == 200

    deliver("msg_deferred", resend_event("email.delivery_delayed", message_id, "reader@example.com", at_minute(1)))
    assert job_of(gateway, tenant, job_id)["status"] == "delivered"
    deliver("msg_delivered", resend_event("email.delivered", message_id, "reader@example.com", at_minute(2)))
    confirmed = job_of(gateway, tenant, job_id)
    assert confirmed["status"] == "delivered"
    assert confirmed["provider_delivered_at"] == at_minute(2)
    deliver("msg_opened", resend_event("email.opened", message_id, "reader@example.com", at_minute(3)))
    assert job_of(gateway, tenant, job_id)["status"] == "delivered"

    # A hard bounce (of another recipient, say) at 00:05 is final: BOUNCED, naming the event.
    bounced = resend_event(
        "email.bounced",
        message_id,
        "gone@example.com",
        at_minute(5),
        bounce={"type": "Permanent", "message": "550 5.1.1"},
    )
    deliver("msg_bounce", bounced)
    job = job_of(gateway, tenant, job_id)
    assert job["status"] == "bounced"
    assert job["status_event_id"] == "resend:msg_bounce"
    assert "hard bounce" in job["last_error"] and "gone@example.com" in job["last_error"]
    deliver("msg_bounce", bounced)  # a replay changes nothing
    # Older news arriving late changes nothing: a complaint from 00:04, a later "delivered" never undoes it.
    deliver("msg_old_complaint", resend_event("email.complained", message_id, "reader@example.com", at_minute(4)))
    deliver("msg_late_delivered", resend_event("email.delivered", message_id, "other@example.com", at_minute(6)))
    job = job_of(gateway, tenant, job_id)
    assert (job["status"], job["status_event_id"]) == ("bounced", "resend:msg_bounce")
    assert job["provider_delivered_at"] == at_minute(2)  # the earliest report stays

    # A newer complaint does move it.
    deliver("msg_complaint", resend_event("email.complained", message_id, "reader@example.com", at_minute(7)))
    job = job_of(gateway, tenant, job_id)
    assert (job["status"], job["status_event_id"]) == ("complained", "resend:msg_complaint")
    assert "spam complaint" in job["last_error"]
    listed = httpx.get(f"{gateway}/v1/jobs", params={"status": "complained"}, headers=tenant.headers, timeout=10)
    assert [j["id"] for j in listed.json()["data"]] == [job_id]

    events = httpx.get(f"{gateway}/v1/jobs/{job_id}/events", headers=tenant.headers, timeout=10).json()["data"]
    assert [e["type"] for e in events] == [
        "deferred",
        "delivered",
        "opened",
        "complained",
        "bounced_hard",
        "delivered",
        "complained",
    ]

    # gRPC reads the same state.
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        answer = gateway_pb2_grpc.NotificationServiceStub(channel).GetJob(
            gateway_pb2.NotificationServiceGetJobRequest(id=job_id),
            metadata=(("authorization", f"Bearer {tenant.api_key}"),),
            timeout=10,
        )
    assert answer.job.status == common_pb2.JOB_STATUS_COMPLAINED
    assert answer.job.status_event_id == "resend:msg_complaint"
    assert answer.job.provider_delivered_at.ToDatetime(tzinfo=UTC) == datetime.fromisoformat(at_minute(2))

    # A bounced or complained job is finished: the next job with its ordering key is not held back by it.
    after = sent_id(send(gateway, tenant, email(to="next@example.com", ordering_key="thread-1")))
    assert wait_for_status(gateway, tenant, after)["status"] == "delivered"


def at_minute(minute: int) -> str:
    """A provider event time: minutes past midnight today (all within a day, none in the future)."""
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight.replace(minute=minute).isoformat().replace("+00:00", "Z")


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


@pytest.mark.parametrize("provider", ["sendgrid", "postmark"])
def test_bounce_finds_its_job_by_provider_message_id(
    gateway: str,
    tenant: TenantKey,
    verifier: str,
    request: pytest.FixtureRequest,
    provider: str,
) -> None:
    stand_in = request.getfixturevalue(provider)
    add_provider(gateway, tenant, stand_in, priority=1)
    job_id = sent_id(send(gateway, tenant, email(to="lost@example.com")))
    job = wait_for_status(gateway, tenant, job_id)
    assert job["status"] == "delivered" and job["provider_message_id"]
    message_id = job["provider_message_id"]
    url = f"{verifier}/inbound/{provider}/{tenant.tenant_id}"
    if provider == "sendgrid":
        private = ec.generate_private_key(ec.SECP256R1())
        put(gateway, tenant, "sendgrid", {"public_key": corpus.sendgrid_public_key(private)})
        events = [
            {
                "email": "lost@example.com",
                "timestamp": int(time.time()),
                "event": "delivered",
                "sg_event_id": "sg-delivered-1",
                "sg_message_id": f"{message_id}.filter0001.16648.5515E0B88.0",
            },
            {
                "email": "lost@example.com",
                "timestamp": int(time.time()) + 1,
                "event": "bounce",
                "type": "bounce",
                "sg_event_id": "sg-bounce-1",
                "sg_message_id": f"{message_id}.filter0001.16648.5515E0B88.0",
            },
        ]
        body = json.dumps(events).encode() + b"\r\n"
        headers = corpus.sendgrid_headers(private, body, timestamp=int(time.time()))
        source = "sendgrid:sg-bounce-1"
    else:
        created = put(gateway, tenant, "postmark", {})
        body = json.dumps(
            {
                "RecordType": "Bounce",
                "ID": 4323372036854775807,
                "Type": "HardBounce",
                "MessageID": message_id,
                "Email": "lost@example.com",
                "BouncedAt": datetime.now(UTC).isoformat(),
            }
        ).encode()
        headers = corpus.postmark_headers(created["username"], remember_secret(created["password"]))
        source = f"postmark:Bounce:{message_id}:4323372036854775807"
    assert httpx.post(url, content=body, headers=headers, timeout=10).status_code == 200

    events = httpx.get(f"{gateway}/v1/jobs/{job_id}/events", headers=tenant.headers, timeout=10).json()["data"]
    assert [e["type"] for e in events][-1] == "bounced_hard"
    suppressed = httpx.get(f"{gateway}/v1/suppressions", headers=tenant.headers, timeout=10).json()["data"]
    assert [(e["address"], e["reason"], e["source_event_id"]) for e in suppressed] == [
        ("lost@example.com", "hard_bounce", source)
    ]
