"""Postmark."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import Answer, ReceiverClient
from herald_email_sender import message
from herald_email_sender.outcome import SendResult, accepted, from_status, json_body, permanent, safe_text, transient
from herald_email_sender.providers import api, validation
from herald_email_sender.providers.validation import VALID, Validation

DEFAULT_BASE_URL = "https://api.postmarkapp.com"


async def validate(client: ReceiverClient, server_token: str, base_url: str) -> Validation:
    """`GET /server` with the server token answers the server's settings, or 401 (ErrorCode 10)."""
    url = f"{base_url or DEFAULT_BASE_URL}/server"
    response = await api.check(client, url, server_headers(server_token), "Postmark")
    if isinstance(response, Validation):
        return response
    if response.status_code == 422:
        return Validation(False, "Postmark rejected the server token")
    return VALID if response.status_code == 200 else Validation(False, f"Postmark answered {response.status_code}")


async def validate_account_token(client: ReceiverClient, account_token: str, base_url: str) -> Validation:
    """`GET /domains?count=1&offset=0` with the account token (the domains API Herald uses it
    for) answers the account's domains, or 401 (ErrorCode 10)."""
    url = f"{base_url or DEFAULT_BASE_URL}/domains?count=1&offset=0"
    response = await api.check(client, url, account_headers(account_token))
    if isinstance(response, Validation):
        return response
    verdict = validation.from_status(response, "Postmark")
    if verdict is not None:
        return Validation(False, "Postmark rejected the account token") if not verdict.unreachable else verdict
    return VALID if response.status_code == 200 else Validation(False, f"Postmark answered {response.status_code}")


# --- sending: POST /email --------------------------------------------------------------------
#
# Postmark has no idempotency key: a retry after a timeout can deliver twice. The walk still
# passes the key; it is not sent.

SEND_PATH = "/email"
# ErrorCode 100: "Maintenance", the API is down for a while: the one error code worth retrying.
MAINTENANCE = 100
# Option on the provider config: which message stream to send through (Postmark's default: "outbound").
MESSAGE_STREAM_OPTION = "message_stream"
FIELDS = message.JsonFields("From", "To", "Subject", "Cc", "Bcc", "ReplyTo", "TextBody", "HtmlBody", ", ".join)


def payload(request: common_pb2.EmailRequest, options: Mapping[str, str] = api.NO_OPTIONS) -> dict[str, Any]:
    """Postmark's body: addresses as comma-separated `Name <email>` strings (names quoted when
    they hold punctuation, or Postmark answers ErrorCode 300). Postmark takes one `Tag`: the
    first tag goes there and the rest are not sent. Metadata goes to `Metadata`; the
    `message_stream` option to `MessageStream`."""
    message_stream = options.get(MESSAGE_STREAM_OPTION, "")
    body = message.common_fields(request, FIELDS)
    if request.headers:
        body["Headers"] = [{"Name": name, "Value": value} for name, value in sorted(request.headers.items())]
    if request.tags:
        body["Tag"] = request.tags[0]
    if request.metadata:
        body["Metadata"] = dict(sorted(request.metadata.items()))
    if message_stream:
        body["MessageStream"] = message_stream
    return body


def read(response: Answer, server_token: str) -> SendResult:
    """200 with ErrorCode 0 is acceptance (`MessageID`). Postmark explains refusals with an
    ErrorCode: 10 bad or missing token (401), 300 invalid email request, 406 inactive
    recipient, 400/401 sender signature missing or unconfirmed, 405 not allowed to send (all
    422): all permanent. 100 (maintenance), 429 and 5xx are transient."""
    body = json_body(response)
    code, text = error_parts(body)
    described = safe_text(f"ErrorCode {code}: {text}" if code is not None else text, server_token)
    if response.status_code == 200 and not code:
        message_id = str(body.get("MessageID", "")) if isinstance(body, dict) else ""
        return accepted(200, message_id, "" if message_id else "Postmark gave no MessageID")
    if code == MAINTENANCE:
        return transient(safe_text(f"{response.status_code} {described}"), response.status_code)
    if response.status_code == 200:
        return permanent(safe_text(f"200 {described}"), 200)
    return from_status(response, described, server_token)


def _headers(server_token: str, idempotency_key: str) -> dict[str, str]:
    del idempotency_key  # not supported by Postmark; see above
    return server_headers(server_token)


def server_headers(server_token: str) -> dict[str, str]:
    return {"X-Postmark-Server-Token": server_token, "accept": "application/json"}


def account_headers(account_token: str) -> dict[str, str]:
    """The domains and servers API's token (see `herald_email_sender.domains.postmark`)."""
    return {"X-Postmark-Account-Token": account_token, "accept": "application/json"}


def error_parts(body: object) -> tuple[int | None, str]:
    """Postmark's `{"ErrorCode", "Message"}`."""
    if not isinstance(body, dict):
        return None, ""
    code = body.get("ErrorCode")
    return (code if isinstance(code, int) else None), str(body.get("Message") or "")


POSTMARK = api.HttpProvider(DEFAULT_BASE_URL, SEND_PATH, payload, _headers, read)
send = POSTMARK.send
