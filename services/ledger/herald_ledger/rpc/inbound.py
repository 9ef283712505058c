"""Inbound provider webhooks: tenants' verification material (sealed), and the verified events the verifier
records: de-duplicated, stored against their job and moving its status (`herald_ledger.store.provider_events`),
suppressing on hard bounces and complaints, changing plans
on payments (in event-time order, so an older event arriving late never overrides a newer one)."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.inbound_keys import inbound_aad
from herald.secrets import KeyRing
from herald.v1 import ledger_inbound_pb2
from herald_ledger.notifications import INBOUND, TENANTS, Notifier
from herald_ledger.rpc.common import Context, Rpcs, found, require_id, tenant_list_rpc
from herald_ledger.store import inbound as store
from herald_ledger.store.plans import apply_plan
from herald_ledger.store.provider_events import apply_provider_event

log = logging.getLogger("herald.ledger.inbound")

TENANT_PROVIDERS = frozenset({"sendgrid", "resend", "postmark"})
PAYMENT_PROVIDERS = frozenset({"paystack", "polar"})
EMAIL_TYPES = frozenset(
    {"delivered", "deferred", "bounced_hard", "bounced_soft", "complained", "opened", "clicked", "unsubscribed"}
)
PAYMENT_TYPES = frozenset({"payment_succeeded", "payment_failed", "subscription_created", "subscription_cancelled"})
PLANS = frozenset({"free", "indie", "startup"})
SUPPRESSING = {"bounced_hard": "hard_bounce", "complained": "complaint"}


def _config_to_proto(row: Row[Any, Any, Any] | Row[Any]) -> ledger_inbound_pb2.InboundConfig:
    config = ledger_inbound_pb2.InboundConfig(provider=row.provider, public_info=row.public_info)
    config.updated_at.FromDatetime(row.updated_at.astimezone(UTC))
    return config


def _event_to_proto(row: Row[Any]) -> ledger_inbound_pb2.ProviderEvent:
    event = ledger_inbound_pb2.ProviderEvent(
        event_id=row.event_id,
        provider=row.provider,
        type=row.type,
        recipient=row.recipient or "",
        job_id=str(row.job_id) if row.job_id else "",
        plan=row.plan or "",
        applied=row.applied,
    )
    event.occurred_at.FromDatetime(row.occurred_at.astimezone(UTC))
    event.received_at.FromDatetime(row.received_at.astimezone(UTC))
    return event


class InboundRpcs(Rpcs):
    notifier: Notifier
    ring: KeyRing | None

    ListInboundConfigs = tenant_list_rpc(
        store.list_configs, ledger_inbound_pb2.ListInboundConfigsResponse, "configs", _config_to_proto
    )
    ListBillingEvents = tenant_list_rpc(
        store.billing_events, ledger_inbound_pb2.ListBillingEventsResponse, "events", _event_to_proto, PAYMENT_PROVIDERS
    )

    async def PutInboundConfig(
        self, request: ledger_inbound_pb2.PutInboundConfigRequest, context: Context
    ) -> ledger_inbound_pb2.PutInboundConfigResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if request.provider not in TENANT_PROVIDERS:
            await abort_invalid(context, [("provider", "must be sendgrid, resend or postmark")])
        if not request.material or len(request.material) > 16_384 or len(request.public_info) > 4096:
            await abort_invalid(context, [("material", "is required (at most 16 KiB)")])
        if self.ring is None:
            await abort_failed_precondition(context, "master keys are not configured (HERALD_MASTER_KEYS)")
        sealed = self.ring.seal(request.material, inbound_aad(request.provider, str(tenant_id)))
        now = datetime.now(UTC)
        values = {
            "tenant_id": tenant_id,
            "provider": request.provider,
            "sealed": sealed.envelope,
            "key_id": sealed.key_id,
            "public_info": request.public_info,
            "updated_at": now,
        }
        async with self.engine.begin() as conn:
            if not await store.tenant_exists(conn, tenant_id):
                await abort_not_found(context, "tenant")
            row = await store.put_config(conn, values)
        await self.notifier.publish(INBOUND, tenant_id=str(tenant_id))
        return ledger_inbound_pb2.PutInboundConfigResponse(config=_config_to_proto(row))

    async def DeleteInboundConfig(
        self, request: ledger_inbound_pb2.DeleteInboundConfigRequest, context: Context
    ) -> ledger_inbound_pb2.DeleteInboundConfigResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        await found(
            context, "inbound configuration", await self.write(store.delete_config, tenant_id, request.provider)
        )
        await self.notifier.publish(INBOUND, tenant_id=str(tenant_id))
        return ledger_inbound_pb2.DeleteInboundConfigResponse()

    async def GetInboundKey(
        self, request: ledger_inbound_pb2.GetInboundKeyRequest, context: Context
    ) -> ledger_inbound_pb2.GetInboundKeyResponse:
        tenant_id = parse_id(request.tenant_id)
        if tenant_id is None or request.provider not in TENANT_PROVIDERS:
            return ledger_inbound_pb2.GetInboundKeyResponse(found=False)
        sealed = await self.read(store.sealed_key, tenant_id, request.provider)
        if sealed is None:
            return ledger_inbound_pb2.GetInboundKeyResponse(found=False)
        return ledger_inbound_pb2.GetInboundKeyResponse(found=True, sealed=sealed)

    async def RecordInboundEvents(
        self, request: ledger_inbound_pb2.RecordInboundEventsRequest, context: Context
    ) -> ledger_inbound_pb2.RecordInboundEventsResponse:
        parsed: list[tuple[uuid.UUID, ledger_inbound_pb2.InboundEvent]] = []
        for i, event in enumerate(request.events):
            tenant_id = await require_id(context, event.tenant_id, f"events[{i}].tenant_id")
            known = EMAIL_TYPES | PAYMENT_TYPES | {"other"}
            if not event.event_id or len(event.event_id) > 512 or event.type not in known:
                await abort_invalid(context, [(f"events[{i}]", "event_id and a known type are required")])
            if event.provider not in TENANT_PROVIDERS | PAYMENT_PROVIDERS:
                await abort_invalid(context, [(f"events[{i}].provider", "is not an inbound provider")])
            parsed.append((tenant_id, event))
        recorded = 0
        plan_changed: set[uuid.UUID] = set()
        async with self.engine.begin() as conn:
            for tenant_id, event in parsed:
                if await self._record_one(conn, tenant_id, event, plan_changed):
                    recorded += 1
        for tenant_id in plan_changed:
            await self.notifier.publish(TENANTS, tenant_id=str(tenant_id))
        return ledger_inbound_pb2.RecordInboundEventsResponse(recorded=recorded, duplicates=len(parsed) - recorded)

    async def _record_one(
        self,
        conn: AsyncConnection,
        tenant_id: uuid.UUID,
        event: ledger_inbound_pb2.InboundEvent,
        plan_changed: set[uuid.UUID],
    ) -> bool:
        """Claims the event id; only a first sighting acts. Events naming an unknown tenant are dropped."""
        if not await store.tenant_exists(conn, tenant_id):
            log.warning("inbound event for an unknown tenant dropped", extra={"provider": event.provider})
            return False
        occurred_at = event.occurred_at.ToDatetime(tzinfo=UTC) if event.HasField("occurred_at") else datetime.now(UTC)
        job_id = None
        if event.provider_message_id and event.provider in TENANT_PROVIDERS:
            job_id = await store.job_of_message(conn, tenant_id, event.provider_message_id)
        plan = event.plan if event.plan in PLANS else None
        raw: Any = None
        if event.raw:
            try:
                raw = orjson.loads(event.raw)
            except orjson.JSONDecodeError:
                raw = None
        row_id = await store.claim_event(
            conn,
            {
                "provider": event.provider,
                "tenant_id": tenant_id,
                "event_id": event.event_id,
                "type": event.type,
                "job_id": job_id,
                "provider_message_id": event.provider_message_id or None,
                "recipient": event.recipient.strip().lower() or None,
                "plan": plan,
                "occurred_at": occurred_at,
                "raw": raw,
            },
        )
        if row_id is None:
            return False
        recipient = event.recipient.strip().lower()
        if job_id is not None:
            await apply_provider_event(
                conn, job_id, event.type, f"{event.provider}:{event.event_id}", occurred_at, recipient[:320]
            )
        reason = SUPPRESSING.get(event.type)
        if reason and "@" in recipient and len(recipient) <= 320:
            await store.suppress(conn, tenant_id, recipient, reason, f"{event.provider}:{event.event_id}")
        target = self._target_plan(event.type, plan)
        if target is not None:
            ends_at = event.plan_ends_at.ToDatetime(tzinfo=UTC) if event.HasField("plan_ends_at") else None
            if await apply_plan(conn, tenant_id, target, occurred_at, ends_at):
                plan_changed.add(tenant_id)
                await store.mark_applied(conn, row_id, target)
        return True

    @staticmethod
    def _target_plan(event_type: str, plan: str | None) -> str | None:
        """Which plan a payment event puts the tenant on: the one the verifier mapped from the provider's
        own product when paid or subscribed, free when cancelled (at once, or at the period's end: see
        store.plans); a failed payment, or a payment for no configured product, changes nothing."""
        if event_type in ("payment_succeeded", "subscription_created"):
            return plan
        if event_type == "subscription_cancelled":
            return "free"
        return None

    async def ListJobEvents(
        self, request: ledger_inbound_pb2.ListJobEventsRequest, context: Context
    ) -> ledger_inbound_pb2.ListJobEventsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        job_id = parse_id(request.job_id)
        if job_id is None:
            await abort_not_found(context, "job")
        async with self.engine.connect() as conn:
            if not await store.owns_job(conn, tenant_id, job_id):
                await abort_not_found(context, "job")
            rows = await store.job_events(conn, tenant_id, job_id)
        return ledger_inbound_pb2.ListJobEventsResponse(events=[_event_to_proto(r) for r in rows])
