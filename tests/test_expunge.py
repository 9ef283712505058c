"""Expunge on demand: DELETE /v1/jobs/{id}/payload and DELETE /v1/events/{id}/payload (and their
gRPC twins) take the payload out of the API and out of the database: the job's body and request
headers, its attempts' response headers and excerpts, an event's payload and its deliveries'. The
job still answers with its status and its attempts' outcomes and says when its payload went; it
can no longer be retried, resent or replayed. The change is in the audit log."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Receiver
from tests.support.subscriptions import publish, settle, subscribe
from tests.test_key_scopes import scoped_key

SECRET_BODY = b'{"card": "4242-secret-payload"}'


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[gateway_pb2_grpc.NotificationServiceStub]:
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        yield gateway_pb2_grpc.NotificationServiceStub(channel)


def delivered_webhook(gateway: str, tenant: TenantKey, receiver: Receiver, **extra: str) -> str:
    response = httpx.post(
        f"{gateway}/v1/webhooks",
        json={"url": receiver.url, "payload_base64": _b64(SECRET_BODY), "headers": {"x-order": "o-77"}},
        headers={**tenant.headers, **extra},
    )
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"
    return job_id


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def stored_payload(infra: dict[str, str], job_id: str) -> tuple[bytes, str, int]:
    """The job's body and request as stored, and how many of its attempts still hold an excerpt."""
    [row] = query(infra["database_url"], "SELECT body, request::text FROM jobs WHERE id = $1", job_id)
    [kept] = query(
        infra["database_url"],
        "SELECT count(*) FROM attempts WHERE job_id = $1 "
        "AND (response_excerpt IS NOT NULL OR response_headers IS NOT NULL)",
        job_id,
    )
    return bytes(row[0]), row[1], int(kept[0])


def test_an_expunged_jobs_payload_is_gone_from_the_api_and_the_database(
    gateway: str,
    operator_token: str,
    tenant: TenantKey,
    receiver: Receiver,
    infra: dict[str, str],
    api: gateway_pb2_grpc.NotificationServiceStub,
) -> None:
    job_id = delivered_webhook(gateway, tenant, receiver, **{"Idempotency-Key": "expunge-me-1"})
    body, request, _ = stored_payload(infra, job_id)
    assert body == SECRET_BODY and "x-order" in request

    # A key that only sends may not take a payload out; another tenant finds no such job.
    sender = scoped_key(gateway, tenant, "send")
    refused = httpx.delete(f"{gateway}/v1/jobs/{job_id}/payload", headers=sender.headers)
    assert refused.status_code == 403 and refused.json()["missing_scope"] == "manage"
    other = create_tenant(gateway, operator_token, "expunge-other")
    assert httpx.delete(f"{gateway}/v1/jobs/{job_id}/payload", headers=other.headers).status_code == 404
    assert httpx.delete(f"{gateway}/v1/jobs/not-a-job/payload", headers=tenant.headers).status_code == 404

    gone = httpx.delete(f"{gateway}/v1/jobs/{job_id}/payload", headers=tenant.headers)
    assert gone.status_code == 204, gone.text
    # Again: nothing left to take, still 204.
    assert httpx.delete(f"{gateway}/v1/jobs/{job_id}/payload", headers=tenant.headers).status_code == 204

    job = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers).json()
    assert job["status"] == "delivered" and job["payload_expunged_at"] is not None
    assert job["url"] == receiver.url
    assert [a["outcome"] for a in job["attempts"]] == ["succeeded"]
    assert job["attempts"][0]["status_code"] == 200
    assert job["attempts"][0]["response_excerpt"] is None and job["attempts"][0]["response_headers"] is None
    body, request, excerpts = stored_payload(infra, job_id)
    assert body == b"" and "x-order" not in request and "o-77" not in request and excerpts == 0
    assert SECRET_BODY not in b"".join(
        bytes(r[0] or b"")
        for r in query(infra["database_url"], "SELECT body FROM idempotency_keys WHERE job_id = $1", job_id)
    )

    # A job without its payload cannot run again.
    assert httpx.post(f"{gateway}/v1/jobs/{job_id}/resend", headers=tenant.headers).status_code == 409

    # The audit log says who took it.
    entries = httpx.get(f"{gateway}/v1/audit-log", headers=tenant.headers).json()["data"]
    assert any(e["action"] == "DELETE /v1/jobs/{job_id}/payload" and e["resource_id"] == job_id for e in entries)

    # gRPC: the same, and GetJob says so too.
    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    second = delivered_webhook(gateway, tenant, receiver)
    api.ExpungeJobPayload(gateway_pb2.NotificationServiceExpungeJobPayloadRequest(id=second), metadata=metadata)
    answer = api.GetJob(gateway_pb2.NotificationServiceGetJobRequest(id=second), metadata=metadata, timeout=10)
    assert answer.job.HasField("payload_expunged_at") and answer.job.webhook.body == b""
    assert [a.status_code for a in answer.attempts] == [200] and answer.attempts[0].response_excerpt == ""
    assert stored_payload(infra, second)[0] == b""
    with pytest.raises(grpc.RpcError) as missing:
        api.ExpungeJobPayload(
            gateway_pb2.NotificationServiceExpungeJobPayloadRequest(id=second),
            metadata=(("authorization", f"Bearer {other.api_key}"),),
        )
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]
    entries = httpx.get(f"{gateway}/v1/audit-log", headers=tenant.headers).json()["data"]
    assert any("ExpungeJobPayload" in e["action"] and e["resource_id"] == second for e in entries)


