"""The Python SDK (clients/python, `herald_client`) against a live stack: a webhook sent and read
back delivered; a target, a filter and a subscription created and an event published, its
delivery's signature verified with `herald_webhooks` and the target's own secret (not the
tenant's), that secret rotated and a test ping signed with the new one; a target created with
its own signing key; the async client alike; refusals raised
with their problem details; every POST keyed for idempotency and retried on 429 and 503 as
Retry-After says. And the drift check: the OpenAPI document the SDK was built from
(clients/openapi.json) is the gateway's, and every model field is in it."""

from __future__ import annotations

import base64
import dataclasses
import json
import secrets
import time
from pathlib import Path
from typing import Any

import pytest
from herald_client import (
    AsyncHerald,
    AuthenticationError,
    Herald,
    InvalidRequestError,
    Job,
    RateLimitedError,
    RetryPolicy,
    UnavailableError,
)
from herald_client.models import SCHEMAS
from herald_webhooks import WebhookVerificationError, verify, verify_standard

from tests.support.api import TenantKey, openapi_document, remember_secret
from tests.support.receiver import Receiver

BUILT_FROM = Path(__file__).resolve().parents[1] / "clients" / "openapi.json"
FAST = RetryPolicy(max_retries=2, backoff_s=0.01, max_wait_s=0.05)


def delivered(herald: Herald, job_id: str, timeout: float = 60.0) -> Job:
    deadline = time.monotonic() + timeout
    while (job := herald.jobs.get(job_id)).status != "delivered":
        assert job.status not in ("failed", "cancelled") and time.monotonic() < deadline, job
        time.sleep(0.2)
    return job


