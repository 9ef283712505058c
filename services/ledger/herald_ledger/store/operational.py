"""Herald's own events to a tenant (operational events, `herald.*`), written in the
transaction of the state change they tell of, as rows of the `operational_events` outbox.

Nothing here fans anything out: the ledger publishes each row after its commit to the
router's operational intake subject (`herald_ledger.operational`), and the router fans it out
to the tenant's subscriptions like any event (a filter on `herald.*`), except to the target
the event is about (its payload's `target_id`). A change that rolls back takes its row with it; a
ledger that dies after the commit leaves the row for the next pass (any replica's).

Where each fact becomes true, and so where its row is written:
- `herald.target.disabled` / `herald.target.enabled`: a target's `enabled` changing
  (`store.target_health.update_target`: the tenant's PATCH, the sender's 410 Gone) and the
  automatic disabling of a long failing streak (`store.target_health.note_outcomes`);
- `herald.target.failing`: a failing streak passing 50, 70 or 90 % of the disable threshold
  (`note_outcomes`; the target's `failing_level` keeps each level to once per streak);
- `herald.delivery.exhausted`: a job dead-lettered (`store.deliveries`: a variant of the
  outcomes statement, used only for a batch that reports a dead letter);
- `herald.quota.warning` / `herald.quota.exhausted`: admission taking a monthly usage to 80 %
  / 100 % of a limit, or refusing a job at the limit (`store.quota.decide`), or refusing an
  event's whole fan-out for want of room (`store.quota.note_refused_fan_out`); once per tenant,
  limit, threshold and month (`dedupe_key`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import operational_events

PREFIX = "herald."
TARGET_DISABLED = "herald.target.disabled"
TARGET_ENABLED = "herald.target.enabled"
TARGET_FAILING = "herald.target.failing"
DELIVERY_EXHAUSTED = "herald.delivery.exhausted"
QUOTA_WARNING = "herald.quota.warning"
QUOTA_EXHAUSTED = "herald.quota.exhausted"
# The quota thresholds (percent of a monthly limit) and the event each one raises.
QUOTA_EVENTS = {80: QUOTA_WARNING, 100: QUOTA_EXHAUSTED}
# Published rows are kept this long (a quota threshold's key must outlive its month).
KEEP_PUBLISHED_DAYS = 40
# Quota keys this process wrote (or found written): a refusal at the limit, repeated on every
# request, does not write again. Bounded; forgetting costs one insert that finds the key.
_KNOWN_KEYS: set[str] = set()
_KNOWN_KEYS_MAX = 100_000


def moment(at: datetime | None = None) -> str:
    """An RFC 3339 UTC time, as every operational payload writes it (`...Z`)."""
    return (at or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Operational:
    """One event to write: `payload` gets `type`, `tenant_id` and `occurred_at` added."""

    tenant_id: uuid.UUID
    event_type: str
    payload: dict[str, Any]
    dedupe_key: str | None = None
    id: uuid.UUID = field(default_factory=new_id)

    def row(self) -> dict[str, Any]:
        body = {"type": self.event_type, "tenant_id": str(self.tenant_id), "occurred_at": moment(), **self.payload}
        return {
            "id": self.id,
            "tenant_id": self.tenant_id,
            "event_type": self.event_type,
            "payload": body,
            "dedupe_key": self.dedupe_key,
        }


async def record(conn: AsyncConnection, told: Iterable[Operational]) -> int:
    """Writes the events in the caller's transaction (one keyed again is left out)."""
    rows = [t.row() for t in told]
    if not rows:
        return 0
    statement = pg_insert(operational_events).values(rows).on_conflict_do_nothing(index_elements=["dedupe_key"])
    return int((await conn.execute(statement)).rowcount or 0)


def _when(row: Row[Any], name: str) -> str | None:
    value = getattr(row, name, None)
    return moment(value) if value is not None else None


def target_event(row: Row[Any], event_type: str, **more: Any) -> Operational:
    """An event about a target (a `webhook_targets` row as it is now)."""
    payload: dict[str, Any] = {"target_id": str(row.id), **more}
    if event_type == TARGET_DISABLED:
        payload |= {"reason": row.disabled_reason or "", "failing_since": _when(row, "failing_since")}
    return Operational(row.tenant_id, event_type, payload)


