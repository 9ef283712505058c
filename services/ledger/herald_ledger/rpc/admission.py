"""Limits, usage, the suppression list, and idempotency keys."""

from __future__ import annotations

from sqlalchemy import and_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.plans import UNLIMITED
from herald.v1 import common_pb2, ledger_pb2
from herald_ledger.convert import tenant_to_proto, timestamp
from herald_ledger.db.models import suppressions, tenants, usage_counters
from herald_ledger.notifications import TENANTS, Notifier
from herald_ledger.rpc.common import Context, require_id
from herald_ledger.store import idempotency
from herald_ledger.store.admission import current_period, tenant_limits
from herald_ledger.store.platform_email import PLATFORM_TENANT_ID
from herald_ledger.store.tenants import get_tenant

BACK_TO_PLAN = -2
REASONS = frozenset({"hard_bounce", "complaint", "manual"})
STATE_TO_PROTO = {
    "new": ledger_pb2.IDEMPOTENCY_STATE_NEW,
    "in_flight": ledger_pb2.IDEMPOTENCY_STATE_IN_FLIGHT,
    "completed": ledger_pb2.IDEMPOTENCY_STATE_COMPLETED,
    "mismatch": ledger_pb2.IDEMPOTENCY_STATE_MISMATCH,
}


def _limit(value: int | None) -> int:
    return UNLIMITED if value is None else value


