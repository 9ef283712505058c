"""A payload of several MB arrives byte-identical: it travels beside the work message
in the JetStream object store (claim check), which is emptied once the job has ended."""

from __future__ import annotations

import asyncio
import base64
import os

import httpx
import nats

from herald.config import nats_servers
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver


def stored_objects(nats_url: str, bucket: str) -> int:
    async def count() -> int:
        nc = await nats.connect(nats_servers(nats_url))
        try:
            store = await nc.jetstream().object_store(bucket)
            try:
                listed = await store.list()
            except Exception as error:  # nats-py raises when the store holds no object
                if "no objects" in str(error).lower() or type(error).__name__ == "NotFoundError":
                    return 0
                raise
            return len([o for o in listed if not o.deleted])
        finally:
            await nc.close()

    return asyncio.run(count())


def test_a_five_megabyte_payload_arrives_byte_identical(
    gateway: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    raw = os.urandom(5 * 1024 * 1024)
    body = {"url": receiver.url, "payload_base64": base64.b64encode(raw).decode(), "content_type": "application/zip"}
    sent = httpx.post(f"{gateway}/v1/webhooks", json=body, headers=tenant.headers, timeout=60)
    assert sent.status_code == 202, sent.text
    job = wait_for_status(gateway, tenant, sent.json()["id"], timeout=60)
    assert job["status"] == "delivered"
    [received] = receiver.for_job(job["id"])
    assert received.body == raw
    assert received.headers["content-type"] == "application/zip"
    assert stored_objects(infra["nats_url"], f"{infra['bus_prefix']}_PAYLOADS".upper()) == 0, "removed after delivery"