def failing_event(row: Row[Any], level: int, disable_after_s: float) -> Operational:
    """A target's failing streak passed `level` % of the disable threshold."""
    return target_event(
        row,
        TARGET_FAILING,
        level_percent=level,
        failing_since=_when(row, "failing_since"),
        disable_after_s=disable_after_s,
        disables_at=moment(row.disables_at),
    )


def quota_events(warnings: Sequence[Any], remembered: bool = True) -> list[Operational]:
    """The events of the quota thresholds admission reached (`platform_email.QuotaWarning`s),
    less (`remembered`) the ones this process knows it wrote already."""
    told = []
    for w in warnings:
        key = f"op:{w.dedupe_key}"
        if (remembered and key in _KNOWN_KEYS) or w.threshold not in QUOTA_EVENTS:
            continue
        payload = {
            "period": w.period,
            "counter": w.counter,
            "used": w.used,
            "limit": w.limit,
            "threshold_percent": w.threshold,
        }
        told.append(Operational(w.tenant_id, QUOTA_EVENTS[w.threshold], payload, dedupe_key=key))
    return told


async def record_quota(conn: AsyncConnection, warnings: Sequence[Any]) -> None:
    told = quota_events(warnings)
    if not told:
        return
    await record(conn, told)
    if len(_KNOWN_KEYS) > _KNOWN_KEYS_MAX:
        _KNOWN_KEYS.clear()
    _KNOWN_KEYS.update(t.dedupe_key for t in told if t.dedupe_key)


# A dead-lettered job's event, as a part of the outcomes statement (store.deliveries): its
# rows are those `changed` moved to FAILED with a dead letter. `jobs` read here is the row
# before the statement's update, which changes none of the columns read.
EXHAUSTED_CTE = """
    , exhausted AS (
        INSERT INTO operational_events (id, tenant_id, event_type, payload)
        SELECT gen_random_uuid(), ch.tenant_id, 'herald.delivery.exhausted',
               jsonb_build_object(
                   'type', 'herald.delivery.exhausted', 'tenant_id', ch.tenant_id,
                   'occurred_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                   'job_id', ch.id, 'channel', ch.channel, 'target_id', j.target_id, 'event_id', j.event_id,
                   'attempts', ch.attempt_count, 'error', COALESCE(ch.last_error, ''), 'run', ch.run)
        FROM changed ch JOIN jobs j ON j.id = ch.id AND DAYS(j.id)
        WHERE ch.legal AND ch.dead AND ch.to_status = 'FAILED' AND ch.channel <> 'platform_email'
    )
"""

_CLAIM = text(
    """
    UPDATE operational_events SET claimed_until = now() + make_interval(secs => :lease_s)
    WHERE id IN (
        SELECT id FROM operational_events
        WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
        ORDER BY created_at LIMIT :limit FOR UPDATE SKIP LOCKED
    )
    RETURNING id, tenant_id, event_type, payload, created_at
    """
)

_PUBLISHED = text("UPDATE operational_events SET published_at = now() WHERE id = ANY(:ids)").bindparams(
    bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True)))
)

_PRUNE = text(
    """
    DELETE FROM operational_events
    WHERE published_at IS NOT NULL AND published_at < now() - make_interval(days => :days)
    """
)


async def claim_unpublished(conn: AsyncConnection, lease_s: float, limit: int) -> list[Row[Any]]:
    """The oldest unpublished events no other replica holds, leased to this one for `lease_s`."""
    rows = (await conn.execute(_CLAIM, {"lease_s": lease_s, "limit": limit})).all()
    return sorted(rows, key=lambda r: r.created_at)


async def mark_published(conn: AsyncConnection, ids: Sequence[uuid.UUID]) -> None:
    if ids:
        await conn.execute(_PUBLISHED, {"ids": list(ids)})


async def prune_published(conn: AsyncConnection, days: int = KEEP_PUBLISHED_DAYS) -> int:
    return int((await conn.execute(_PRUNE, {"days": days})).rowcount or 0)
