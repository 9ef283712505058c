"""Driving Herald's email surface against the provider stand-ins: register a provider,
send an email, read attempts and rows back."""

from __future__ import annotations

import time
from typing import Any

import httpx

from tests.standins.postmark import PostmarkStandIn
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, remember_secret
from tests.support.infra import query

StandIn = SendGridStandIn | ResendStandIn | PostmarkStandIn
_serial = iter(range(10**9))


def add_provider(gateway: str, tenant: TenantKey, stand_in: StandIn, priority: int) -> str:
    """Registers the stand-in as one of the tenant's providers (with a fresh key it
    accepts); returns the provider id."""
    n = next(_serial)
    if isinstance(stand_in, SendGridStandIn):
        kind, key = "sendgrid", stand_in.add_key(f"SG.email-test-{n:06d}-aBcDeFgHiJ.kLmNoPqRsT{n:06d}")
    elif isinstance(stand_in, ResendStandIn):
        kind, key = "resend", stand_in.add_key(f"re_EmailTest_{n:06d}_abcdefghijkl")
    else:
        kind, key = "postmark", f"pm-email-test-{n:06d}-0b5d6c1e-7f3a-4e29"
        stand_in.add_token(key)
    remember_secret(key)
    response = httpx.post(
        f"{gateway}/v1/providers",
        json={"provider": kind, "api_key": key, "priority": priority, "base_url": stand_in.base_url},
        headers=tenant.headers,
        timeout=30,
    )
    assert response.status_code == 201, response.text
    provider_id: str = response.json()["id"]
    return provider_id


def email(to: str = "ada@example.com", sender: str = "Acme <hello@acme.example>", **extra: Any) -> dict[str, Any]:
    return {"from": sender, "to": [to], "subject": "Your receipt", "text": "Thanks!", **extra}


def send(gateway: str, tenant: TenantKey, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{gateway}/v1/emails", json=body, headers={**tenant.headers, **headers}, timeout=30)


def sent_id(response: httpx.Response) -> str:
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


def attempts_of(job: dict[str, Any]) -> list[tuple[str | None, str, int | None]]:
    """(provider id, outcome, walk) per attempt row, in order."""
    return [(a["provider_id"], a["outcome"], a["walk"]) for a in job["attempts"]]


def job_rows(database_url: str, tenant: TenantKey) -> int:
    return int(query(database_url, "SELECT count(*) FROM jobs WHERE tenant_id = $1::uuid", tenant.tenant_id)[0][0])


def wait_until(condition: Any, timeout: float = 15.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
