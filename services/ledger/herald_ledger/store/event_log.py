"""The event log's reads: a tenant's events (newest first, by type pattern and time), one
event with its payload, and the deliveries it led to (every job naming it: the fan-out,
skipped ones, replays, resends)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import events, jobs

# The columns of a listed event: the payload stays out of a list.
_SUMMARY = [c for c in events.c if c.name not in ("payload", "deliveries")]


def _type_condition(pattern: str) -> Any:
    """The router's filter semantics (herald_router.fanout.matches) as SQL."""
    if pattern in ("", "*"):
        return None
    if pattern.endswith(".*"):
        prefix = pattern[:-1].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return events.c.event_type.like(prefix + "_%", escape="\\")
    return events.c.event_type == pattern


async def list_events(
    conn: AsyncConnection,
    tenant_id: uuid.UUID,
    page_size: int,
    before: uuid.UUID | None,
    pattern: str,
    since: datetime | None,
    until: datetime | None,
) -> tuple[list[Row[Any]], str]:
    """Newest first (row ids are UUIDv7); the cursor is the last row's id."""
    query = select(*_SUMMARY).where(events.c.tenant_id == tenant_id)
    condition = _type_condition(pattern)
    if condition is not None:
        query = query.where(condition)
    if before is not None:
        query = query.where(events.c.id < before)
    if since is not None:
        query = query.where(events.c.created_at >= since)
    if until is not None:
        query = query.where(events.c.created_at < until)
    rows = list((await conn.execute(query.order_by(events.c.id.desc()).limit(page_size + 1))).all())
    next_cursor = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_cursor


async def get_event(conn: AsyncConnection, tenant_id: uuid.UUID, event_id: str) -> Row[Any] | None:
    """The newest event of that id (a repeat after the de-duplication window is a new row)."""
    query = select(events).where(and_(events.c.tenant_id == tenant_id, events.c.event_id == event_id))
    return (await conn.execute(query.order_by(events.c.id.desc()).limit(1))).first()


async def event_deliveries(conn: AsyncConnection, tenant_id: uuid.UUID, event_id: str) -> list[Any]:
    """Every job that names the event, oldest first: id, target, status, last error."""
    query = (
        select(jobs.c.id, jobs.c.target_id, jobs.c.status, jobs.c.last_error)
        .where(and_(jobs.c.tenant_id == tenant_id, jobs.c.event_id == event_id))
        .order_by(jobs.c.id)
    )
    return list((await conn.execute(query)).all())
