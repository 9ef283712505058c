"""The submit routes' lean path (herald_gateway.http.lean) answers exactly as FastAPI's own
routing of the same declarations does: for each malformed, unauthenticated or refused request,
the same status, headers that matter and problem+json body; for an accepted one, the same
shape. Both apps run in the test over the session stack's real router and ledger."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator
from herald_gateway.http.app import create_app
from herald_gateway.http.lean import LeanSubmitRoutes
from herald_gateway.idempotency import Idempotency
from herald_gateway.operations import Operations
from herald_gateway.rate_limit import RateLimiter

from herald.cli.stack import Stack
from herald.grpcio.client import open_channel
from herald.grpcio.ledger import Ledger
from herald.v1 import email_sender_pb2_grpc, router_pb2_grpc
from tests.support.api import TenantKey, create_tenant
from tests.support.receiver import Receiver

Apps = tuple[httpx.AsyncClient, httpx.AsyncClient]


@pytest.fixture
async def apps(stack: Stack) -> AsyncIterator[Apps]:
    """The gateway app as served (lean submit routes), and the same app routed by FastAPI alone."""
    channels = [open_channel(stack.services[name].grpc_addr) for name in ("ledger", "router", "email-sender")]
    ledger = Ledger.over(channels[0])
    handlers = Operations(
        ledger,
        router_pb2_grpc.RouterServiceStub(channels[1]),
        email_sender_pb2_grpc.EmailSenderServiceStub(channels[2]),
    )

    def app(lean: bool) -> Any:
        made = create_app(
            handlers,
            ApiKeyAuthenticator(ledger, 300),
            OperatorAuthenticator(ledger),
            RateLimiter(False),
            Idempotency(ledger),
        )
        if not lean:
            made.user_middleware = [m for m in made.user_middleware if m.cls is not LeanSubmitRoutes]  # type: ignore[comparison-overlap]
        return made

    clients = tuple(
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app(lean)), base_url="http://gateway")
        for lean in (True, False)
    )
    yield clients  # type: ignore[misc]
    for client in clients:
        await client.aclose()
    for channel in channels:
        await channel.close()


@pytest.fixture
def unlimited_tenant(gateway: str, operator_token: str) -> TenantKey:
    # Unlimited: these apps have no rate-limit store, and the limiter is not what is compared here.
    tenant = create_tenant(gateway, operator_token, "lean-routes")
    response = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json={"rate_per_min": "unlimited"},
        headers={"authorization": f"Bearer {operator_token}"},
    )
    assert response.status_code == 200, response.text
    return tenant


def cases(receiver_url: str) -> list[tuple[str, str, dict[str, str], bytes]]:
    """(name, path, headers beyond the API key, body) of requests that create nothing."""
    as_json = {"content-type": "application/json"}
    hook = {"url": receiver_url, "payload": {"n": 1}}

    def body(value: Any) -> bytes:
        return json.dumps(value).encode()

    return [
        ("not JSON", "/v1/webhooks", as_json, b'{"url": '),
        ("nested too deep", "/v1/webhooks", as_json, b"[" * 100_000 + b"]" * 100_000),
        ("not UTF-8", "/v1/webhooks", as_json, b'{"url": "\xff"}'),
        ("no body", "/v1/webhooks", as_json, b""),
        ("no content type", "/v1/webhooks", {}, body(hook)),
        ("text/plain", "/v1/webhooks", {"content-type": "text/plain"}, body(hook)),
        ("a list", "/v1/webhooks", as_json, b"[1, 2]"),
        ("a string", "/v1/webhooks", as_json, b'"hello"'),
        ("unknown field", "/v1/webhooks", as_json, body({**hook, "colour": "red"})),
        ("NUL in the URL", "/v1/webhooks", as_json, body({**hook, "url": "http://a\u0000b/"})),
        ("both payloads", "/v1/webhooks", as_json, body({**hook, "payload_base64": "aGk="})),
        ("bad base64", "/v1/webhooks", as_json, body({"url": receiver_url, "payload_base64": "!!"})),
        (
            "integer beyond 64 bits",
            "/v1/webhooks",
            as_json,
            b'{"url": "%s", "payload": %d}' % (receiver_url.encode(), 2**70),
        ),
        ("relative URL", "/v1/webhooks", as_json, body({**hook, "url": "/hook"})),
        ("bad priority", "/v1/webhooks", as_json, body({**hook, "priority": "urgent"})),
        ("reserved header", "/v1/webhooks", as_json, body({**hook, "headers": {"Webhook-Id": "x"}})),
        ("key too long", "/v1/webhooks", {**as_json, "idempotency-key": "k" * 300}, body(hook)),
        ("charset", "/v1/webhooks", {"content-type": "application/json; charset=utf-8"}, b"{"),
        ("+json", "/v1/webhooks", {"content-type": "application/problem+json"}, body({"url": 1})),
        ("email without to", "/v1/emails", as_json, body({"from": "a@example.com", "subject": "s", "text": "t"})),
        (
            "email bad address",
            "/v1/emails",
            as_json,
            body({"from": "nope", "to": ["b@example.com"], "subject": "s", "text": "t"}),
        ),
        (
            "email no text",
            "/v1/emails",
            as_json,
            body({"from": "a@example.com", "to": ["b@example.com"], "subject": "s"}),
        ),
        ("event without type", "/v1/events", as_json, body({"payload": {}})),
        (
            "event bad base64",
            "/v1/events",
            as_json,
            body({"event_type": "orders.created.v1", "payload_base64": base64.b64encode(b"x").decode() + "!"}),
        ),
        ("batch not JSON", "/v1/webhooks/batch", as_json, b"{"),
        ("batch empty", "/v1/webhooks/batch", as_json, body({"items": []})),
        ("batch with a key header", "/v1/emails/batch", {**as_json, "idempotency-key": "k1"}, body({"items": [{}]})),
        ("batch extra field", "/v1/webhooks/batch", as_json, body({"items": [hook], "more": 1})),
    ]


def seen(response: httpx.Response) -> tuple[int, str | None, str | None, Any]:
    kept = response.json() if response.content else None
    return response.status_code, response.headers.get("content-type"), response.headers.get("retry-after"), kept


async def test_refusals_are_the_same_as_fastapis(apps: Apps, unlimited_tenant: TenantKey, receiver: Receiver) -> None:
    lean, routed = apps
    for name, path, headers, body in cases(receiver.url):
        for auth in ({}, {"authorization": "Bearer hk_live_nope"}, unlimited_tenant.headers):
            sent = {**headers, **auth}
            expected = seen(await routed.post(path, content=body, headers=sent))
            assert expected[0] >= 400, (name, expected)
            assert seen(await lean.post(path, content=body, headers=sent)) == expected, (name, auth.keys())


async def test_accepted_requests_have_the_same_shape(
    apps: Apps, unlimited_tenant: TenantKey, receiver: Receiver
) -> None:
    hook = {"url": receiver.url, "payload": {"n": 1}}
    email = {"from": "Ann <a@example.com>", "to": ["b@example.com"], "subject": "s", "text": "t"}
    requests: list[tuple[str, Any]] = [
        ("/v1/webhooks", hook),
        ("/v1/emails", email),
        ("/v1/events", {"event_type": "orders.created.v1", "payload": {"n": 1}}),
        ("/v1/webhooks/batch", {"items": [hook, {"url": "/relative", "payload": 1}]}),
    ]
    for path, body in requests:
        answers = [await client.post(path, json=body, headers=unlimited_tenant.headers) for client in apps]
        assert answers[0].status_code == answers[1].status_code, (path, [a.text for a in answers])
        assert answers[0].status_code in (200, 202), answers[0].text
        assert answers[0].headers["content-type"] == answers[1].headers["content-type"]
        assert ("location" in answers[0].headers) == ("location" in answers[1].headers)
        shapes = [shape(a.json()) for a in answers]
        assert shapes[0] == shapes[1], path


def shape(value: Any) -> Any:
    """The value with ids and other per-job strings blanked: what must match between two accepts."""
    if isinstance(value, dict):
        return {k: shape(v) if k not in ("id", "job_id", "event_id") else "" for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return value
