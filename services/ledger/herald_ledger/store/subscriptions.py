"""Webhook subscriptions: targets, filters, subscriptions (tenant-scoped), and the claim of a
tenant event (de-duplication; the event log's reads are in store/event_log.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, delete, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import event_claims, event_filters, events, subscriptions, webhook_targets

EVENT_DEDUP_WINDOW = timedelta(hours=24)


async def create(conn: AsyncConnection, table: Table, values: dict[str, Any]) -> Row[Any]:
    return (await conn.execute(insert(table).values(id=new_id(), **values).returning(*table.c))).one()


async def list_page(
    conn: AsyncConnection, table: Table, tenant_id: uuid.UUID, page_size: int, after: uuid.UUID | None
) -> tuple[list[Row[Any]], str]:
    """Oldest first (ids are UUIDv7); the cursor is the last row's id."""
    query = select(table).where(table.c.tenant_id == tenant_id)
    if after is not None:
        query = query.where(table.c.id > after)
    rows = list((await conn.execute(query.order_by(table.c.id).limit(page_size + 1))).all())
    next_cursor = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_cursor


async def active_subscriptions(conn: AsyncConnection, tenant_id: uuid.UUID) -> list[Row[Any]]:
    """The target's columns plus `subscription_id`, `active` and the filter's `event_types`,
    for every subscription of the tenant: the router delivers to an active one whose target
    is enabled and records a SKIPPED delivery for the others (nothing is skipped silently)."""
    query = (
        select(
            subscriptions.c.id.label("subscription_id"),
            subscriptions.c.active.label("subscription_active"),
            event_filters.c.event_types,
            *webhook_targets.c,
        )
        .select_from(
            subscriptions.join(webhook_targets, webhook_targets.c.id == subscriptions.c.target_id).join(
                event_filters, event_filters.c.id == subscriptions.c.filter_id
            )
        )
        .where(subscriptions.c.tenant_id == tenant_id)
        .order_by(subscriptions.c.id)
    )
    return list((await conn.execute(query)).all())


@dataclass(frozen=True)
class NewEvent:
    event_id: str
    event_type: str
    payload: bytes
    content_type: str
    ordering_key: str | None


async def claim_event(
    conn: AsyncConnection, tenant_id: uuid.UUID, event: NewEvent
) -> tuple[uuid.UUID | None, Row[Any] | None]:
    """(row id, None) when the event is new and now claimed in this transaction; (None, the
    earlier row) when it was seen within the window. A claim older than the window is
    replaced (the earlier row stays in the event log until retention ages it out). A concurrent
    claim of the same id waits for the first transaction to end. The payload rides in the
    INSERT of the event row (the event log keeps it at no extra round trip)."""
    event_id = event.event_id
    await conn.execute(
        delete(event_claims).where(
            and_(
                event_claims.c.tenant_id == tenant_id,
                event_claims.c.event_id == event_id,
                event_claims.c.created_at < datetime.now(UTC) - EVENT_DEDUP_WINDOW,
            )
        )
    )
    row_id = new_id()
    claimed = (
        await conn.execute(
            pg_insert(event_claims)
            .values(tenant_id=tenant_id, event_id=event_id, id=row_id)
            .on_conflict_do_nothing(index_elements=[event_claims.c.tenant_id, event_claims.c.event_id])
            .returning(event_claims.c.id)
        )
    ).first()
    if claimed is None:
        earlier = select(events).join(event_claims, event_claims.c.id == events.c.id)
        earlier = earlier.where(and_(event_claims.c.tenant_id == tenant_id, event_claims.c.event_id == event_id))
        return None, (await conn.execute(earlier)).first()
    await conn.execute(
        insert(events).values(
            id=row_id,
            tenant_id=tenant_id,
            event_id=event_id,
            event_type=event.event_type,
            payload=event.payload,
            content_type=event.content_type,
            ordering_key=event.ordering_key,
        )
    )
    return row_id, None


async def set_event_deliveries(conn: AsyncConnection, row_id: uuid.UUID, deliveries: list[dict[str, str]]) -> None:
    await conn.execute(update(events).where(events.c.id == row_id).values(deliveries=deliveries))
