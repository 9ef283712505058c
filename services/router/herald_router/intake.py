"""Events that internal backends publish straight to NATS, with JetStream acks.

Subject `<prefix>.intake.events.<tenant id>` on stream `<PREFIX>_INTAKE` (work-queue
retention). The body is a `herald.v1.PublishEventRequest` protobuf, or JSON
(`{"event_type": ..., "payload": <any JSON>, "event_id"?: ..., "ordering_key"?: ...}` with header
`Content-Type: application/json`); the tenant comes from the subject. The publisher's
JetStream ack means the event is durable on the bus; the router fans it out exactly
like `POST /v1/events` and acknowledges the message only once the ledger recorded the
event, so a crash replays it (event ids de-duplicate for 24 h, `Nats-Msg-Id` within the
stream's window). Internal callers are trusted as the gRPC callers are: network policy,
not API keys, keeps others out. A `herald.` type is refused there: those are Herald's own
events, which the ledger alone publishes, on `<prefix>.intake.operational.<tenant>` of the
same stream (`herald_ledger.operational`); the router fans them out here the same way.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import orjson
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import FetchTimeoutError

from herald.bus.healing import HealingPull
from herald.bus.streams import ensure_consumer, ensure_stream
from herald.bus.subjects import Subjects
from herald.config import Settings
from herald.expiring import MISSING, ExpiringCache
from herald.grpcio.ledger import Ledger
from herald.ids import parse_id
from herald.v1 import ledger_pb2, ledger_tenants_pb2, router_pb2
from herald_router.fanout import HERALD_PREFIX
from herald_router.servicer import RouterServicer

log = logging.getLogger("herald.router.intake")
DURABLE = "router-intake"
PLAN_CACHE_S = 60.0


def intake_subject(prefix: str, tenant_id: str) -> str:
    return Subjects(prefix).intake_events(tenant_id)


def parse(message: Msg, tenant_id: str) -> router_pb2.PublishEventRequest:
    headers = message.headers or {}
    if "json" in headers.get("Content-Type", headers.get("content-type", "")):
        fields = orjson.loads(message.data)
        return router_pb2.PublishEventRequest(
            tenant_id=tenant_id,
            event_type=str(fields["event_type"]),
            event_id=str(fields.get("event_id") or ""),
            payload=orjson.dumps(fields.get("payload")),
            content_type="application/json",
            ordering_key=str(fields.get("ordering_key") or ""),
        )
    request = router_pb2.PublishEventRequest()
    request.ParseFromString(message.data)
    request.tenant_id = tenant_id
    return request


@dataclass(eq=False)
class Intake:
    settings: Settings
    js: JetStreamContext
    ledger: Ledger
    router: RouterServicer

    def __post_init__(self) -> None:
        self.stream = self.settings.stream_name("intake")
        self._plans: ExpiringCache[str, tuple[int, bool]] = ExpiringCache(PLAN_CACHE_S)

    def _configs(self) -> tuple[StreamConfig, ConsumerConfig]:
        stream = StreamConfig(
            name=self.stream,
            # Tenant events from backends, and Herald's own events from the ledger (only the
            # ledger's bus user may publish those: herald.bus.permissions).
            subjects=[
                f"{self.settings.bus_prefix}.intake.events.*",
                f"{self.settings.bus_prefix}.intake.operational.*",
            ],
            retention=RetentionPolicy.WORK_QUEUE,
            storage=StorageType.FILE,
            num_replicas=self.settings.stream_replicas,
            max_age=self.settings.stream_max_age_s,
            duplicate_window=self.settings.stream_duplicate_window_s,
        )
        consumer = ConsumerConfig(durable_name=DURABLE, ack_policy=AckPolicy.EXPLICIT, ack_wait=30, max_deliver=-1)
        return stream, consumer

    async def ensure(self) -> None:
        stream, consumer = self._configs()
        # Patiently, as every service's streams: a router restarted while its cluster elects a
        # leader starts once the election is over.
        await ensure_stream(self.js, stream)
        await ensure_consumer(self.js, self.stream, consumer)

    async def _tenant(self, tenant_id: str) -> tuple[int, bool] | None:
        """(plan, disabled), cached briefly; None for an unknown tenant."""
        cached = self._plans.get(tenant_id)
        if cached is not MISSING:
            return cached
        try:
            found = (
                await self.ledger.tenants.GetTenant(ledger_tenants_pb2.GetTenantRequest(tenant_id=tenant_id))
            ).tenant
        except Exception as error:
            if "NOT_FOUND" in repr(error):
                return None
            raise
        self._plans.put(tenant_id, (found.plan, found.disabled))
        return found.plan, found.disabled

    async def handle(self, message: Msg) -> None:
        kind, tenant_id = message.subject.rsplit(".", 2)[-2:]
        operational = kind == "operational"
        try:
            request = parse(message, tenant_id)
        except Exception:
            log.error("unreadable intake event dropped", extra={"subject": message.subject})
            await message.term()
            return
        try:
            tenant = await self._tenant(tenant_id) if parse_id(tenant_id) else None
        except Exception as error:
            log.warning("ledger unavailable; intake event handed back", extra={"error": repr(error)})
            await message.nak(delay=2.0)
            return
        if tenant is None or tenant[1] or not request.event_type:
            log.error(
                "intake event refused: unknown or disabled tenant, or no event type", extra={"tenant_id": tenant_id}
            )
            await message.term()
            return
        if request.event_type.startswith(HERALD_PREFIX) != operational:
            # herald.* are Herald's own events: only the ledger's operational subject has them.
            log.error(
                "intake event refused: herald.* types only on the operational subject, and only they",
                extra={"tenant_id": tenant_id, "event_type": request.event_type[:100]},
            )
            await message.term()
            return
        request.plan = tenant[0]  # type: ignore[assignment]
        try:
            answer = await self.router.publish_event(request, operational=operational)
        except Exception as error:
            log.warning("intake event not recorded; handed back", extra={"error": repr(error)})
            await message.nak(delay=2.0)
            return
        if answer.rejection != ledger_pb2.REJECTION_UNSPECIFIED:
            log.warning("intake event refused at admission", extra={"tenant_id": tenant_id, "detail": answer.detail})
        await message.ack()

    async def run(self, stopping: asyncio.Event) -> None:
        # Restored when the bus loses the stream or the consumer (herald.bus.healing).
        pull = HealingPull(self.js, *self._configs(), DURABLE)
        subscription = await pull.bind()
        while not stopping.is_set():
            try:
                messages = await subscription.fetch(batch=32, timeout=1.0)
            except (FetchTimeoutError, TimeoutError):
                await pull.quiet()
                subscription = pull.subscription or subscription
                continue
            except Exception as error:
                await pull.failed(error)
                subscription = pull.subscription or subscription
                continue
            pull.fetched()
            await asyncio.gather(*(self.handle(m) for m in messages))
