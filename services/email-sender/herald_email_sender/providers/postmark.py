"""Postmark."""

from __future__ import annotations

from typing import Any

import httpx

from herald.v1 import common_pb2
from herald_email_sender import message
from herald_email_sender.outcome import (
    SEND_TIMEOUT_S,
    SendResult,
    accepted,
    api_root,
    from_http_error,
    from_status,
    json_body,
    permanent,
    safe_text,
    transient,
)
from herald_email_sender.providers import validation
from herald_email_sender.providers.validation import VALID, Validation, unreachable

DEFAULT_BASE_URL = "https://api.postmarkapp.com"


async def validate(client: httpx.AsyncClient, server_token: str, base_url: str) -> Validation:
    """`GET /server` with the server token answers the server's settings, or 401 (ErrorCode 10)."""
    try:
        response = await client.get(
            f"{base_url or DEFAULT_BASE_URL}/server",
            headers={"X-Postmark-Server-Token": server_token, "accept": "application/json"},
        )
    except httpx.HTTPError as error:
        return unreachable(type(error).__name__)
    verdict = validation.from_status(response, "Postmark")
    if verdict is not None:
        return verdict
    if response.status_code == 422:
        return Validation(False, "Postmark rejected the server token")
    return VALID if response.status_code == 200 else Validation(False, f"Postmark answered {response.status_code}")


async def validate_account_token(client: httpx.AsyncClient, account_token: str, base_url: str) -> Validation:
    """`GET /domains?count=1&offset=0` with the account token (the domains API Herald uses it
    for) answers the account's domains, or 401 (ErrorCode 10)."""
    try:
        response = await client.get(
            f"{base_url or DEFAULT_BASE_URL}/domains",
            params={"count": "1", "offset": "0"},
            headers={"X-Postmark-Account-Token": account_token, "accept": "application/json"},
        )
    except httpx.HTTPError as error:
        return unreachable(type(error).__name__)
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


def payload(request: common_pb2.EmailRequest, message_stream: str = "") -> dict[str, Any]:
    """Postmark's body: addresses as comma-separated `Name <email>` strings (names quoted when
    they hold punctuation, or Postmark answers ErrorCode 300). Postmark takes one `Tag`: the
    first tag goes there and the rest are not sent. Metadata goes to `Metadata`."""
    body: dict[str, Any] = {
        "From": message.display(message.sender(request)),
        "To": ", ".join(message.display(a) for a in request.to),
        "Subject": request.subject,
    }
    if request.cc:
        body["Cc"] = ", ".join(message.display(a) for a in request.cc)
    if request.bcc:
        body["Bcc"] = ", ".join(message.display(a) for a in request.bcc)
    if message.has_reply_to(request):
        body["ReplyTo"] = message.display(request.reply_to)
    if request.text:
        body["TextBody"] = request.text
    if request.html:
        body["HtmlBody"] = request.html
    if request.headers:
        body["Headers"] = [{"Name": name, "Value": value} for name, value in sorted(request.headers.items())]
    if request.tags:
        body["Tag"] = request.tags[0]
    if request.metadata:
        body["Metadata"] = dict(sorted(request.metadata.items()))
    if message_stream:
        body["MessageStream"] = message_stream
    return body


async def send(
    client: httpx.AsyncClient,
    server_token: str,
    request: common_pb2.EmailRequest,
    *,
    base_url: str = "",
    idempotency_key: str = "",
    timeout_s: float = SEND_TIMEOUT_S,
    message_stream: str = "",
) -> SendResult:
    """200 with ErrorCode 0 is acceptance (`MessageID`). Postmark explains refusals with an
    ErrorCode: 10 bad or missing token (401), 300 invalid email request, 406 inactive
    recipient, 400/401 sender signature missing or unconfirmed, 405 not allowed to send (all
    422): all permanent. 100 (maintenance), 429 and 5xx are transient."""
    del idempotency_key  # not supported by Postmark; see above
    try:
        response = await client.post(
            f"{api_root(base_url, DEFAULT_BASE_URL)}{SEND_PATH}",
            json=payload(request, message_stream),
            headers={"X-Postmark-Server-Token": server_token, "accept": "application/json"},
            timeout=timeout_s,
        )
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        return from_http_error(error, timeout_s)
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


def error_parts(body: object) -> tuple[int | None, str]:
    """Postmark's `{"ErrorCode", "Message"}`."""
    if not isinstance(body, dict):
        return None, ""
    code = body.get("ErrorCode")
    return (code if isinstance(code, int) else None), str(body.get("Message") or "")
