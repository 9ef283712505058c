"""Custom header values (a target's, a direct webhook's) are sealed wherever they rest: after
targets and webhooks are made with credentials in their headers (each request with an
Idempotency-Key), a pg_dump of the database, every message of this run's JetStream streams (the
work stream, the object store, the KV buckets: read back through the JetStream API, since the
test NATS server is shared by every run and its store directory is not this test's) and the
logs hold none of the values. Read back, every value is masked (and written back masked, keeps
its value); the receiver still gets the real one. A target's headers saved in clear before
are sealed by the master-key rotation. A header value with a control character is refused."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest

from herald.config import nats_servers
from tests.support.api import TenantKey, remember_secret, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Receiver


def post(gateway: str, tenant: TenantKey, path: str, body: dict[str, Any]) -> httpx.Response:
    headers = {**tenant.headers, "idempotency-key": f"sealed-{uuid.uuid4()}"}
    return httpx.post(f"{gateway}{path}", json=body, headers=headers, timeout=30)


async def stream_contents(nats_url: str, prefix: str) -> bytes:
    """Every stored message (headers and data) of every stream this run made."""
    nc = await nats.connect(nats_servers(nats_url))
    found = []
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            name = info.config.name or ""
            if not any(name.startswith(f"{kind}{prefix.upper()}") for kind in ("", "KV_", "OBJ_")):
                continue
            if not info.state.messages:
                continue
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                try:
                    message = await js.get_msg(name, seq)
                except nats.js.errors.NotFoundError:
                    continue  # acknowledged and removed (work queue), or purged
                found.append(message.data or b"")
                found.append(repr(message.headers).encode())
    finally:
        await nc.close()
    return b"\n".join(found)


def test_header_values_rest_only_sealed_and_read_back_masked(
    gateway: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str], work_dir: Path
) -> None:
    first = remember_secret(f"Bearer {secrets.token_hex(16)}")
    patched = remember_secret(f"Bearer {secrets.token_hex(16)}")
    direct = remember_secret(secrets.token_urlsafe(24))
    # Deliveries keep failing for now, so their work messages stay on the bus to be looked at.
    receiver.behaviour.status = 503
    schedule = httpx.put(
        f"{gateway}/v1/webhooks/retry-schedule",
        json={"delays_s": [2] * 19 + [3600]},
        headers=tenant.headers,
        timeout=30,
    )
    assert schedule.status_code == 200, schedule.text

    made = post(
        gateway, tenant, "/v1/webhooks/targets", {"url": f"{receiver.url}/t", "headers": {"Authorization": first}}
    )
    assert made.status_code == 201, made.text
    target = made.json()
    assert target["headers"] == {"Authorization": f"Bearer ****{first[-4:]}"}
    changed = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{target['id']}",
        json={"headers": {"Authorization": patched}},
        headers={**tenant.headers, "idempotency-key": f"sealed-{uuid.uuid4()}"},
        timeout=30,
    )
    assert changed.status_code == 200 and changed.json()["headers"] == {"Authorization": f"Bearer ****{patched[-4:]}"}
    # Written back as read (masked), as the console's edit form does, a value keeps what it was.
    round_trip = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{target['id']}",
        json={"headers": {**changed.json()["headers"], "X-Team": "orders"}},
        headers=tenant.headers,
        timeout=30,
    )
    assert round_trip.status_code == 200 and round_trip.json()["headers"]["X-Team"] == "****"
    event_filter = post(gateway, tenant, "/v1/webhooks/filters", {"event_types": ["sealed.v1"]}).json()
    post(gateway, tenant, "/v1/webhooks/subscriptions", {"target_id": target["id"], "filter_id": event_filter["id"]})
    event = post(gateway, tenant, "/v1/events", {"event_type": "sealed.v1", "payload": {"n": 1}})
    assert event.status_code == 202, event.text
    sent = post(
        gateway,
        tenant,
        "/v1/webhooks",
        {"url": f"{receiver.url}/d", "headers": {"X-Api-Key": direct}, "payload": {"n": 2}},
    )
    assert sent.status_code == 202, sent.text
    job_ids = [event.json()["deliveries"][0]["job_id"], sent.json()["id"]]
    for job_id in job_ids:
        receiver.wait_for(job_id)  # each has been taken from the bus once, and failed

    values = [first, patched, direct]
    credentials = [v.removeprefix("Bearer ") for v in values]
    stored = asyncio.run(stream_contents(infra["nats_url"], infra["bus_prefix"]))
    assert f"****{patched[-4:]}".encode() in stored, "the work messages are on the bus, masked"
    assert not [c[:6] for c in credentials if c.encode() in stored], "a header value is on the bus in clear"
    dump = subprocess.run(
        ["pg_dump", "--data-only", infra["database_url"]], capture_output=True, timeout=120, check=True
    ).stdout
    assert f"****{patched[-4:]}".encode() in dump, "the dump has the masked values"
    assert not [c[:6] for c in credentials if c.encode() in dump], "a header value is in the database in clear"
    logs = sorted(work_dir.rglob("*.log"))
    assert logs
    for log in logs:
        text = log.read_text(errors="replace")
        assert not [c[:6] for c in credentials if c in text], f"{log.name} holds a header value"

    # The receiver gets the real values, opened by the sender right before the call.
    receiver.behaviour.status = 200
    for job_id in job_ids:
        assert wait_for_status(gateway, tenant, job_id, timeout=60)["status"] == "delivered"
    assert any(
        r.headers.get("authorization") == patched and r.headers.get("x-team") == "orders"
        for r in receiver.for_job(job_ids[0])
    )
    assert any(r.headers.get("x-api-key") == direct for r in receiver.for_job(job_ids[1]))


@pytest.mark.parametrize("value", ["a\x07b", "tab\tok\x1b[31m", "del\x7f"])
def test_a_header_value_with_a_control_character_is_refused(gateway: str, tenant: TenantKey, value: str) -> None:
    for path, body in (
        ("/v1/webhooks/targets", {"url": "https://example.com/x", "headers": {"X-Ok": value}}),
        ("/v1/webhooks", {"url": "https://example.com/x", "headers": {"X-Ok": value}, "payload": {}}),
    ):
        refused = httpx.post(f"{gateway}{path}", json=body, headers=tenant.headers, timeout=30)
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert [e["field"] for e in refused.json()["errors"]] == ["headers.X-Ok"]


def test_headers_saved_before_sealing_are_sealed_by_the_master_key_rotation(
    gateway: str, operator_token: str, tenant: TenantKey, infra: dict[str, str]
) -> None:
    value = remember_secret(secrets.token_urlsafe(24))
    made = post(gateway, tenant, "/v1/webhooks/targets", {"url": "https://example.com/old", "headers": {"X-Key": "x"}})
    target_id = made.json()["id"]
    # As a target saved before header values were sealed rests: in clear.
    query(
        infra["database_url"],
        "UPDATE webhook_targets SET headers = jsonb_build_object('X-Key', $2::text), sealed_headers = NULL"
        " WHERE id = $1::uuid",
        target_id,
        value,
    )
    rotated = httpx.post(
        f"{gateway}/admin/v1/master-key/rotate", headers={"authorization": f"Bearer {operator_token}"}, timeout=120
    )
    assert rotated.status_code == 200, rotated.text
    [row] = query(
        infra["database_url"],
        "SELECT headers::text, sealed_headers FROM webhook_targets WHERE id = $1::uuid",
        target_id,
    )
    assert row[1] is not None and value not in row[0] and value.encode() not in bytes(row[1])
    shown = httpx.get(f"{gateway}/v1/webhooks/targets/{target_id}", headers=tenant.headers, timeout=30).json()
    assert shown["headers"] == {"X-Key": f"****{value[-4:]}"}
