"""What the ledger does with verified email provider events: bounces, complaints, deliveries and opens recorded on
the job they name (found by the provider's message id), the job's status moved forward by the provider's own time
and never back, and hard bounces suppressing the address."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
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
from tests.support.api import TenantKey, remember_secret, wait_for_status
from tests.support.inbound import new_resend_secret, put
from tests.verifier import corpus


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
