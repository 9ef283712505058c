"""The one place that says which job status may follow which.

Every status change in the ledger is an UPDATE guarded by `allowed_sources(target)`,
so a transition this table does not list cannot happen, whoever asks for it.
"""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    PENDING = "PENDING"
    QUEUED = "QUEUED"
    DELIVERING = "DELIVERING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"
    # Created so at admission (a suppressed recipient); never reached by a transition.
    SUPPRESSED = "SUPPRESSED"
    # Email the provider accepted, then reported as hard-bounced / marked as spam by a recipient: reached only
    # by verified provider events (`herald_ledger.store.provider_events`), never by a sender.
    BOUNCED = "BOUNCED"
    COMPLAINED = "COMPLAINED"
    # An event's delivery not attempted (its subscription paused, its target disabled): created so by the
    # fan-out, left only by a recovery of the target (to PENDING). Never counted against the quota.
    SKIPPED = "SKIPPED"


TERMINAL = frozenset(
    {
        JobStatus.DELIVERED,
        JobStatus.FAILED,
        JobStatus.SUPPRESSED,
        JobStatus.BOUNCED,
        JobStatus.COMPLAINED,
        JobStatus.SKIPPED,
    }
)

# target -> the statuses it may be reached from
_SOURCES: dict[JobStatus, frozenset[JobStatus]] = {
    # Only an explicit retry of a failed job, or a target's recovery of a skipped one.
    JobStatus.PENDING: frozenset({JobStatus.FAILED, JobStatus.SKIPPED}),
    # The outbox's republish was acknowledged (PENDING); or a retry was scheduled after an
    # attempt (from whatever status the job was being delivered in: QUEUED stays QUEUED
    # with one more attempt counted).
    JobStatus.QUEUED: frozenset({JobStatus.PENDING, JobStatus.QUEUED, JobStatus.DELIVERING}),
    # The statuses a sender may start from (PENDING: the message overtook its own "queued"
    # mark; DELIVERING: a redelivery after the previous sender died mid-call). A start
    # writes nothing: rows no longer reach DELIVERING, readers see it derived from what the
    # ledger knows in flight (herald_ledger.inflight). Kept as a source for older rows.
    JobStatus.DELIVERING: frozenset({JobStatus.PENDING, JobStatus.QUEUED, JobStatus.DELIVERING}),
    # From any status a sender delivers in. QUEUED also covers two copies of one work
    # message run at once (a redelivery after a bus restart) where the other copy's retry
    # was recorded first: the success still ends the job.
    JobStatus.DELIVERED: frozenset({JobStatus.PENDING, JobStatus.QUEUED, JobStatus.DELIVERING}),
    # An attempt failed for good (QUEUED: as for DELIVERED, a concurrent copy's retry came
    # first); or the bus never took the job within the bound. Never from DELIVERED.
    JobStatus.FAILED: frozenset({JobStatus.DELIVERING, JobStatus.QUEUED, JobStatus.PENDING}),
    JobStatus.SUPPRESSED: frozenset(),
    JobStatus.SKIPPED: frozenset(),
    # Provider events. Between the two, the newer event decides (ties: the complaint), which the provider-event
    # update checks on top of this table; nothing ever leads back to DELIVERED.
    JobStatus.BOUNCED: frozenset({JobStatus.DELIVERED, JobStatus.COMPLAINED}),
    JobStatus.COMPLAINED: frozenset({JobStatus.DELIVERED, JobStatus.BOUNCED}),
}


def allowed_sources(target: JobStatus) -> frozenset[JobStatus]:
    return _SOURCES[target]


def may_transition(source: JobStatus, target: JobStatus) -> bool:
    return source in _SOURCES[target]
