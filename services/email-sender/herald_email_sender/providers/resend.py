"""Resend."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import Answer, ReceiverClient
from herald_email_sender import message
from herald_email_sender.outcome import SendResult, accepted, from_status, json_body, permanent, safe_text, transient
from herald_email_sender.providers import api, validation
from herald_email_sender.providers.validation import VALID, Validation

DEFAULT_BASE_URL = "https://api.resend.com"


async def validate(client: ReceiverClient, api_key: str, base_url: str) -> Validation:
    """`GET /domains`. A key restricted to sending answers 401 `restricted_api_key`:
    that proves the key is genuine, which is all a sending key needs."""
    response = await api.check(client, f"{base_url or DEFAULT_BASE_URL}/domains", bearer(api_key))
    if isinstance(response, Validation):
        return response
    if response.status_code == 200:
        return VALID
    name, _text = error_parts(json_body(response))
    if response.status_code == 401 and name == "restricted_api_key":
        return VALID
    verdict = validation.from_status(response, "Resend")
    if verdict is not None:
        return verdict
    return Validation(False, f"Resend rejected the credential ({response.status_code} {name})".rstrip())


# --- sending: POST /emails -------------------------------------------------------------------
#
# Resend honours `Idempotency-Key` (1-256 characters, kept 24 hours): the same key with the
# same body answers the first send's id without sending again, so a retry after a timeout
# cannot duplicate. The same key with another body is 409 invalid_idempotent_request
# (permanent); while the first request is still running, 409 concurrent_idempotent_requests
# (transient).

SEND_PATH = "/emails"
MAX_IDEMPOTENCY_KEY_CHARS = 256
TRANSIENT_CONFLICT = "concurrent_idempotent_requests"
FIELDS = message.JsonFields("from", "to", "subject", "cc", "bcc", "reply_to", "text", "html", list)


def payload(request: common_pb2.EmailRequest, options: Mapping[str, str] = api.NO_OPTIONS) -> dict[str, Any]:
    """Resend's body. Tags and metadata both become Resend tags ({name, value}); a plain tag
    is a tag named after it with the value "true", since Resend tags are pairs and its
    events report them as a name -> value object (so names must be distinct). No provider
    option changes it."""
    body = message.common_fields(request, FIELDS)
    if request.headers:
        body["headers"] = dict(sorted(request.headers.items()))
    tags = [{"name": tag, "value": "true"} for tag in request.tags]
    tags += [{"name": name, "value": value} for name, value in sorted(request.metadata.items())]
    if tags:
        body["tags"] = tags
    return body


def _headers(api_key: str, idempotency_key: str) -> dict[str, str] | SendResult:
    if len(idempotency_key) > MAX_IDEMPOTENCY_KEY_CHARS:
        return permanent(f"the idempotency key is longer than Resend's {MAX_IDEMPOTENCY_KEY_CHARS} characters")
    headers = bearer(api_key)
    if idempotency_key:
        headers["idempotency-key"] = idempotency_key
    return headers


def read(response: Answer, api_key: str) -> SendResult:
    """200 `{id}` is acceptance. 400/401/403/404/422 are permanent (validation_error,
    missing or invalid key, unverified domain or recipient, missing fields); 429
    (rate_limit_exceeded, daily_quota_exceeded) and 5xx are transient; 409 depends on its name."""
    body = json_body(response)
    if 200 <= response.status_code < 300:
        message_id = str(body.get("id", "")) if isinstance(body, dict) else ""
        return accepted(response.status_code, message_id, "" if message_id else "Resend gave no email id")
    name, text = error_parts(body)
    if response.status_code == 409 and name == TRANSIENT_CONFLICT:
        return transient(safe_text(f"409 {name}: {text}", api_key), 409)
    return from_status(response, f"{name}: {text}" if name else text, api_key)


def bearer(api_key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {api_key}"}


def error_parts(body: object) -> tuple[str, str]:
    """Resend's `{"statusCode", "name", "message"}`."""
    if not isinstance(body, dict):
        return "", ""
    return str(body.get("name") or ""), str(body.get("message") or "")


RESEND = api.HttpProvider(DEFAULT_BASE_URL, SEND_PATH, payload, _headers, read)
send = RESEND.send
