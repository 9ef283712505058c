"""SendGrid (v3 Web API)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import Answer, ReceiverClient
from herald_email_sender import message
from herald_email_sender.outcome import SendResult, accepted, from_status, json_body, retry_after_from_reset
from herald_email_sender.providers import api
from herald_email_sender.providers.validation import VALID, Validation, unreachable

DEFAULT_BASE_URL = "https://api.sendgrid.com"
REQUIRED_SCOPE = "mail.send"


async def validate(client: ReceiverClient, api_key: str, base_url: str) -> Validation:
    """`GET /v3/scopes` lists the key's permissions; a sending key must hold `mail.send`."""
    response = await api.check(client, f"{base_url or DEFAULT_BASE_URL}/v3/scopes", bearer(api_key), "SendGrid")
    if isinstance(response, Validation):
        return response
    if response.status_code != 200:
        return Validation(False, f"SendGrid answered {response.status_code}")
    body = json_body(response)
    if not isinstance(body, dict):
        return unreachable("SendGrid answered with a malformed body")
    scopes = body.get("scopes", [])
    if REQUIRED_SCOPE not in scopes:
        return Validation(False, f"the SendGrid key lacks the {REQUIRED_SCOPE} permission")
    return VALID


# --- sending: POST /v3/mail/send -------------------------------------------------------------
#
# SendGrid has no idempotency key: a retry after a timeout can deliver twice. The walk still
# passes the key; it is not sent (adding it as a custom_arg would change the tenant's payload
# without preventing anything).

SEND_PATH = "/v3/mail/send"


def payload(request: common_pb2.EmailRequest, options: Mapping[str, str] = api.NO_OPTIONS) -> dict[str, Any]:
    """The v3 mail-send body: one personalization with every recipient, text/plain before
    text/html (SendGrid's required order), tags as categories, metadata as custom_args.
    No provider option changes it."""
    personalization: dict[str, Any] = {"to": [_address(a) for a in request.to]}
    if request.cc:
        personalization["cc"] = [_address(a) for a in request.cc]
    if request.bcc:
        personalization["bcc"] = [_address(a) for a in request.bcc]
    body: dict[str, Any] = {
        "personalizations": [personalization],
        "from": _address(message.sender(request)),
        "subject": request.subject,
    }
    if message.has_reply_to(request):
        body["reply_to"] = _address(request.reply_to)
    content = []
    if request.text:
        content.append({"type": "text/plain", "value": request.text})
    if request.html:
        content.append({"type": "text/html", "value": request.html})
    body["content"] = content
    if request.headers:
        body["headers"] = dict(sorted(request.headers.items()))
    if request.tags:
        body["categories"] = list(request.tags)
    if request.metadata:
        body["custom_args"] = dict(sorted(request.metadata.items()))
    return body


def read(response: Answer, api_key: str) -> SendResult:
    """202 is acceptance, with the message id in `X-Message-Id`; 400 (malformed, invalid
    recipient), 401 (bad key), 403 (key lacks mail.send, unverified sender) and 413 are
    permanent; 429 (with X-RateLimit-Reset rather than Retry-After) and 5xx are transient."""
    if 200 <= response.status_code < 300:
        message_id = response.header("x-message-id") or ""
        return accepted(response.status_code, message_id, "" if message_id else "SendGrid gave no X-Message-Id")
    result = from_status(response, error_text(response), api_key)
    if response.status_code == 429 and result.retry_after_s is None:
        result = replace(result, retry_after_s=retry_after_from_reset(response.header("x-ratelimit-reset")))
    return result


def bearer(api_key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {api_key}"}


def _headers(api_key: str, idempotency_key: str) -> dict[str, str]:
    del idempotency_key  # not supported by SendGrid; see above
    return bearer(api_key)


def error_text(response: Answer) -> str:
    """SendGrid's `{"errors": [{"message", "field"}]}`, flattened."""
    body = json_body(response)
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list):
        return ""
    parts = []
    for item in errors:
        if isinstance(item, dict) and item.get("message"):
            field = f" ({item['field']})" if item.get("field") else ""
            parts.append(f"{item['message']}{field}")
    return "; ".join(parts)


SENDGRID = api.HttpProvider(DEFAULT_BASE_URL, SEND_PATH, payload, _headers, read)
send = SENDGRID.send


def _address(address: common_pb2.EmailAddress) -> dict[str, str]:
    return {"email": address.email, "name": address.name} if address.name else {"email": address.email}
