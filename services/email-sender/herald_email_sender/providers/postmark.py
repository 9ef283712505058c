"""Postmark."""

from __future__ import annotations

import httpx

from herald_email_sender.providers.validation import VALID, Validation, from_status, unreachable

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
    verdict = from_status(response, "Postmark")
    if verdict is not None:
        return verdict
    if response.status_code == 422:
        return Validation(False, "Postmark rejected the server token")
    return VALID if response.status_code == 200 else Validation(False, f"Postmark answered {response.status_code}")
