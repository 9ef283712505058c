"""The Resend adapter against the stand-in speaking Resend's emails API, idempotency keys included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from herald_email_sender.outcome import Outcome, SendResult
from herald_email_sender.providers import resend as adapter

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from tests.email.conftest import RESEND_KEY, full_request, simple_request
from tests.standins.resend import SEND_PATH, ResendStandIn, error
from tests.standins.server import Reply


async def test_every_field_maps_onto_the_emails_body_and_the_key_travels(
    http: ReceiverClient, resend: ResendStandIn
) -> None:
    resend.add_key(RESEND_KEY, "sending_access")
    result = await resend_send(http, resend, full_request(), "job-0193a1b2-key")

    assert result.outcome is Outcome.ACCEPTED and result.status_code == 200
    assert list(resend.emails) == [result.message_id]
    [request] = resend.received("POST", SEND_PATH)
    assert request.headers["authorization"] == f"Bearer {RESEND_KEY}"
    assert request.headers["idempotency-key"] == "job-0193a1b2-key"
    assert request.json() == {
        "from": "Acme Billing <billing@acme.example>",
        "to": ["Ada Lovelace <ada@example.com>", "bob@example.com"],
        "cc": ["Carol <carol@example.com>"],
        "bcc": ["audit@acme.example"],
        "reply_to": "Acme Support <support@acme.example>",
        "subject": "Your invoice #1042",
        "text": "Hello Ada, your invoice is attached.",
        "html": "<p>Hello Ada, your invoice is attached.</p>",
        "headers": {"List-Unsubscribe": "<mailto:unsub@acme.example>", "X-Campaign": "spring"},
        "tags": [
            {"name": "invoice", "value": "true"},
            {"name": "billing", "value": "true"},
            {"name": "customer", "value": "c-77"},
            {"name": "order_id", "value": "1042"},
        ],
    }


async def test_no_key_means_no_header(http: ReceiverClient, resend: ResendStandIn) -> None:
    resend.add_key(RESEND_KEY)
    assert (await resend_send(http, resend, simple_request(), "")).outcome is Outcome.ACCEPTED
    assert "idempotency-key" not in resend.received("POST", SEND_PATH)[0].headers
    assert resend.received("POST", SEND_PATH)[0].json() == {
        "from": "hello@acme.example",
        "to": ["ada@example.com"],
        "subject": "Hi",
        "text": "Hello.",
    }


async def test_a_retry_with_the_same_key_sends_nothing_new(http: ReceiverClient, resend: ResendStandIn) -> None:
    """The point of the key: a retry after a timeout gets the first send's id back."""
    resend.add_key(RESEND_KEY)
    first = await resend_send(http, resend, full_request(), "job-42")
    again = await resend_send(http, resend, full_request(), "job-42")
    assert first.outcome is again.outcome is Outcome.ACCEPTED
    assert again.message_id == first.message_id
    assert len(resend.emails) == 1 and len(resend.received("POST", SEND_PATH)) == 2


async def test_the_same_key_with_another_body_is_permanent(http: ReceiverClient, resend: ResendStandIn) -> None:
    resend.add_key(RESEND_KEY)
    await resend_send(http, resend, simple_request(), "job-43")
    result = await resend_send(http, resend, simple_request(subject="Changed"), "job-43")
    assert result.outcome is Outcome.PERMANENT and result.status_code == 409
    assert "invalid_idempotent_request" in result.error


async def test_a_concurrent_request_with_the_key_is_transient(http: ReceiverClient, resend: ResendStandIn) -> None:
    resend.add_key(RESEND_KEY)
    resend.script(
        "POST",
        SEND_PATH,
        error(
            409, "concurrent_idempotent_requests", "Same idempotency key used while original request is in progress."
        ),
    )
    result = await resend_send(http, resend, simple_request(), "job-44")
    assert result.outcome is Outcome.TRANSIENT and result.status_code == 409


async def test_a_key_longer_than_resend_accepts_is_refused_before_calling(
    http: ReceiverClient, resend: ResendStandIn
) -> None:
    resend.add_key(RESEND_KEY)
    result = await resend_send(http, resend, simple_request(), "k" * 257)
    assert result.outcome is Outcome.PERMANENT and resend.requests == []


@pytest.mark.parametrize(
    ("setup", "request_changes", "status", "says"),
    [
        ("unknown key", {}, 403, "invalid_api_key"),
        ("rejected recipient", {}, 422, "Invalid `to` field"),
        ("malformed", {"text": "", "html": ""}, 422, "missing_required_field"),
        ("malformed", {"tags": ["has space"]}, 422, "Tags should only contain"),
    ],
)
async def test_permanent_refusals(
    http: ReceiverClient,
    resend: ResendStandIn,
    setup: str,
    request_changes: dict[str, object],
    status: int,
    says: str,
) -> None:
    if setup != "unknown key":
        resend.add_key(RESEND_KEY)
    if setup == "rejected recipient":
        resend.reject.add("ada@example.com")
    result = await resend_send(http, resend, simple_request(**request_changes), "job-45")
    assert result.outcome is Outcome.PERMANENT and result.status_code == status
    assert says in result.error and RESEND_KEY not in result.error
    assert resend.emails == {}


async def test_rate_limit_carries_retry_after(http: ReceiverClient, resend: ResendStandIn) -> None:
    resend.add_key(RESEND_KEY)
    resend.rate_limit_next(retry_after="3")
    result = await resend_send(http, resend, simple_request(), "job-46")
    assert result.outcome is Outcome.TRANSIENT and result.status_code == 429 and result.retry_after_s == 3.0
    assert "rate_limit_exceeded" in result.error


async def test_retry_after_as_an_http_date(http: ReceiverClient, resend: ResendStandIn) -> None:
    resend.add_key(RESEND_KEY)
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    resend.script("POST", SEND_PATH, Reply(429, {"name": "daily_quota_exceeded"}, {"Retry-After": when}))
    result = await resend_send(http, resend, simple_request(), "job-47")
    assert result.outcome is Outcome.TRANSIENT
    assert result.retry_after_s is not None and 60 < result.retry_after_s <= 120


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_are_transient(http: ReceiverClient, resend: ResendStandIn, status: int) -> None:
    resend.add_key(RESEND_KEY)
    resend.script("POST", SEND_PATH, error(status, "application_error", "Something went wrong."))
    result = await resend_send(http, resend, simple_request(), "job-48")
    assert result.outcome is Outcome.TRANSIENT and result.status_code == status


async def resend_send(
    http: ReceiverClient, stand_in: ResendStandIn, request: common_pb2.EmailRequest, idempotency_key: str
) -> SendResult:
    return await adapter.send(
        http,
        RESEND_KEY,
        request,
        base_url=stand_in.base_url,
        idempotency_key=idempotency_key,
        timeout_s=5.0,
    )
