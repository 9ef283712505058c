"""SendGrid (v3 Web API)."""

from __future__ import annotations

from dataclasses import replace
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
    retry_after_from_reset,
)
from herald_email_sender.providers import validation
from herald_email_sender.providers.validation import VALID, Validation, unreachable

DEFAULT_BASE_URL = "https://api.sendgrid.com"
REQUIRED_SCOPE = "mail.send"


async def validate(client: httpx.AsyncClient, api_key: str, base_url: str) -> Validation:
    """`GET /v3/scopes` lists the key's permissions; a sending key must hold `mail.send`."""
    try:
        response = await client.get(
            f"{base_url or DEFAULT_BASE_URL}/v3/scopes", headers={"authorization": f"Bearer {api_key}"}
        )
    except httpx.HTTPError as error:
        return unreachable(type(error).__name__)
    verdict = validation.from_status(response, "SendGrid")
    if verdict is not None:
        return verdict
    if response.status_code != 200:
        return Validation(False, f"SendGrid answered {response.status_code}")
    try:
        scopes = response.json().get("scopes", [])
    except ValueError:
        return unreachable("SendGrid answered with a malformed body")
    if REQUIRED_SCOPE not in scopes:
        return Validation(False, f"the SendGrid key lacks the {REQUIRED_SCOPE} permission")
    return VALID


# --- sending: POST /v3/mail/send -------------------------------------------------------------
#
# SendGrid has no idempotency key: a retry after a timeout can deliver twice. The walk still
# passes the key; it is not sent (adding it as a custom_arg would change the tenant's payload
# without preventing anything).

SEND_PATH = "/v3/mail/send"


def payload(request: common_pb2.EmailRequest) -> dict[str, Any]:
    """The v3 mail-send body: one personalization with every recipient, text/plain before
    text/html (SendGrid's required order), tags as categories, metadata as custom_args."""
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


async def send(
    client: httpx.AsyncClient,
    api_key: str,
    request: common_pb2.EmailRequest,
    *,
    base_url: str = "",
    idempotency_key: str = "",
    timeout_s: float = SEND_TIMEOUT_S,
) -> SendResult:
    """202 is acceptance, with the message id in `X-Message-Id`; 400 (malformed, invalid
    recipient), 401 (bad key), 403 (key lacks mail.send, unverified sender) and 413 are
    permanent; 429 (with X-RateLimit-Reset rather than Retry-After) and 5xx are transient."""
    del idempotency_key  # not supported by SendGrid; see above
    try:
        response = await client.post(
            f"{api_root(base_url, DEFAULT_BASE_URL)}{SEND_PATH}",
            json=payload(request),
            headers={"authorization": f"Bearer {api_key}"},
            timeout=timeout_s,
        )
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        return from_http_error(error, timeout_s)
    if 200 <= response.status_code < 300:
        message_id = response.headers.get("x-message-id", "")
        return accepted(response.status_code, message_id, "" if message_id else "SendGrid gave no X-Message-Id")
    result = from_status(response, error_text(response), api_key)
    if response.status_code == 429 and result.retry_after_s is None:
        result = replace(result, retry_after_s=retry_after_from_reset(response.headers.get("x-ratelimit-reset")))
    return result


def error_text(response: httpx.Response) -> str:
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


def _address(address: common_pb2.EmailAddress) -> dict[str, str]:
    return {"email": address.email, "name": address.name} if address.name else {"email": address.email}
