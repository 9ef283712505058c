"""Targets' failing streaks, the failed deliveries a recovery replays, and tenants' webhook
settings.

A streak starts with the first failed delivery to a target after its last success
(`failing_since`) and ends with the next success. Reports may arrive a little out of order
(several senders, batched reports), so a success only ends a streak that began no later than
it, and a failure only starts one when none is running.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import and_, bindparam, select, text, true, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.sender.waiting import CIRCUIT_OPEN
from herald_ledger.db.models import jobs, tenants, webhook_targets
from herald_ledger.store import operational, rows


@dataclass(frozen=True)
class TargetOutcome:
    tenant_id: uuid.UUID
    target_id: uuid.UUID
    succeeded: bool
    at: datetime


_END_STREAK = text(
    """
    UPDATE webhook_targets SET
      failing_since = CASE WHEN failing_since <= :at THEN NULL ELSE failing_since END,
      failing_level = CASE WHEN failing_since <= :at THEN 0 ELSE failing_level END,
      last_success_at = GREATEST(last_success_at, :at)
    WHERE id = :target_id AND tenant_id = :tenant_id
      AND (failing_since <= :at OR last_success_at IS NULL OR last_success_at < :at - interval '1 minute')
    """
).bindparams(bindparam("target_id", type_=PG_UUID(as_uuid=True)), bindparam("tenant_id", type_=PG_UUID(as_uuid=True)))

_START_STREAK = text(
    """
    UPDATE webhook_targets SET failing_since = :at
    WHERE id = :target_id AND tenant_id = :tenant_id AND failing_since IS NULL
    """
).bindparams(bindparam("target_id", type_=PG_UUID(as_uuid=True)), bindparam("tenant_id", type_=PG_UUID(as_uuid=True)))

_DISABLE_LONG_STREAKS = text(
    """
    UPDATE webhook_targets
    SET enabled = false, updated_at = now(),
        disabled_reason = 'disabled automatically: every delivery failed since '
            || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            || ' (longer than ' || :threshold_text || ')'
    WHERE id = ANY(:ids) AND enabled AND failing_since IS NOT NULL
      AND failing_since < now() - make_interval(secs => :threshold_s)
    RETURNING *
    """
).bindparams(bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True))))


# The failing levels, percent of the disable threshold a streak's age has passed: each is
# announced once per streak (`failing_level`, the highest told), every level a report passed in
# order, so a report that passes two at once tells both. A streak past the threshold itself is
# disabled instead (and announced as such).
FAILING_LEVELS = (50, 70, 90)
_LEVEL = " ".join(
    f"WHEN failing_since <= now() - make_interval(secs => :threshold_s * {p / 100}) THEN {p}"
    for p in sorted(FAILING_LEVELS, reverse=True)
)
_RAISE_FAILING_LEVELS = text(
    f"""
    UPDATE webhook_targets SET failing_level = lv.level
    FROM (SELECT id AS target_id, failing_level AS told, CASE {_LEVEL} ELSE 0 END AS level
          FROM webhook_targets WHERE id = ANY(:ids) AND enabled AND failing_since IS NOT NULL FOR UPDATE) lv
    WHERE webhook_targets.id = lv.target_id AND lv.level > webhook_targets.failing_level
      AND webhook_targets.failing_since >= now() - make_interval(secs => :threshold_s)
    RETURNING webhook_targets.*, lv.told, failing_since + make_interval(secs => :threshold_s) AS disables_at
    """  # noqa: S608 (constant levels only)
).bindparams(bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True))))


def describe_seconds(seconds: float) -> str:
    """ "5 days", "3 h", "2 s": the threshold as the disabled reason states it."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