def test_an_expunged_events_payload_and_its_deliveries_are_gone(
    gateway: str,
    tenant: TenantKey,
    receiver: Receiver,
    infra: dict[str, str],
    api: gateway_pb2_grpc.NotificationServiceStub,
) -> None:
    subscribe(gateway, tenant, receiver.url, ["expunge.*"])
    [delivery] = publish(gateway, tenant, "expunge.v1", payload={"secret": "s-1"}, event_id="exp-1")["deliveries"]
    publish(gateway, tenant, "expunge.v1", payload={"secret": "s-2"}, event_id="exp-2")
    settle(gateway, tenant)

    assert httpx.delete(f"{gateway}/v1/events/no-such-event/payload", headers=tenant.headers).status_code == 404
    gone = httpx.delete(f"{gateway}/v1/events/exp-1/payload", headers=tenant.headers)
    assert gone.status_code == 204, gone.text
    event = httpx.get(f"{gateway}/v1/events/exp-1", headers=tenant.headers).json()
    assert event["payload"] is None and event["payload_base64"] is None
    assert event["payload_expunged_at"] is not None
    assert [d["status"] for d in event["deliveries"]] == ["delivered"]
    job = httpx.get(f"{gateway}/v1/jobs/{delivery['job_id']}", headers=tenant.headers).json()
    assert job["status"] == "delivered" and job["payload_expunged_at"] is not None
    [stored] = query(
        infra["database_url"],
        "SELECT payload FROM events WHERE tenant_id = $1 AND event_id = 'exp-1'",
        tenant.tenant_id,
    )
    assert stored[0] is None and stored_payload(infra, delivery["job_id"])[0] == b""
    # A replay needs the payload.
    replay = httpx.post(f"{gateway}/v1/events/exp-1/replay", json={}, headers=tenant.headers)
    assert replay.status_code == 409, replay.text

    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    api.ExpungeEventPayload(gateway_pb2.NotificationServiceExpungeEventPayloadRequest(id="exp-2"), metadata=metadata)
    answer = api.GetEvent(gateway_pb2.NotificationServiceGetEventRequest(id="exp-2"), metadata=metadata)
    assert answer.event.HasField("payload_expunged_at") and answer.event.payload == b""
    rows = query(
        infra["database_url"],
        "SELECT count(*) FROM events WHERE tenant_id = $1 AND payload IS NOT NULL",
        tenant.tenant_id,
    )
    assert rows[0][0] == 0