class AdmissionRpcs:
    engine: AsyncEngine
    notifier: Notifier

    async def SetTenantLimits(
        self, request: ledger_pb2.SetTenantLimitsRequest, context: Context
    ) -> ledger_pb2.SetTenantLimitsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values: dict[str, int | None] = {}
        for field in ("rate_per_min", "webhooks_per_month", "emails_per_month"):
            if request.HasField(field):
                value = getattr(request, field)
                if value < BACK_TO_PLAN:
                    await abort_invalid(context, [(field, "must be >= 0, -1 (unlimited) or -2 (the plan's)")])
                values[field] = None if value == BACK_TO_PLAN else value
        async with self.engine.begin() as conn:
            query = (
                update(tenants)
                .where(tenants.c.id == tenant_id, tenants.c.id != PLATFORM_TENANT_ID)
                .values(**values)
                .returning(*tenants.c)
            )
            row = (await conn.execute(query)).first() if values else None
            if not values:
                row = await get_tenant(conn, tenant_id)
        if row is None:
            await abort_not_found(context, "tenant")
        await self.notifier.publish(TENANTS, tenant_id=str(tenant_id))
        return ledger_pb2.SetTenantLimitsResponse(tenant=tenant_to_proto(row))

    async def GetUsage(self, request: ledger_pb2.GetUsageRequest, context: Context) -> ledger_pb2.GetUsageResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        period = current_period()
        async with self.engine.connect() as conn:
            limits = (await tenant_limits(conn, [tenant_id])).get(tenant_id)
            row = (
                await conn.execute(
                    select(usage_counters).where(
                        and_(usage_counters.c.tenant_id == tenant_id, usage_counters.c.period == period)
                    )
                )
            ).first()
        if limits is None:
            await abort_not_found(context, "tenant")
        return ledger_pb2.GetUsageResponse(
            usage=common_pb2.Usage(
                period=period,
                webhooks=row.webhooks if row else 0,
                emails=row.emails if row else 0,
                webhooks_limit=_limit(limits.webhooks_per_month),
                emails_limit=_limit(limits.emails_per_month),
                shared_limit=_limit(limits.shared_allowance),
            )
        )

    async def ListSuppressions(
        self, request: ledger_pb2.ListSuppressionsRequest, context: Context
    ) -> ledger_pb2.ListSuppressionsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        page_size = request.page_size or 100
        if not 1 <= page_size <= 500:
            await abort_invalid(context, [("page_size", "must be between 1 and 500")])
        if "\x00" in request.cursor:
            # PostgreSQL text cannot hold NUL: refuse it here instead of failing in the database (a 500).
            await abort_invalid(context, [("cursor", "is not a cursor this list gave")])
        query = select(suppressions).where(suppressions.c.tenant_id == tenant_id)
        if request.cursor:
            query = query.where(suppressions.c.address > request.cursor)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.order_by(suppressions.c.address).limit(page_size + 1))).all()
        page = rows[:page_size]
        return ledger_pb2.ListSuppressionsResponse(
            entries=[
                common_pb2.SuppressionEntry(
                    address=r.address,
                    reason=r.reason,
                    source_event_id=r.source_event_id or "",
                    created_at=timestamp(r.created_at),
                )
                for r in page
            ],
            next_cursor=page[-1].address if len(rows) > page_size else "",
        )

    async def AddSuppressions(
        self, request: ledger_pb2.AddSuppressionsRequest, context: Context
    ) -> ledger_pb2.AddSuppressionsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        rows = []
        for i, entry in enumerate(request.entries):
            address = entry.address.strip().lower()
            if "@" not in address or len(address) > 320:
                await abort_invalid(context, [(f"entries[{i}].address", "must be an email address")])
            if entry.reason not in REASONS:
                await abort_invalid(context, [(f"entries[{i}].reason", "must be hard_bounce, complaint or manual")])
            rows.append(
                {
                    "tenant_id": tenant_id,
                    "address": address,
                    "reason": entry.reason,
                    "source_event_id": entry.source_event_id or None,
                }
            )
        if not rows:
            return ledger_pb2.AddSuppressionsResponse(added=0)
        async with self.engine.begin() as conn:
            query = pg_insert(suppressions).values(rows).on_conflict_do_nothing().returning(suppressions.c.address)
            added = len((await conn.execute(query)).all())
        return ledger_pb2.AddSuppressionsResponse(added=added)

    async def RemoveSuppression(
        self, request: ledger_pb2.RemoveSuppressionRequest, context: Context
    ) -> ledger_pb2.RemoveSuppressionResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.begin() as conn:
            removed = (
                await conn.execute(
                    suppressions.delete().where(
                        and_(
                            suppressions.c.tenant_id == tenant_id,
                            suppressions.c.address == request.address.strip().lower(),
                        )
                    )
                )
            ).rowcount
        if not removed:
            await abort_not_found(context, "suppression")
        return ledger_pb2.RemoveSuppressionResponse()

    async def BeginIdempotent(
        self, request: ledger_pb2.BeginIdempotentRequest, context: Context
    ) -> ledger_pb2.BeginIdempotentResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if not request.key or len(request.key) > 255 or len(request.request_hash) != 32:
            await abort_invalid(context, [("key", "1-255 characters, with a SHA-256 request hash")])
        async with self.engine.begin() as conn:
            found = await idempotency.claim(conn, tenant_id, request.key, request.request_hash)
        return ledger_pb2.BeginIdempotentResponse(
            state=STATE_TO_PROTO[found.state], status_code=found.status_code, body=found.body
        )

    async def ClaimIdempotencyKeys(
        self, request: ledger_pb2.ClaimIdempotencyKeysRequest, context: Context
    ) -> ledger_pb2.ClaimIdempotencyKeysResponse:
        claims = []
        for i, claim in enumerate(request.claims):
            tenant_id = await require_id(context, claim.tenant_id, f"claims[{i}].tenant_id")
            if not claim.key or len(claim.key) > 255 or len(claim.request_hash) != 32:
                await abort_invalid(context, [(f"claims[{i}].key", "1-255 characters, with a SHA-256 request hash")])
            claims.append((tenant_id, claim.key, claim.request_hash))
        results = []
        async with self.engine.begin() as conn:
            for tenant_id, key, digest in claims:
                found = await idempotency.claim(conn, tenant_id, key, digest)
                results.append(
                    ledger_pb2.BeginIdempotentResponse(
                        state=STATE_TO_PROTO[found.state], status_code=found.status_code, body=found.body
                    )
                )
        return ledger_pb2.ClaimIdempotencyKeysResponse(results=results)

    async def CompleteIdempotencyKeys(
        self, request: ledger_pb2.CompleteIdempotencyKeysRequest, context: Context
    ) -> ledger_pb2.CompleteIdempotencyKeysResponse:
        completions = []
        for i, item in enumerate(request.completions):
            tenant_id = await require_id(context, item.tenant_id, f"completions[{i}].tenant_id")
            completions.append((tenant_id, item.key, item.status_code, item.body))
        async with self.engine.begin() as conn:
            await idempotency.complete_many(conn, completions)
        return ledger_pb2.CompleteIdempotencyKeysResponse()

    async def CompleteIdempotent(
        self, request: ledger_pb2.CompleteIdempotentRequest, context: Context
    ) -> ledger_pb2.CompleteIdempotentResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.begin() as conn:
            await idempotency.complete(conn, tenant_id, request.key, request.status_code, request.body)
        return ledger_pb2.CompleteIdempotentResponse()

    async def AbandonIdempotent(
        self, request: ledger_pb2.AbandonIdempotentRequest, context: Context
    ) -> ledger_pb2.AbandonIdempotentResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.begin() as conn:
            await idempotency.abandon(conn, tenant_id, request.key)
        return ledger_pb2.AbandonIdempotentResponse()