def test_send_a_webhook_and_read_it_delivered(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    with Herald(api_key=tenant.api_key, base_url=gateway) as herald:
        job = herald.webhooks.send(url=receiver.url, payload={"hello": "sdk"}, headers={"X-Trace": "t-1"})
        assert job.id and job.status == "queued"
        read = delivered(herald, job.id)
        assert read.attempt_count == 1 and read.attempts[0].status_code == 200
        (arrived,) = receiver.for_job(job.id)
        assert json.loads(arrived.body) == {"hello": "sdk"} and arrived.headers["x-trace"] == "t-1"
        # The caller's own Idempotency-Key: the same job again, not a second one.
        first = herald.webhooks.send(url=receiver.url, payload={"n": 1}, idempotency_key="order-1")
        again = herald.webhooks.send(url=receiver.url, payload={"n": 1}, idempotency_key="order-1")
        assert again.id == first.id
        assert job.id in [j.id for j in herald.jobs.list(limit=50).data]


def test_fan_out_an_event_and_verify_its_signature(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    with Herald(api_key=tenant.api_key, base_url=gateway) as herald:
        tenant_secret = remember_secret(herald.secrets.create().secret)
        assert herald.secrets.get().exists
        target = herald.targets.create(f"{receiver.url}/orders", description="orders service", max_in_flight=4)
        assert target.max_in_flight == 4
        # The target signs with its own secret, read through the SDK; the tenant's signs only direct webhooks.
        secret = remember_secret(herald.targets.secret(target.id).key)
        assert secret.startswith("whsec_") and secret != tenant_secret
        event_filter = herald.filters.create(["orders.*"])
        subscription = herald.subscriptions.create(target.id, event_filter.id)
        assert subscription.active and herald.subscriptions.get(subscription.id).target_id == target.id
        assert target.id in [t.id for t in herald.targets.list().data]

        event = herald.events.publish("orders.created.v1", {"order_id": 42})
        assert not event.replayed and [d.target_id for d in event.deliveries] == [target.id]
        job_id = event.deliveries[0].job_id
        delivered(herald, job_id)
        (arrived,) = receiver.wait_for(job_id)
        assert arrived.path.endswith("/orders") and json.loads(arrived.body) == {"order_id": 42}
        verify(secret, arrived.body, arrived.headers)
        assert verify_standard(secret, arrived.body, arrived.headers).webhook_id == job_id
        for check in (verify, verify_standard):
            with pytest.raises(WebhookVerificationError):
                check(tenant_secret, arrived.body, arrived.headers)

        # Rotated at once (no overlap): the new key is the one read back, and a test ping is signed with it.
        rotated = remember_secret(herald.targets.rotate_secret(target.id, overlap_s=0).key)
        assert rotated != secret and herald.targets.secret(target.id).key == rotated
        ping = herald.targets.test(target.id)
        assert ping.status_code == 200 and ping.error is None
        (pinged,) = receiver.wait_for(ping.ping_id)
        verify_standard(rotated, pinged.body, pinged.headers)
        with pytest.raises(WebhookVerificationError):
            verify_standard(secret, pinged.body, pinged.headers)

        herald.subscriptions.update(subscription.id, active=False)
        assert herald.subscriptions.get(subscription.id).active is False
        herald.subscriptions.delete(subscription.id)
        herald.filters.delete(event_filter.id)
        herald.targets.delete(target.id)


async def test_a_target_created_with_its_own_signing_key(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    own_key = remember_secret("whsec_" + base64.b64encode(secrets.token_bytes(32)).decode())
    async with AsyncHerald(api_key=tenant.api_key, base_url=gateway) as herald:
        target = await herald.targets.create(f"{receiver.url}/own", signing_key=own_key)
        assert (await herald.targets.secret(target.id)).key == own_key
        ping = await herald.targets.test(target.id)
        assert ping.status_code == 200 and ping.ping_id
        (pinged,) = receiver.wait_for(ping.ping_id)
        verify(own_key, pinged.body, pinged.headers)
        rotated = await herald.targets.rotate_secret(target.id)
        assert remember_secret(rotated.key) != own_key
        await herald.targets.delete(target.id)


async def test_the_async_client(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    async with AsyncHerald(api_key=tenant.api_key, base_url=gateway) as herald:
        job = await herald.webhooks.send(url=receiver.url, payload=[1, 2, 3])
        assert receiver.wait_for(job.id)
        assert (await herald.jobs.get(job.id)).id == job.id
        key = await herald.api_keys.create("sdk-async")
        remember_secret(key.api_key)
        assert key.name in [k.name for k in await herald.api_keys.list()]
        await herald.api_keys.revoke(key.id)


def test_refusals_are_exceptions_carrying_the_problem(gateway: str, tenant: TenantKey) -> None:
    with Herald(api_key=tenant.api_key, base_url=gateway) as herald:
        with pytest.raises(InvalidRequestError) as invalid:
            herald.webhooks.send(url="not a url", payload=1)
        assert invalid.value.status == 422 and invalid.value.errors[0]["field"] == "url"
        assert invalid.value.problem["type"].endswith("/invalid-request") or invalid.value.problem["status"] == 422
    with Herald(api_key="hk_live_unknown_0000", base_url=gateway) as stranger, pytest.raises(AuthenticationError):
        stranger.jobs.list()


@pytest.mark.parametrize(("status", "error"), [(429, RateLimitedError), (503, UnavailableError)])
def test_429_and_503_are_retried_with_the_same_idempotency_key(
    receiver: Receiver, status: int, error: type[Exception]
) -> None:
    # A scripted server that always answers `status`: every try arrives, keyed alike.
    receiver.behaviour.status = status
    receiver.behaviour.headers = {"retry-after": "0", "content-type": "application/problem+json"}
    receiver.behaviour.body = json.dumps({"type": "x", "title": "busy", "status": status, "detail": "later"}).encode()
    with Herald(api_key="hk_test", base_url=receiver.url, retry=FAST) as herald, pytest.raises(error) as raised:
        herald.webhooks.send(url="https://example.com/hook", payload={})
    assert raised.value.detail == "later"  # type: ignore[attr-defined]
    keys = [r.headers.get("idempotency-key") for r in receiver.requests]
    assert len(keys) == 1 + FAST.max_retries and len(set(keys)) == 1 and keys[0]
    if isinstance(raised.value, RateLimitedError):
        assert raised.value.retry_after == 0


def _difference(built: Any, served: Any, where: str = "") -> str | None:
    """The first place two JSON documents differ, as a path, or None."""
    if isinstance(built, dict) and isinstance(served, dict):
        for key in sorted(set(built) | set(served)):
            if key not in served:
                return f"{where}/{key}: in the SDK's document, not the gateway's"
            if key not in built:
                return f"{where}/{key}: in the gateway's document, not the SDK's (make clients-openapi)"
            found = _difference(built[key], served[key], f"{where}/{key}")
            if found:
                return found
        return None
    if built != served:
        return f"{where}: {json.dumps(built)[:200]} in the SDK's, {json.dumps(served)[:200]} in the gateway's"
    return None


def test_the_sdk_was_built_from_the_gateways_openapi_document(gateway: str) -> None:
    difference = _difference(json.loads(BUILT_FROM.read_text()), openapi_document(gateway))
    assert difference is None, f"the SDK's OpenAPI document has drifted from the gateway's: {difference}"


def test_every_model_field_is_in_its_schema() -> None:
    schemas = json.loads(BUILT_FROM.read_text())["components"]["schemas"]
    for model, name in SCHEMAS.items():
        schema = schemas[name]
        known = {f.name for f in dataclasses.fields(model)}
        assert known <= set(schema["properties"]), (model.__name__, known - set(schema["properties"]))
        assert set(schema.get("required", [])) <= known, (model.__name__, set(schema["required"]) - known)
