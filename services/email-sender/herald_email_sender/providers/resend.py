"""Resend."""

from __future__ import annotations

import httpx

from herald_email_sender.providers.validation import VALID, Validation, from_status, unreachable

DEFAULT_BASE_URL = "https://api.resend.com"


async def validate(client: httpx.AsyncClient, api_key: str, base_url: str) -> Validation:
    """`GET /domains`. A key restricted to sending answers 401 `restricted_api_key`:
    that proves the key is genuine, which is all a sending key needs."""
    try:
        response = await client.get(
            f"{base_url or DEFAULT_BASE_URL}/domains", headers={"authorization": f"Bearer {api_key}"}
        )
    except httpx.HTTPError as error:
        return unreachable(type(error).__name__)
    if response.status_code == 200:
        return VALID
    name = ""
    try:
        body = response.json()
        name = str(body.get("name", "")) if isinstance(body, dict) else ""
    except ValueError:
        pass
    if response.status_code == 401 and name == "restricted_api_key":
        return VALID
    verdict = from_status(response, "Resend")
    if verdict is not None:
        return verdict
    return Validation(False, f"Resend rejected the credential ({response.status_code} {name})".rstrip())
