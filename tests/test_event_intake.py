"""Internal backends publish events straight to NATS, with JetStream acks: the router
fans them out exactly as POST /v1/events does."""

from __future__ import annotations

import asyncio
import json

import nats

from herald.v1 import router_pb2
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import subscribe


def publish(nats_url: str, subject: str, data: bytes, headers: dict[str, str] | None = None) -> int:
    async def send() -> int:
        nc = await nats.connect(nats_url)
        try:
            ack = await nc.jetstream().publish(subject, data, headers=headers, timeout=5)
            return int(ack.seq)
        finally:
            await nc.close()

    return asyncio.run(send())


def test_events_published_on_nats_are_fanned_out(
    gateway: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    subscribe(gateway, tenant, receiver.url, ["invoices.paid.v1"])
    subject = f"{infra['bus_prefix']}.intake.events.{tenant.tenant_id}"

    as_protobuf = router_pb2.PublishEventRequest(
        event_type="invoices.paid.v1", event_id="inv-1", payload=b'{"invoice":1}', content_type="application/json"
    )
    assert publish(infra["nats_url"], subject, as_protobuf.SerializeToString()) > 0
    as_json = {"event_type": "invoices.paid.v1", "event_id": "inv-2", "payload": {"invoice": 2}}
    publish(infra["nats_url"], subject, json.dumps(as_json).encode(), {"Content-Type": "application/json"})
    # The same event id again: de-duplicated, delivered once.
    publish(infra["nats_url"], subject, as_protobuf.SerializeToString())

    def deliveries(event_id: str) -> list[bytes]:
        return [r.body for r in receiver.requests if r.headers.get("x-herald-event-id") == event_id]

    for event_id, body in (("inv-1", b'{"invoice":1}'), ("inv-2", b'{"invoice":2}')):
        for _ in range(200):
            if deliveries(event_id):
                break
            asyncio.run(asyncio.sleep(0.05))
        assert deliveries(event_id) == [body]
    jobs = [r.headers["webhook-id"] for r in receiver.requests]
    for job_id in jobs:
        assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"
    assert len(deliveries("inv-1")) == 1, "a repeated event id is delivered once"