async def note_outcomes(
    conn: AsyncConnection, outcomes: Sequence[TargetOutcome], disable_after_s: float
) -> tuple[list[Row[Any]], int]:
    """Applies the reports in time order, then disables the reported targets whose streak is
    older than `disable_after_s` (0: never). Returns the targets this call disabled and how
    many operational events it wrote. Each failing level a reported streak passed, and each
    target disabled, writes its operational event (`store.operational`) in this transaction:
    only when a report failed."""
    # In time order, each run of successes (or of failures) as one batched statement.
    for succeeded, run in groupby(sorted(outcomes, key=lambda o: o.at), key=lambda o: o.succeeded):
        params = [{"target_id": o.target_id, "tenant_id": o.tenant_id, "at": o.at} for o in run]
        await conn.execute(_END_STREAK if succeeded else _START_STREAK, params)
    failed = sorted({o.target_id for o in outcomes if not o.succeeded})
    if disable_after_s <= 0 or not failed:
        return [], 0
    raised = await conn.execute(_RAISE_FAILING_LEVELS, {"ids": failed, "threshold_s": disable_after_s})
    told = [
        operational.failing_event(row, level, disable_after_s)
        for row in raised.all()
        for level in FAILING_LEVELS
        if row.told < level <= row.failing_level
    ]
    result = await conn.execute(
        _DISABLE_LONG_STREAKS,
        {"ids": failed, "threshold_s": disable_after_s, "threshold_text": describe_seconds(disable_after_s)},
    )
    disabled = list(result.all())
    told += [operational.target_event(row, operational.TARGET_DISABLED) for row in disabled]
    return disabled, await operational.record(conn, told)


async def update_target(
    conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID, values: dict[str, Any]
) -> Row[Any] | None:
    """A target changed by `values` (`rows.update_row`); when that enables or disables it, the
    operational event is written with the change."""
    if "enabled" not in values:
        return await rows.update_row(conn, tenant_id, target_id, webhook_targets, values)
    was = (
        await conn.execute(
            select(webhook_targets.c.enabled)
            .where(and_(webhook_targets.c.id == target_id, webhook_targets.c.tenant_id == tenant_id))
            .with_for_update()
        )
    ).first()
    row = await rows.update_row(conn, tenant_id, target_id, webhook_targets, values)
    if row is not None and was is not None and was.enabled != row.enabled:
        await operational.record(
            conn,
            [operational.target_event(row, operational.TARGET_ENABLED if row.enabled else operational.TARGET_DISABLED)],
        )
    return row


async def failed_deliveries(
    conn: AsyncConnection,
    tenant_id: uuid.UUID,
    target_id: uuid.UUID,
    since: datetime,
    limit: int,
    until: datetime | None = None,
) -> list[uuid.UUID]:
    """The target's FAILED and SKIPPED jobs that ended at or after `since` (their last change)
    and before `until`, oldest first."""
    query = (
        select(jobs.c.id)
        .where(
            and_(
                jobs.c.target_id == target_id,
                jobs.c.tenant_id == tenant_id,
                jobs.c.status.in_(("FAILED", "SKIPPED")),
                jobs.c.updated_at >= since,
                jobs.c.updated_at < until if until is not None else true(),
            )
        )
        .order_by(jobs.c.updated_at, jobs.c.id)
        .limit(limit)
    )
    return [row.id for row in (await conn.execute(query)).all()]


async def open_breakers(conn: AsyncConnection, tenant_id: uuid.UUID, target_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    """Of these targets, those whose circuit breaker a sender holds deliveries back for: a QUEUED
    delivery of theirs noted held by it, with no attempt recorded since (Job.waiting_reason's
    rule). Breakers live in the senders' memory; this is what they told the ledger. Only
    unsettled jobs are read (the reconciler's partial index covers them)."""
    if not target_ids:
        return set()
    query = (
        select(jobs.c.target_id)
        .where(
            and_(
                jobs.c.status.in_(("QUEUED", "DELIVERING")),
                jobs.c.status == "QUEUED",
                jobs.c.tenant_id == tenant_id,
                jobs.c.target_id.in_(list(target_ids)),
                jobs.c.waiting_reason == CIRCUIT_OPEN,
                jobs.c.waiting_noted_at >= jobs.c.updated_at,
            )
        )
        .distinct()
    )
    return {row.target_id for row in (await conn.execute(query)).all()}


async def get_target(conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID) -> Row[Any] | None:
    query = select(webhook_targets).where(
        and_(webhook_targets.c.id == target_id, webhook_targets.c.tenant_id == tenant_id)
    )
    return (await conn.execute(query)).first()


async def webhook_settings(conn: AsyncConnection, tenant_id: uuid.UUID) -> dict[str, Any] | None:
    """The tenant's settings (possibly empty), or None when there is no such tenant."""
    row = (await conn.execute(select(tenants.c.webhook_settings).where(tenants.c.id == tenant_id))).first()
    if row is None:
        return None
    return dict(row.webhook_settings or {})


async def set_webhook_settings(conn: AsyncConnection, tenant_id: uuid.UUID, settings: dict[str, Any]) -> bool:
    result = await conn.execute(
        update(tenants).where(tenants.c.id == tenant_id).values(webhook_settings=settings or None)
    )
    return bool(result.rowcount)
