"""The Postmark adapter against the stand-in speaking Postmark's email API and its ErrorCodes."""

from __future__ import annotations

import pytest
from herald_email_sender.outcome import Outcome, SendResult
from herald_email_sender.providers import postmark as adapter

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from tests.email.conftest import POSTMARK_TOKEN, address, full_request, simple_request
from tests.standins.postmark import SEND_PATH, PostmarkStandIn, refusal
from tests.standins.server import Reply


async def test_every_field_maps_onto_the_email_body(http: ReceiverClient, postmark: PostmarkStandIn) -> None:
    postmark.add_token(POSTMARK_TOKEN)
    request = full_request(**{"from": address("billing@acme.example", 'Acme, Billing "Dept"')})
    result = await postmark_send(http, postmark, request, message_stream="broadcast")

    assert result.outcome is Outcome.ACCEPTED and result.status_code == 200
    [(message_id, _)] = postmark.sent
    assert result.message_id == message_id
    [sent] = postmark.received("POST", SEND_PATH)
    assert sent.headers["x-postmark-server-token"] == POSTMARK_TOKEN
    assert sent.headers["accept"] == "application/json"
    assert "idempotency-key" not in sent.headers  # Postmark has none
    assert sent.json() == {
        "From": '"Acme, Billing \\"Dept\\"" <billing@acme.example>',
        "To": "Ada Lovelace <ada@example.com>, bob@example.com",
        "Cc": "Carol <carol@example.com>",
        "Bcc": "audit@acme.example",
        "ReplyTo": "Acme Support <support@acme.example>",
        "Subject": "Your invoice #1042",
        "TextBody": "Hello Ada, your invoice is attached.",
        "HtmlBody": "<p>Hello Ada, your invoice is attached.</p>",
        "Headers": [
            {"Name": "List-Unsubscribe", "Value": "<mailto:unsub@acme.example>"},
            {"Name": "X-Campaign", "Value": "spring"},
        ],
        # Postmark takes one tag: the first.
        "Tag": "invoice",
        "Metadata": {"customer": "c-77", "order_id": "1042"},
        "MessageStream": "broadcast",
    }


async def test_absent_fields_are_left_out(http: ReceiverClient, postmark: PostmarkStandIn) -> None:
    postmark.add_token(POSTMARK_TOKEN)
    assert (await postmark_send(http, postmark, simple_request())).outcome is Outcome.ACCEPTED
    assert postmark.received("POST", SEND_PATH)[0].json() == {
        "From": "hello@acme.example",
        "To": "ada@example.com",
        "Subject": "Hi",
        "TextBody": "Hello.",
    }


@pytest.mark.parametrize(
    ("setup", "request_changes", "status", "says"),
    [
        ("unknown token", {}, 401, "ErrorCode 10"),
        ("inactive recipient", {}, 422, "ErrorCode 406"),
        ("malformed", {"text": "", "html": ""}, 422, "ErrorCode 300"),
        ("malformed", {"to": []}, 422, "ErrorCode 300: Zero recipients"),
    ],
)
async def test_permanent_refusals(
    http: ReceiverClient,
    postmark: PostmarkStandIn,
    setup: str,
    request_changes: dict[str, object],
    status: int,
    says: str,
) -> None:
    if setup != "unknown token":
        postmark.add_token(POSTMARK_TOKEN)
    if setup == "inactive recipient":
        postmark.inactive.add("ada@example.com")
    result = await postmark_send(http, postmark, simple_request(**request_changes))
    assert result.outcome is Outcome.PERMANENT and result.status_code == status
    assert says in result.error and POSTMARK_TOKEN not in result.error
    assert postmark.sent == []


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (refusal(100, "Maintenance", status=503), Outcome.TRANSIENT),
        # ErrorCode 100 decides even under a status that would read permanent.
        (refusal(100, "Maintenance"), Outcome.TRANSIENT),
        (Reply(429, {"ErrorCode": 429, "Message": "Rate limit exceeded"}, {"Retry-After": "4"}), Outcome.TRANSIENT),
        (Reply(500, {"ErrorCode": 500, "Message": "Internal Server Error"}), Outcome.TRANSIENT),
        (refusal(405, "Not allowed to send: you have run out of credits."), Outcome.PERMANENT),
        (refusal(400, "Sender signature not found"), Outcome.PERMANENT),
        # A 200 that carries an error code is not an acceptance.
        (Reply(200, {"ErrorCode": 300, "Message": "Invalid email request"}), Outcome.PERMANENT),
    ],
)
async def test_error_codes(http: ReceiverClient, postmark: PostmarkStandIn, reply: Reply, outcome: Outcome) -> None:
    postmark.add_token(POSTMARK_TOKEN)
    postmark.script("POST", SEND_PATH, reply)
    result = await postmark_send(http, postmark, simple_request())
    assert result.outcome is outcome and result.status_code == reply.status
    if reply.status == 429:
        assert result.retry_after_s == 4.0


async def postmark_send(
    http: ReceiverClient, stand_in: PostmarkStandIn, request: common_pb2.EmailRequest, message_stream: str = ""
) -> SendResult:
    return await adapter.send(
        http,
        POSTMARK_TOKEN,
        request,
        base_url=stand_in.base_url,
        idempotency_key="job-1",
        timeout_s=5.0,
        options={adapter.MESSAGE_STREAM_OPTION: message_stream},
    )
