"""The SendGrid adapter against the stand-in speaking SendGrid's v3 mail-send API."""

from __future__ import annotations

import pytest
from herald_email_sender.outcome import Outcome, SendResult
from herald_email_sender.providers import sendgrid as adapter

from herald.cli.embedded import free_port
from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from tests.email.conftest import SENDGRID_KEY, full_request, simple_request
from tests.standins.scripted import Stall
from tests.standins.sendgrid import SEND_PATH, SendGridStandIn
from tests.standins.server import Reply


async def test_every_field_maps_onto_the_v3_body(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    result = await sendgrid_send(http, sendgrid, full_request(), idempotency_key="job-1")

    assert result.outcome is Outcome.ACCEPTED and result.status_code == 202
    [(message_id, _)] = sendgrid.sent
    assert result.message_id == message_id
    [request] = sendgrid.received("POST", SEND_PATH)
    assert request.headers["authorization"] == f"Bearer {SENDGRID_KEY}"
    assert "idempotency-key" not in request.headers  # SendGrid has none
    assert request.json() == {
        "personalizations": [
            {
                "to": [{"email": "ada@example.com", "name": "Ada Lovelace"}, {"email": "bob@example.com"}],
                "cc": [{"email": "carol@example.com", "name": "Carol"}],
                "bcc": [{"email": "audit@acme.example"}],
            }
        ],
        "from": {"email": "billing@acme.example", "name": "Acme Billing"},
        "reply_to": {"email": "support@acme.example", "name": "Acme Support"},
        "subject": "Your invoice #1042",
        "content": [
            {"type": "text/plain", "value": "Hello Ada, your invoice is attached."},
            {"type": "text/html", "value": "<p>Hello Ada, your invoice is attached.</p>"},
        ],
        "headers": {"List-Unsubscribe": "<mailto:unsub@acme.example>", "X-Campaign": "spring"},
        "categories": ["invoice", "billing"],
        "custom_args": {"customer": "c-77", "order_id": "1042"},
    }


async def test_absent_fields_are_left_out(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    result = await sendgrid_send(http, sendgrid, simple_request(text="", html="<b>Hi</b>"))
    assert result.outcome is Outcome.ACCEPTED
    assert sendgrid.received("POST", SEND_PATH)[0].json() == {
        "personalizations": [{"to": [{"email": "ada@example.com"}]}],
        "from": {"email": "hello@acme.example"},
        "subject": "Hi",
        "content": [{"type": "text/html", "value": "<b>Hi</b>"}],
    }


@pytest.mark.parametrize(
    ("setup", "request_changes", "status", "says"),
    [
        ("unknown key", {}, 401, "authorization required"),
        ("no mail.send", {}, 403, "access forbidden"),
        ("rejected recipient", {}, 400, "Does not contain a valid address"),
        ("malformed", {"subject": ""}, 400, "The subject is required"),
        ("malformed", {"text": "", "html": ""}, 400, "content parameter is required"),
    ],
)
async def test_permanent_refusals(
    http: ReceiverClient,
    sendgrid: SendGridStandIn,
    setup: str,
    request_changes: dict[str, object],
    status: int,
    says: str,
) -> None:
    if setup == "no mail.send":
        sendgrid.add_key(SENDGRID_KEY, ["user.profile.read"])
    elif setup != "unknown key":
        sendgrid.add_key(SENDGRID_KEY)
    if setup == "rejected recipient":
        sendgrid.reject.add("ada@example.com")
    result = await sendgrid_send(http, sendgrid, simple_request(**request_changes))
    assert result.outcome is Outcome.PERMANENT and result.status_code == status
    assert says in result.error and SENDGRID_KEY not in result.error
    assert sendgrid.sent == []


async def test_rate_limit_is_transient_and_waits_for_the_reset(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    sendgrid.rate_limit_next(reset_in_s=7)
    result = await sendgrid_send(http, sendgrid, simple_request())
    assert result.outcome is Outcome.TRANSIENT and result.status_code == 429
    assert result.retry_after_s is not None and 0 < result.retry_after_s <= 7
    # The script is spent: the next call goes through.
    assert (await sendgrid_send(http, sendgrid, simple_request())).outcome is Outcome.ACCEPTED


async def test_a_retry_after_header_wins_over_the_reset(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    sendgrid.script("POST", SEND_PATH, Reply(429, {"errors": []}, {"Retry-After": "12"}))
    result = await sendgrid_send(http, sendgrid, simple_request())
    assert result.outcome is Outcome.TRANSIENT and result.retry_after_s == 12.0


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_server_errors_are_transient(http: ReceiverClient, sendgrid: SendGridStandIn, status: int) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    sendgrid.script("POST", SEND_PATH, Reply(status, {"errors": [{"message": "internal error"}]}))
    result = await sendgrid_send(http, sendgrid, simple_request())
    assert result.outcome is Outcome.TRANSIENT and result.status_code == status
    assert result.retry_after_s is None


async def test_a_stall_past_the_timeout_is_transient(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    sendgrid.script("POST", SEND_PATH, Stall(2.0))
    result = await sendgrid_send(http, sendgrid, simple_request(), timeout_s=0.3)
    assert result.outcome is Outcome.TRANSIENT and result.status_code == 0
    assert "no answer within 0.3 s" in result.error


async def test_an_unreachable_provider_is_transient(http: ReceiverClient) -> None:
    result = await send_to(http, f"http://127.0.0.1:{free_port()}")
    assert result.outcome is Outcome.TRANSIENT and "could not be reached" in result.error


async def test_an_unusable_base_url_is_permanent(http: ReceiverClient) -> None:
    result = await send_to(http, "ftp://sendgrid.invalid")
    assert result.outcome is Outcome.PERMANENT and "URL" in result.error


async def test_accepted_without_a_message_id_is_still_accepted(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    """Retrying a 202 would send twice; a missing id is noted, not failed."""
    sendgrid.add_key(SENDGRID_KEY)
    sendgrid.script("POST", SEND_PATH, Reply(202, None))
    result = await sendgrid_send(http, sendgrid, simple_request())
    assert result.outcome is Outcome.ACCEPTED and result.message_id == "" and "X-Message-Id" in result.error


async def sendgrid_send(
    http: ReceiverClient,
    stand_in: SendGridStandIn,
    request: common_pb2.EmailRequest,
    idempotency_key: str = "",
    timeout_s: float = 5.0,
) -> SendResult:
    return await adapter.send(
        http,
        SENDGRID_KEY,
        request,
        base_url=stand_in.base_url,
        idempotency_key=idempotency_key,
        timeout_s=timeout_s,
    )


async def test_a_base_url_with_a_trailing_slash(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    result = await send_to(http, sendgrid.base_url + "/")
    assert result.outcome is Outcome.ACCEPTED and sendgrid.received("POST", SEND_PATH)


async def send_to(http: ReceiverClient, base_url: str) -> SendResult:
    return await adapter.send(http, SENDGRID_KEY, simple_request(), base_url=base_url, timeout_s=2)
