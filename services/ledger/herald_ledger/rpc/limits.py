"""A tenant's limits (its own, over its plan's), its usage against them, and its email
suppression list."""

from __future__ import annotations

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.plans import LIMIT_OVERRIDES, MAX_RETENTION_DAYS, MIN_RETENTION_DAYS, RETENTION_OVERRIDES, UNLIMITED
from herald.v1 import common_pb2, ledger_tenants_pb2
from herald_ledger.convert import timestamp
from herald_ledger.notifications import Notifier
from herald_ledger.rpc.common import Context, Rpcs, found, require_id
from herald_ledger.rpc.tenants import changed_tenant
from herald_ledger.store import limits as store
from herald_ledger.store.quota import current_period, tenant_limits
from herald_ledger.store.tenants import get_tenant

BACK_TO_PLAN = -2
REASONS = frozenset({"hard_bounce", "complaint", "manual"})


def _limit(value: int | None) -> int:
    return UNLIMITED if value is None else value


class LimitRpcs(Rpcs):
    notifier: Notifier

    async def SetTenantLimits(
        self, request: ledger_tenants_pb2.SetTenantLimitsRequest, context: Context
    ) -> ledger_tenants_pb2.SetTenantLimitsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values: dict[str, int | None] = {}
        for field in LIMIT_OVERRIDES:
            if request.HasField(field):
                value = getattr(request, field)
                if value < BACK_TO_PLAN:
                    await abort_invalid(context, [(field, "must be >= 0, -1 (unlimited) or -2 (the plan's)")])
                values[field] = None if value == BACK_TO_PLAN else value
        for field in RETENTION_OVERRIDES:
            if request.HasField(field):
                value = getattr(request, field)
                if value != BACK_TO_PLAN and not MIN_RETENTION_DAYS <= value <= MAX_RETENTION_DAYS:
                    days = f"{MIN_RETENTION_DAYS}-{MAX_RETENTION_DAYS}"
                    await abort_invalid(context, [(field, f"must be {days} days or -2 (the plan's)")])
                values[field] = None if value == BACK_TO_PLAN else value
        async with self.engine.begin() as conn:
            row = await store.set_limits(conn, tenant_id, values) if values else None
            if not values:
                row = await get_tenant(conn, tenant_id)
        return await changed_tenant(self.notifier, context, row, ledger_tenants_pb2.SetTenantLimitsResponse)

    async def GetUsage(
        self, request: ledger_tenants_pb2.GetUsageRequest, context: Context
    ) -> ledger_tenants_pb2.GetUsageResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        period = current_period()
        async with self.engine.connect() as conn:
            limits = (await tenant_limits(conn, [tenant_id])).get(tenant_id)
            row = await store.usage(conn, tenant_id, period)
        if limits is None:
            await abort_not_found(context, "tenant")
        return ledger_tenants_pb2.GetUsageResponse(
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
        self, request: ledger_tenants_pb2.ListSuppressionsRequest, context: Context
    ) -> ledger_tenants_pb2.ListSuppressionsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        page_size = request.page_size or 100
        if not 1 <= page_size <= 500:
            await abort_invalid(context, [("page_size", "must be between 1 and 500")])
        if "\x00" in request.cursor:
            # PostgreSQL text cannot hold NUL: refuse it here instead of failing in the database (a 500).
            await abort_invalid(context, [("cursor", "is not a cursor this list gave")])
        rows = await self.read(store.list_suppressions, tenant_id, request.cursor, page_size + 1)
        page = rows[:page_size]
        return ledger_tenants_pb2.ListSuppressionsResponse(
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
        self, request: ledger_tenants_pb2.AddSuppressionsRequest, context: Context
    ) -> ledger_tenants_pb2.AddSuppressionsResponse:
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
            return ledger_tenants_pb2.AddSuppressionsResponse(added=0)
        added = await self.write(store.add_suppressions, rows)
        return ledger_tenants_pb2.AddSuppressionsResponse(added=added)

    async def RemoveSuppression(
        self, request: ledger_tenants_pb2.RemoveSuppressionRequest, context: Context
    ) -> ledger_tenants_pb2.RemoveSuppressionResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        await found(
            context,
            "suppression",
            await self.write(store.remove_suppression, tenant_id, request.address.strip().lower()),
        )
        return ledger_tenants_pb2.RemoveSuppressionResponse()
