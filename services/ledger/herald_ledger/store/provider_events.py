"""How a verified provider event moves the email job it belongs to.

A job the provider accepted is DELIVERED ("accepted"). Afterwards the provider tells us what became of it:

- `delivered` confirms: `provider_delivered_at` takes the earliest such report; the status stays.
- `bounced_hard` → BOUNCED, `complained` → COMPLAINED, with `last_error` saying which event and
  `status_event_id` naming it.
- everything else (deferred, bounced_soft, opened, clicked, unsubscribed, other) is only recorded.

Providers send events out of order and retry them, so the result must not depend on arrival order:

- nothing leads back to DELIVERED (a bounce is final for the recipient that bounced; a later "delivered" for
  another recipient does not undo it);
- between BOUNCED and COMPLAINED the newer event (by the provider's own time) decides, a tie going to the
  complaint; an older event arriving late changes nothing. The job therefore always shows its newest
  bounce-or-complaint, whatever order they came in;
- provider times are compared only with provider times, never with Herald's acceptance time (clocks differ,
  and SendGrid's timestamps are whole seconds).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.job_status import JobStatus, allowed_sources

# The provider event types that set a status, and how `last_error` words them.
STATUS_OF_EVENT: dict[str, tuple[JobStatus, str]] = {
    "bounced_hard": (JobStatus.BOUNCED, "hard bounce"),
    "complained": (JobStatus.COMPLAINED, "spam complaint"),
}

# A job moves from DELIVERED whatever the event's time; from a status a provider event set, only for a newer
# event (the same status too: the newest event is the one the job names), or for a complaint as new as the
# bounce it replaces.
_MOVE = text(
    """
    WITH current AS (
        SELECT id, status FROM jobs
        WHERE id = :job_id AND (
            status = 'DELIVERED'
            OR (status = ANY(:timed_sources) AND status_event_at < :at)
            OR (status = :tie_source AND status_event_at = :at)
        )
        FOR UPDATE
    ), changed AS (
        UPDATE jobs SET status = :target, status_event_at = :at, status_event_id = :event_ref,
            last_error = :reason, updated_at = now()
        FROM current WHERE jobs.id = current.id
        RETURNING jobs.id, current.status AS from_status
    ), logged AS (
        INSERT INTO job_events (job_id, from_status, to_status, reason)
        SELECT id, from_status, :target, :reason FROM changed WHERE from_status <> :target
    )
    SELECT from_status FROM changed
    """
)

# The earliest "delivered" report wins; any status the provider's acceptance can have led to.
_CONFIRM = text(
    """
    UPDATE jobs SET provider_delivered_at = :at
    WHERE id = :job_id AND status IN ('DELIVERED', 'BOUNCED', 'COMPLAINED')
      AND (provider_delivered_at IS NULL OR provider_delivered_at > :at)
    """
)


async def apply_provider_event(
    conn: AsyncConnection,
    job_id: uuid.UUID,
    event_type: str,
    event_ref: str,
    occurred_at: datetime,
    recipient: str,
) -> JobStatus | None:
    """Applies one first-seen provider event to its job (in the caller's transaction); returns the status the
    job moved to, or None when the event only is recorded (or is older than what already set the status)."""
    if event_type == "delivered":
        await conn.execute(_CONFIRM, {"job_id": job_id, "at": occurred_at})
        return None
    if event_type not in STATUS_OF_EVENT:
        return None
    target, words = STATUS_OF_EVENT[event_type]
    timed = (allowed_sources(target) - {JobStatus.DELIVERED}) | {target}
    tie_source = JobStatus.BOUNCED.value if target is JobStatus.COMPLAINED else None
    provider = event_ref.split(":", 1)[0]
    reason = f"{words} reported by {provider}" + (f" for {recipient}" if recipient else "") + f" ({event_ref})"
    moved = (
        await conn.execute(
            _MOVE,
            {
                "job_id": job_id,
                "timed_sources": sorted(s.value for s in timed),
                "tie_source": tie_source,
                "at": occurred_at,
                "target": target.value,
                "event_ref": event_ref,
                "reason": reason[:1000],
            },
        )
    ).first()
    return target if moved is not None else None
