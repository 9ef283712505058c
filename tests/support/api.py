"""Small helpers for talking to a running stack as a tenant or an operator would."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import httpx

from herald.cli.stack import Stack

TERMINAL = {"delivered", "failed"}

# Every secret value a test created or received: none may appear in a log line or
# in the database in clear (checked by the last test of the run).
CREATED_SECRETS: list[str] = []
# Those created by a request that carried an Idempotency-Key, by kind ("api_key", "signing_secret",
# "provider_key"): the idempotency table must hold none of them either.
KEYED_SECRETS: dict[str, list[str]] = {}


def remember_secret(value: str, keyed: str = "") -> str:
    CREATED_SECRETS.append(value)
    if keyed:
        KEYED_SECRETS.setdefault(keyed, []).append(value)
    return value


@dataclass
class TenantKey:
    tenant_id: str
    api_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"}


def openapi_document(gateway_http: str) -> dict[str, Any]:
    """The gateway's /openapi.json. Generous timeout: the first request builds the document (about half a second
    of CPU), and a full CI run keeps both cores busy (a clean-clone run timed out at httpx's default 5 s)."""
    response = httpx.get(f"{gateway_http}/openapi.json", timeout=60)
    response.raise_for_status()
    document: dict[str, Any] = response.json()
    return document


def create_tenant(gateway_http: str, operator_token: str, name: str, plan: str = "startup") -> TenantKey:
    """A tenant of this name, whether or not one exists already: the stacks of a run share its
    database, and a test's name (the `tenant` fixture's) may recur in another file."""
    response = httpx.post(
        f"{gateway_http}/admin/v1/tenants",
        json={"name": name, "plan": plan, "allow_duplicate_name": True},
        headers={"authorization": f"Bearer {operator_token}"},
        timeout=10,
    )
    response.raise_for_status()
    body = response.json()
    return TenantKey(body["tenant_id"], remember_secret(body["api_key"]))


def unlimited_tenant(gateway_http: str, operator_token: str, name: str, timeout: float = 10) -> TenantKey:
    """A STARTUP tenant without rate limit or monthly quota, so only the faults can refuse it."""
    created = create_tenant(gateway_http, operator_token, name)
    response = httpx.patch(
        f"{gateway_http}/admin/v1/tenants/{created.tenant_id}/limits",
        json={"rate_per_min": "unlimited", "webhooks_per_month": "unlimited"},
        headers={"authorization": f"Bearer {operator_token}"},
        timeout=timeout,
    )
    assert response.status_code == 200, response.text
    return created


def wait_for_status(
    gateway_http: str, tenant: TenantKey, job_id: str, statuses: set[str] = TERMINAL, timeout: float = 30.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        response = httpx.get(f"{gateway_http}/v1/jobs/{job_id}", headers=tenant.headers, timeout=10)
        response.raise_for_status()
        job = response.json()
        if job["status"] in statuses:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {job.get('status')!r} after {timeout}s: {job}")


def wait_for_reason(
    gateway_http: str, tenant: TenantKey, job_ids: list[str], reason: str, timeout: float = 60.0
) -> dict[str, Any] | None:
    """The record of the first of `job_ids` that says it waits for `reason`; None after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for job_id in job_ids:
            job: dict[str, Any] = httpx.get(f"{gateway_http}/v1/jobs/{job_id}", headers=tenant.headers).json()
            if job.get("waiting_reason") == reason:
                return job
        time.sleep(0.2)
    return None


def metric(stack: Stack, service: str, series: str) -> float:
    """One series of a service's /metrics, as an operator's Prometheus reads it (0 when absent)."""
    port = stack.services[service].env["HERALD_METRICS_PORT"]
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    found = re.search(rf"^{re.escape(series)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0
