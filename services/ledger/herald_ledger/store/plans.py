"""A tenant's plan as payment events change it.

Each event is applied only when it is newer (by its own time) than the event that last set the
plan, so one arriving late never overrides a newer one. A payment or a subscription sets its
plan and clears any scheduled end; a cancellation ends the plan at once, or, when it lets the
paid period run out, schedules the end (`plan_ends_at`) and leaves the plan as it is until
then; `end_expired_plans` (the ledger's maintenance) carries the scheduled ends out.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import and_, or_, update
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import tenants

FREE = "free"


async def apply_plan(
    conn: AsyncConnection, tenant_id: uuid.UUID, plan: str, occurred_at: datetime, ends_at: datetime | None = None
) -> bool:
    """Sets `plan` (or, with `ends_at` in the future, schedules the end of the current plan)
    when the event is newer than the last one applied. True when it was applied."""
    values: dict[str, object] = {"plan_event_at": occurred_at, "plan_ends_at": None}
    if ends_at is not None and ends_at > datetime.now(UTC):
        values["plan_ends_at"] = ends_at
    else:
        values["plan"] = plan
    changed = await conn.execute(
        update(tenants)
        .where(
            and_(
                tenants.c.id == tenant_id,
                or_(tenants.c.plan_event_at.is_(None), tenants.c.plan_event_at < occurred_at),
            )
        )
        .values(**values)
        .returning(tenants.c.id)
    )
    return changed.first() is not None


async def end_expired_plans(conn: AsyncConnection) -> list[uuid.UUID]:
    """Puts every tenant whose paid period ended back on free; the tenants changed."""
    rows = await conn.execute(
        update(tenants)
        .where(and_(tenants.c.plan_ends_at.is_not(None), tenants.c.plan_ends_at <= datetime.now(UTC)))
        .values(plan=FREE, plan_ends_at=None)
        .returning(tenants.c.id)
    )
    return [row.id for row in rows]
