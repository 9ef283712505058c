"""SendGrid (v3 Web API)."""

from __future__ import annotations

import httpx

from herald_email_sender.providers.validation import VALID, Validation, from_status, unreachable

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
    verdict = from_status(response, "SendGrid")
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
