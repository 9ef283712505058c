"""Email delivery end to end: the gateway accepts, the email-sender walks the tenant's
providers (real HTTP stand-ins of SendGrid, Resend and Postmark), the ledger records every
provider call as an attempt row."""

from __future__ import annotations

import grpc
import httpx

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.standins.herald_email import add_provider, attempts_of, email, job_rows, send, sent_id
from tests.standins.postmark import PostmarkStandIn
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SEND_PATH as SENDGRID_SEND
from tests.standins.sendgrid import SendGridStandIn
from tests.standins.server import Reply
from tests.support.api import TenantKey, wait_for_status

SETTLED = {"delivered", "failed"}


def test_fallback_walks_providers_by_priority_until_one_accepts(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, resend: ResendStandIn, postmark: PostmarkStandIn
) -> None:
    low = add_provider(gateway, tenant, postmark, priority=1)
    top = add_provider(gateway, tenant, sendgrid, priority=10)
    middle = add_provider(gateway, tenant, resend, priority=5)
    sendgrid.fail_with = 503  # the top provider is down

    job_id = sent_id(send(gateway, tenant, email()))
    job = wait_for_status(gateway, tenant, job_id, SETTLED)

    assert job["status"] == "delivered" and job["attempt_count"] == 1
    assert attempts_of(job) == [(top, "transient_failure", 1), (middle, "succeeded", 1)]
    assert [a["target"] for a in job["attempts"]] == ["sendgrid", "resend"]
    [resend_id] = resend.emails
    assert job["provider_id"] == middle and job["provider_message_id"] == resend_id
    assert job["attempts"][1]["provider_message_id"] == resend_id
    assert postmark.received("POST", "/email") == []  # the walk ended at the first acceptance
    assert resend.emails[resend_id]["from"] == "Acme <hello@acme.example>"
    assert low


def test_pinned_provider_and_fallback_are_the_only_ones_tried(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, resend: ResendStandIn, postmark: PostmarkStandIn
) -> None:
    top = add_provider(gateway, tenant, sendgrid, priority=10)
    fallback = add_provider(gateway, tenant, resend, priority=5)
    pinned = add_provider(gateway, tenant, postmark, priority=1)
    postmark.script("POST", "/email", Reply(500, {"ErrorCode": 0, "Message": "stand-in outage"}))

    job_id = sent_id(send(gateway, tenant, email(provider=pinned, fallback=fallback)))
    job = wait_for_status(gateway, tenant, job_id, SETTLED)

    assert job["status"] == "delivered"
    assert attempts_of(job) == [(pinned, "transient_failure", 1), (fallback, "succeeded", 1)]
    assert sendgrid.received("POST", SENDGRID_SEND) == []  # highest priority, but not in the pair

    # Pinned alone and accepted: nothing else is called.
    job_id = sent_id(send(gateway, tenant, email(provider=pinned)))
    job = wait_for_status(gateway, tenant, job_id, SETTLED)
    assert attempts_of(job) == [(pinned, "succeeded", 1)]
    assert sendgrid.received("POST", SENDGRID_SEND) == [] and top

    # A fallback without a pinned provider, or a header the message's fields own, is refused at the door.
    refused = send(gateway, tenant, email(fallback=fallback, headers={"Reply-To": "x@example.com", "X-Ok": "1"}))
    assert refused.status_code == 422
    assert {e["field"] for e in refused.json()["errors"]} == {"fallback", "headers.Reply-To"}


