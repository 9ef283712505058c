"""Helpers for the inbound provider webhook tests: a tenant's receiver configuration, a Resend-style secret,
and what the ledger stored of a tenant's inbound events."""

from __future__ import annotations

import base64
import secrets
import uuid
from typing import Any

import httpx

from tests.support.api import TenantKey, remember_secret
from tests.support.infra import query


def new_resend_secret() -> str:
    return remember_secret("whsec_" + base64.b64encode(secrets.token_bytes(24)).decode())


def stored_events(database_url: str, tenant: TenantKey) -> int:
    rows = query(
        database_url, "SELECT count(*) AS n FROM inbound_events WHERE tenant_id = $1", uuid.UUID(tenant.tenant_id)
    )
    return int(rows[0]["n"])


def put(gateway: str, tenant: TenantKey, provider: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.put(f"{gateway}/v1/inbound/{provider}", json=body, headers=tenant.headers, timeout=10)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer
