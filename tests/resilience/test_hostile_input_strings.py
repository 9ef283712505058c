"""Hostile input (tests/resilience/README.md): strings and numbers nothing downstream can take,
refused by the gateway with a 4xx problem+json, and a replayed error answered as problem+json too.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest

from tests.resilience.conftest import Resilient, case_id
from tests.resilience.report import REPORT
from tests.support.api import TenantKey

NUL, LONE_SURROGATE = "\\u0000", "\\ud800"  # as JSON escapes


@dataclass(frozen=True)
class Unstorable:
    name: str
    path: str  # {TENANT}: the calling tenant's id
    body: str  # JSON text; {X} is replaced by `char`
    char: str
    operator: bool = False
    method: str = "POST"


UNSTORABLE = [
    Unstorable("tenant name, NUL", "/admin/v1/tenants", '{"name": "a{X}b", "plan": "startup"}', NUL, True),
    Unstorable(
        "tenant name, lone surrogate", "/admin/v1/tenants", '{"name": "a{X}b", "plan": "startup"}', LONE_SURROGATE, True
    ),
    Unstorable("API key name, NUL", "/v1/api-keys", '{"name": "a{X}b"}', NUL),
    Unstorable("suppressed address, NUL", "/v1/suppressions", '{"address": "a{X}b@example.com"}', NUL),
    Unstorable(
        "tenant limit beyond int32",
        "/admin/v1/tenants/{TENANT}/limits",
        '{"webhooks_per_month": {X}}',
        str(2**40),
        operator=True,
        method="PATCH",
    ),
    Unstorable(
        "Postmark key, lone surrogate",
        "/v1/providers",
        '{"provider": "postmark", "api_key": "pm-{X}", "base_url": "http://127.0.0.1:9"}',
        LONE_SURROGATE,
    ),
    Unstorable(
        "webhook header value, NUL",
        "/v1/webhooks",
        '{"url": "http://127.0.0.1:9/x", "payload": 1, "headers": {"X-A": "a{X}b"}}',
        NUL,
    ),
    Unstorable(
        "Postmark key, non-ASCII",
        "/v1/providers",
        '{"provider": "postmark", "api_key": "pm-{X}", "base_url": "http://127.0.0.1:9"}',
        "\\u20ac",
    ),
    Unstorable(
        "tenant limit just past int32",
        "/admin/v1/tenants/{TENANT}/limits",
        '{"rate_per_min": {X}}',
        str(2**31),
        operator=True,
        method="PATCH",
    ),
    Unstorable(
        "webhook ordering key, NUL",
        "/v1/webhooks",
        '{"url": "http://127.0.0.1:9/x", "payload": 1, "ordering_key": "a{X}b"}',
        NUL,
    ),
    Unstorable(
        "email tag, NUL",
        "/v1/emails",
        '{"from": "a@acme.example", "to": ["b@example.com"], "subject": "s", "text": "t", "tags": ["a{X}b"]}',
        NUL,
    ),
    Unstorable(
        "Postmark account token, non-ASCII",
        "/v1/domains",
        '{"domain": "mail.acme.example", "provider_id": "x", "account_token": "t-{X}"}',
        "\\u00e9",
    ),
    Unstorable(
        "webhook payload, integer beyond 64 bits",
        "/v1/webhooks",
        '{"url": "http://127.0.0.1:9/x", "payload": {"n": {X}}}',
        str(-(2**64)),
    ),
    Unstorable(
        "event payload, integer beyond 64 bits", "/v1/events", '{"event_type": "a.b", "payload": {X}}', str(2**64)
    ),
    Unstorable(
        "email subject, NUL",
        "/v1/emails",
        '{"from": "a@acme.example", "to": ["b@example.com"], "subject": "a{X}b", "text": "t"}',
        NUL,
    ),
]


@pytest.mark.parametrize("case", UNSTORABLE, ids=[case_id(c) for c in UNSTORABLE])
def test_strings_nothing_downstream_can_take_are_refused(
    resilient: Resilient, attacker: TenantKey, case: Unstorable
) -> None:
    """NUL (PostgreSQL refuses it in text) and lone surrogates (not UTF-8) are valid JSON escapes: the
    gateway must refuse them (4xx), not pass them on to fail downstream (5xx)."""
    headers = resilient.operator_headers if case.operator else attacker.headers
    response = httpx.request(
        case.method,
        f"{resilient.gateway}{case.path.replace('{TENANT}', attacker.tenant_id)}",
        content=case.body.replace("{X}", case.char).encode(),
        headers={**headers, "content-type": "application/json"},
        timeout=30,
    )
    REPORT.add("hostile input: strings nothing downstream can take", f"{case.name:<32} -> {response.status_code}")
    assert 400 <= response.status_code < 500, response.text[:300]
    assert response.headers["content-type"].startswith("application/problem+json"), response.text[:300]


def test_a_replayed_error_is_problem_json_too(resilient: Resilient, attacker: TenantKey) -> None:
    """An Idempotency-Key replays the first answer, errors included: with the same media type.
    (A route that creates a job writes its key with the job, so there a refused request leaves
    no key behind and a repeat is refused afresh; this is a route that stores its answer.)"""
    headers = {**attacker.headers, "idempotency-key": f"replayed-error-{resilient.run_id}"}
    body = {"url": "ftp://receiver.example/hook"}  # not http(s): 422
    first, again = (
        httpx.post(f"{resilient.gateway}/v1/webhooks/targets", json=body, headers=headers, timeout=30) for _ in range(2)
    )
    assert (first.status_code, again.status_code) == (422, 422)
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.headers["content-type"].startswith("application/problem+json")