def test_permanent_failure_fails_at_once_and_transient_is_retried_with_the_same_key(
    gateway: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    only = add_provider(gateway, tenant, resend, priority=1)

    # Rejected recipient: 422 validation_error is permanent. One walk, FAILED, no retry.
    resend.reject.add("bounce@example.com")
    job_id = sent_id(send(gateway, tenant, email(to="bounce@example.com")))
    job = wait_for_status(gateway, tenant, job_id, SETTLED)
    assert job["status"] == "failed" and job["attempt_count"] == 1
    assert attempts_of(job) == [(only, "permanent_failure", 1)]
    assert "validation_error" in job["last_error"]
    assert len(resend.received("POST", RESEND_SEND)) == 1

    # 429 with Retry-After is transient: the walk counts as one attempt; the next walk,
    # after the backoff, is accepted. Both calls carried the same idempotency key.
    before = len(resend.received("POST", RESEND_SEND))
    resend.rate_limit_next(retry_after="0")
    job_id = sent_id(send(gateway, tenant, email(to="carol@example.com")))
    job = wait_for_status(gateway, tenant, job_id, SETTLED)
    assert job["status"] == "delivered" and job["attempt_count"] == 2
    assert attempts_of(job) == [(only, "transient_failure", 1), (only, "succeeded", 2)]
    assert job["attempts"][0]["status_code"] == 429
    calls = resend.received("POST", RESEND_SEND)[before:]
    assert len(calls) == 2
    assert {c.headers["idempotency-key"] for c in calls} == {f"herald-{job_id}"}


def test_idempotency_key_reaches_resend_and_a_repeat_creates_no_second_job(
    gateway: str, tenant: TenantKey, resend: ResendStandIn, infra: dict[str, str]
) -> None:
    add_provider(gateway, tenant, resend, priority=1)
    body = email(to="dora@example.com")
    first = send(gateway, tenant, body, **{"Idempotency-Key": "receipt-2042"})
    job_id = sent_id(first)
    assert wait_for_status(gateway, tenant, job_id, SETTLED)["status"] == "delivered"

    again = send(gateway, tenant, body, **{"Idempotency-Key": "receipt-2042"})
    assert again.status_code == 202 and again.headers.get("idempotent-replayed") == "true"
    assert again.json()["id"] == job_id
    assert job_rows(infra["database_url"], tenant) == 1

    [call] = resend.received("POST", RESEND_SEND)
    assert call.headers["idempotency-key"] == "receipt-2042"
    assert len(resend.emails) == 1


def test_a_suppressed_address_ends_suppressed_with_no_provider_call(
    gateway: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    add_provider(gateway, tenant, resend, priority=1)
    added = httpx.post(f"{gateway}/v1/suppressions", json={"address": "gone@example.com"}, headers=tenant.headers)
    assert added.status_code == 201
    job_id = sent_id(send(gateway, tenant, email(to="gone@example.com")))
    job = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers).json()
    assert job["status"] == "suppressed" and job["attempts"] == []
    fine = sent_id(send(gateway, tenant, email(to="fine@example.com")))
    assert wait_for_status(gateway, tenant, fine, SETTLED)["status"] == "delivered"
    assert [c.json()["to"] for c in resend.received("POST", RESEND_SEND)] == [["fine@example.com"]]


def test_send_email_over_grpc(stack: Stack, gateway: str, tenant: TenantKey, resend: ResendStandIn) -> None:
    add_provider(gateway, tenant, resend, priority=1)
    request = common_pb2.EmailRequest(
        to=[common_pb2.EmailAddress(email="Eve@Example.com", name="Eve")], subject="Hi", html="<p>Hello</p>"
    )
    request.__getattribute__("from").CopyFrom(common_pb2.EmailAddress(email="hello@acme.example"))
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        metadata = (("authorization", f"Bearer {tenant.api_key}"),)
        answer = api.SendEmail(gateway_pb2.SendEmailRequest(email=request), metadata=metadata, timeout=10)
        assert answer.status in (common_pb2.JOB_STATUS_QUEUED, common_pb2.JOB_STATUS_PENDING)
        bad = common_pb2.EmailRequest(subject="x", text="y", to=[common_pb2.EmailAddress(email="nope")])
        try:
            api.SendEmail(gateway_pb2.SendEmailRequest(email=bad), metadata=metadata, timeout=10)
        except grpc.RpcError as error:
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
        else:
            raise AssertionError("an invalid email was accepted")
    assert wait_for_status(gateway, tenant, answer.id, SETTLED)["status"] == "delivered"
    [call] = resend.received("POST", RESEND_SEND)
    assert call.json()["to"] == ["Eve <Eve@example.com>"]
