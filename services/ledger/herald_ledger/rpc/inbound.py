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
from sqlalchemy import and_, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.inbound_keys import inbound_aad
from herald.secrets import KeyRing
from herald.v1 import ledger_pb2
from herald_ledger.db.models import inbound_configs, inbound_events, jobs, suppressions, tenants
from herald_ledger.notifications import INBOUND, TENANTS, Notifier
from herald_ledger.rpc.common import Context, require_id
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


def _config_to_proto(row: Row[Any, Any, Any] | Row[Any]) -> ledger_pb2.InboundConfig:
    config = ledger_pb2.InboundConfig(provider=row.provider, public_info=row.public_info)
    config.updated_at.FromDatetime(row.updated_at.astimezone(UTC))
    return config


def _event_to_proto(row: Row[Any]) -> ledger_pb2.ProviderEvent:
    event = ledger_pb2.ProviderEvent(
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


class InboundRpcs:
    engine: AsyncEngine
    notifier: Notifier
    ring: KeyRing | None

    async def PutInboundConfig(
        self, request: ledger_pb2.PutInboundConfigRequest, context: Context
    ) -> ledger_pb2.PutInboundConfigResponse:
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
        query = (
            pg_insert(inbound_configs)
            .values(**values)
            .on_conflict_do_update(
                index_elements=[inbound_configs.c.tenant_id, inbound_configs.c.provider],
                set_={k: v for k, v in values.items() if k not in ("tenant_id", "provider")},
            )
            .returning(*inbound_configs.c)
        )
        async with self.engine.begin() as conn:
            if (await conn.execute(select(tenants.c.id).where(tenants.c.id == tenant_id))).first() is None:
                await abort_not_found(context, "tenant")
            row = (await conn.execute(query)).one()
        await self.notifier.publish(INBOUND, tenant_id=str(tenant_id))
        return ledger_pb2.PutInboundConfigResponse(config=_config_to_proto(row))

    async def ListInboundConfigs(
        self, request: ledger_pb2.ListInboundConfigsRequest, context: Context
    ) -> ledger_pb2.ListInboundConfigsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        query = (
            select(inbound_configs.c.provider, inbound_configs.c.public_info, inbound_configs.c.updated_at)
            .where(inbound_configs.c.tenant_id == tenant_id)
            .order_by(inbound_configs.c.provider)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return ledger_pb2.ListInboundConfigsResponse(configs=[_config_to_proto(r) for r in rows])

    async def DeleteInboundConfig(
        self, request: ledger_pb2.DeleteInboundConfigRequest, context: Context
    ) -> ledger_pb2.DeleteInboundConfigResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        query = delete(inbound_configs).where(
            and_(inbound_configs.c.tenant_id == tenant_id, inbound_configs.c.provider == request.provider)
        )
        async with self.engine.begin() as conn:
            deleted = (await conn.execute(query)).rowcount
        if not deleted:
            await abort_not_found(context, "inbound configuration")
        await self.notifier.publish(INBOUND, tenant_id=str(tenant_id))
        return ledger_pb2.DeleteInboundConfigResponse()

    async def GetInboundKey(
        self, request: ledger_pb2.GetInboundKeyRequest, context: Context
    ) -> ledger_pb2.GetInboundKeyResponse:
        tenant_id = parse_id(request.tenant_id)
        if tenant_id is None or request.provider not in TENANT_PROVIDERS:
            return ledger_pb2.GetInboundKeyResponse(found=False)
        query = (
            select(inbound_configs.c.sealed)
            .select_from(inbound_configs.join(tenants, tenants.c.id == inbound_configs.c.tenant_id))
            .where(
                and_(
                    inbound_configs.c.tenant_id == tenant_id,
                    inbound_configs.c.provider == request.provider,
                    tenants.c.disabled.is_(False),
                )
            )
        )
        async with self.engine.connect() as conn:
            sealed = (await conn.execute(query)).scalar_one_or_none()
        if sealed is None:
            return ledger_pb2.GetInboundKeyResponse(found=False)
        return ledger_pb2.GetInboundKeyResponse(found=True, sealed=sealed)

    async def RecordInboundEvents(
        self, request: ledger_pb2.RecordInboundEventsRequest, context: Context
    ) -> ledger_pb2.RecordInboundEventsResponse:
        parsed: list[tuple[uuid.UUID, ledger_pb2.InboundEvent]] = []
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
        return ledger_pb2.RecordInboundEventsResponse(recorded=recorded, duplicates=len(parsed) - recorded)

    async def _record_one(
        self, conn: AsyncConnection, tenant_id: uuid.UUID, event: ledger_pb2.InboundEvent, plan_changed: set[uuid.UUID]
    ) -> bool:
        """Claims the event id; only a first sighting acts. Events naming an unknown tenant are dropped."""
        if (await conn.execute(select(tenants.c.id).where(tenants.c.id == tenant_id))).first() is None:
            log.warning("inbound event for an unknown tenant dropped", extra={"provider": event.provider})
            return False
        occurred_at = event.occurred_at.ToDatetime(tzinfo=UTC) if event.HasField("occurred_at") else datetime.now(UTC)
        job_id = None
        if event.provider_message_id and event.provider in TENANT_PROVIDERS:
            job_id = (
                await conn.execute(
                    select(jobs.c.id)
                    .where(and_(jobs.c.tenant_id == tenant_id, jobs.c.provider_message_id == event.provider_message_id))
                    .limit(1)
                )
            ).scalar_one_or_none()
        plan = event.plan if event.plan in PLANS else None
        raw: Any = None
        if event.raw:
            try:
                raw = orjson.loads(event.raw)
            except orjson.JSONDecodeError:
                raw = None
        claim = (
            pg_insert(inbound_events)
            .values(
                provider=event.provider,
                tenant_id=tenant_id,
                event_id=event.event_id,
                type=event.type,
                job_id=job_id,
                provider_message_id=event.provider_message_id or None,
                recipient=event.recipient.strip().lower() or None,
                plan=plan,
                occurred_at=occurred_at,
                raw=raw,
            )
            .on_conflict_do_nothing(index_elements=["provider", "tenant_id", "event_id"])
            .returning(inbound_events.c.id)
        )
        row_id = (await conn.execute(claim)).scalar_one_or_none()
        if row_id is None:
            return False
        recipient = event.recipient.strip().lower()
        if job_id is not None:
            await apply_provider_event(
                conn, job_id, event.type, f"{event.provider}:{event.event_id}", occurred_at, recipient[:320]
            )
        reason = SUPPRESSING.get(event.type)
        if reason and "@" in recipient and len(recipient) <= 320:
            await conn.execute(
                pg_insert(suppressions)
                .values(
                    tenant_id=tenant_id,
                    address=recipient,
                    reason=reason,
                    source_event_id=f"{event.provider}:{event.event_id}",
                )
                .on_conflict_do_nothing()
            )
        target = self._target_plan(event.type, plan)
        if target is not None:
            changed = (
                await conn.execute(
                    update(tenants)
                    .where(
                        and_(
                            tenants.c.id == tenant_id,
                            (tenants.c.plan_event_at.is_(None)) | (tenants.c.plan_event_at < occurred_at),
                        )
                    )
                    .values(plan=target, plan_event_at=occurred_at)
                    .returning(tenants.c.id)
                )
            ).first()
            if changed is not None:
                plan_changed.add(tenant_id)
                await conn.execute(
                    update(inbound_events).where(inbound_events.c.id == row_id).values(applied=True, plan=target)
                )
        return True

    @staticmethod
    def _target_plan(event_type: str, plan: str | None) -> str | None:
        """Which plan a payment event puts the tenant on: the one it names when paid or subscribed, free when
        cancelled; a failed payment changes nothing (only recorded)."""
        if event_type in ("payment_succeeded", "subscription_created"):
            return plan
        if event_type == "subscription_cancelled":
            return "free"
        return None

    async def ListJobEvents(
        self, request: ledger_pb2.ListJobEventsRequest, context: Context
    ) -> ledger_pb2.ListJobEventsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        job_id = parse_id(request.job_id)
        if job_id is None:
            await abort_not_found(context, "job")
        async with self.engine.connect() as conn:
            owner = (
                await conn.execute(select(jobs.c.id).where(and_(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id)))
            ).first()
            if owner is None:
                await abort_not_found(context, "job")
            rows = (
                await conn.execute(
                    select(inbound_events)
                    .where(and_(inbound_events.c.tenant_id == tenant_id, inbound_events.c.job_id == job_id))
                    .order_by(inbound_events.c.occurred_at, inbound_events.c.id)
                    .limit(1000)
                )
            ).all()
        return ledger_pb2.ListJobEventsResponse(events=[_event_to_proto(r) for r in rows])

    async def ListBillingEvents(
        self, request: ledger_pb2.ListBillingEventsRequest, context: Context
    ) -> ledger_pb2.ListBillingEventsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(inbound_events)
                    .where(
                        and_(
                            inbound_events.c.tenant_id == tenant_id,
                            inbound_events.c.provider.in_(sorted(PAYMENT_PROVIDERS)),
                        )
                    )
                    .order_by(inbound_events.c.occurred_at.desc(), inbound_events.c.id.desc())
                    .limit(500)
                )
            ).all()
        return ledger_pb2.ListBillingEventsResponse(events=[_event_to_proto(r) for r in rows])
