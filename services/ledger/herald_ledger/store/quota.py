"""Quotas inside the job-creating transaction: the tenant enabled, its monthly quotas, the
sender domain and the suppression list, decided per draft, atomically with the rows they allow.

Each tenant's usage row for the month is locked (SELECT … FOR UPDATE) before
its drafts are counted, so concurrent requests queue on that lock and can never
overshoot the quota; a refused draft writes nothing. A draft to a suppressed
recipient is written as a SUPPRESSED job (the tenant can see why) and counts
against no quota: nothing was sent.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.plans import Limits, effective_limits
from herald_ledger.db.models import suppressions, tenants
from herald_ledger.store import domains, operational
from herald_ledger.store.codes import PLAN_TO_PROTO
from herald_ledger.store.driver import in_transaction
from herald_ledger.store.job_creation import NewJob
from herald_ledger.store.platform_email import PlatformMail, QuotaWarning, crossed, queue_quota_warnings
from herald_ledger.store.usage import UsageWrite

QUOTA_CHANNELS = {"webhook": "webhooks", "email": "emails"}
# The hot statements run on the driver (asyncpg prepares each once per connection), in
# the caller's transaction. The usual batch costs one statement before its decisions: the
# tenants' usage rows locked and, joined to them, the tenants' limits (CreateJobs sends it
# together with the idempotency claim, see `store.intake`).
_ENSURE_USAGE = (
    "INSERT INTO usage_counters (tenant_id, period) SELECT t, $2 FROM unnest($1::uuid[]) t ON CONFLICT DO NOTHING"
)


def lock_usage(tenants: int = 1, period: int = 2) -> str:
    """The lock, its two arguments numbered as given (so it can share a statement)."""
    return f"""
    SELECT u.tenant_id, u.webhooks, u.emails, t.plan, t.rate_per_min, t.webhooks_per_month, t.emails_per_month,
           t.disabled
    FROM usage_counters u JOIN tenants t ON t.id = u.tenant_id
    WHERE u.tenant_id = ANY(${tenants}::uuid[]) AND u.period = ${period}
    ORDER BY u.tenant_id FOR UPDATE OF u
    """  # noqa: S608 (argument numbers only)


_LOCK_ADMISSION = lock_usage()
# (tenant, period) pairs whose usage row this process has seen: the insert that makes
# sure the row exists is skipped for them. Bounded; forgetting only costs that insert.
_ENSURED: set[tuple[uuid.UUID, str]] = set()
_ENSURED_MAX = 100_000


@dataclass(frozen=True)
class LockedAdmission:
    """The tenants' usage rows, locked for the month, with what admission reads of them."""

    period: str
    limits: dict[uuid.UUID, Limits]
    disabled: set[uuid.UUID]
    rows: dict[uuid.UUID, Any]


@dataclass
class Verdict:
    job: NewJob | None
    rejection: str = ""
    suppressed: str = ""
    # Why it was refused: "quota", "sender_domain" or "tenant_disabled".
    rejection_kind: str = ""


def from_domain(job: NewJob) -> str:
    """The from-address's domain, lower-cased, for email jobs; "" otherwise."""
    if job.channel != "email":
        return ""
    sender = job.request.get("from") or {}
    return str(sender.get("email", "")).rpartition("@")[2].strip().lower()


def current_period(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y-%m")


def recipients(job: NewJob) -> list[str]:
    if job.channel not in ("email", "platform_email"):
        return []
    request = job.request
    return [
        str(entry.get("email", "")).strip().lower()
        for field in ("to", "cc", "bcc")
        for entry in request.get(field, []) or []
        if entry.get("email")
    ]


async def tenant_limits(conn: AsyncConnection, tenant_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Limits]:
    return (await tenant_admission(conn, tenant_ids))[0]


async def tenant_admission(
    conn: AsyncConnection, tenant_ids: Sequence[uuid.UUID]
) -> tuple[dict[uuid.UUID, Limits], set[uuid.UUID]]:
    """Each tenant's limits, and which of them are disabled, from one read."""
    rows = (await conn.execute(select(tenants).where(tenants.c.id.in_(tenant_ids)))).all()
    limits = {
        row.id: effective_limits(
            PLAN_TO_PROTO[row.plan], row.rate_per_min, row.webhooks_per_month, row.emails_per_month
        )
        for row in rows
    }
    return limits, {row.id for row in rows if row.disabled}


async def lock_admission(conn: AsyncConnection, tenant_ids: Sequence[uuid.UUID], period: str) -> LockedAdmission:
    """Locks each tenant's counters for the month, in a fixed order so two transactions
    admitting for the same tenants cannot deadlock, and reads the tenants' limits in the
    same statement. The rows are made sure to exist first (one insert, also in that order)
    unless this process has seen them all; a tenant with no row then is unknown (or was
    deleted)."""
    ordered = sorted(set(tenant_ids))
    driver = await in_transaction(conn)
    unseen = await ensure_usage_rows(driver, ordered, period)
    return await admission_locked(driver, ordered, unseen, period, await driver.fetch(_LOCK_ADMISSION, ordered, period))


async def ensure_usage_rows(driver: Any, ordered: list[uuid.UUID], period: str) -> list[uuid.UUID]:
    """Before the lock: the usage rows this process has not seen, inserted if missing (a
    statement's own insert is not visible to a lock in the same statement). Returns them."""
    unseen = [t for t in ordered if (t, period) not in _ENSURED]
    if unseen:
        await driver.execute(_ENSURE_USAGE, ordered, period)
    return unseen


async def admission_locked(
    driver: Any, ordered: list[uuid.UUID], unseen: list[uuid.UUID], period: str, locked_rows: Sequence[Any]
) -> LockedAdmission:
    """What the lock's rows say (`locked_rows`, of `lock_usage`); a tenant seen before whose row
    is gone now (a test's truncation, a deleted usage row) takes the long way here."""
    rows = {row["tenant_id"]: row for row in locked_rows}
    missing = [t for t in ordered if t not in rows and t not in unseen]
    if missing:
        _ENSURED.difference_update((t, period) for t in missing)
        await driver.execute(_ENSURE_USAGE, missing, period)
        rows.update({row["tenant_id"]: row for row in await driver.fetch(_LOCK_ADMISSION, missing, period)})
    if len(_ENSURED) > _ENSURED_MAX:
        _ENSURED.clear()
    _ENSURED.update((t, period) for t in rows)
    limits = {
        t: effective_limits(
            PLAN_TO_PROTO[row["plan"]], row["rate_per_min"], row["webhooks_per_month"], row["emails_per_month"]
        )
        for t, row in rows.items()
    }
    return LockedAdmission(period, limits, {t for t, row in rows.items() if row["disabled"]}, rows)


async def suppressed_addresses(conn: AsyncConnection, jobs: Sequence[NewJob]) -> dict[uuid.UUID, dict[str, str]]:
    wanted: dict[uuid.UUID, set[str]] = {}
    for job in jobs:
        wanted.setdefault(job.tenant_id, set()).update(recipients(job))
    found: dict[uuid.UUID, dict[str, str]] = {}
    for tenant_id, addresses in wanted.items():
        if not addresses:
            continue
        query = select(suppressions.c.address, suppressions.c.reason).where(
            and_(suppressions.c.tenant_id == tenant_id, suppressions.c.address.in_(sorted(addresses)))
        )
        found[tenant_id] = {row.address: row.reason for row in (await conn.execute(query)).all()}
    return found


def room_for(limits: Limits, used: dict[str, int], channel: str) -> str:
    """Empty when one more job of `channel` fits; else why not."""
    counter = QUOTA_CHANNELS.get(channel)
    if counter is None:
        return ""
    if limits.shared_allowance is not None and used["webhooks"] + used["emails"] + 1 > limits.shared_allowance:
        return f"monthly quota of {limits.shared_allowance} emails and webhooks reached"
    limit = limits.webhooks_per_month if counter == "webhooks" else limits.emails_per_month
    if limit is not None and used[counter] + 1 > limit:
        return f"monthly quota of {limit} {counter} reached"
    return ""


async def admit(
    conn: AsyncConnection, jobs: Sequence[NewJob], platform: PlatformMail | None = None
) -> tuple[list[Verdict], UsageWrite | None]:
    """Locks the tenants' counters and decides every draft (see `decide`); the caller writes the
    admitted jobs and the counters in the same transaction (`job_creation.insert_jobs`)."""
    if not jobs:
        return [], None
    locked = await lock_admission(conn, [j.tenant_id for j in jobs], current_period())
    return await decide(conn, jobs, locked, platform)


async def decide(
    conn: AsyncConnection, jobs: Sequence[NewJob], locked: LockedAdmission, platform: PlatformMail | None = None
) -> tuple[list[Verdict], UsageWrite | None]:
    """Decides every draft, its tenant's counters locked (`locked`: every tenant of `jobs`,
    others allowed); returns the verdicts and the counters to write with the admitted jobs.

    In order: a disabled tenant's webhooks and emails are refused (nothing written), whatever
    path they came by (HTTP, gRPC unary or stream, an event's fan-out): the gateway's check at
    authentication can be stale by a cache TTL or a long stream, this one is in the transaction;
    an email from a registered but unverified sending domain is refused (nothing
    written; a from-domain the tenant never registered is allowed: providers enforce their
    own sender identity); a suppressed recipient writes the job as SUPPRESSED; then the
    quota. Usage reaching 80 % or 100 % of a limit queues a warning (platform email) and the
    tenant's operational event (herald.quota.warning / herald.quota.exhausted)."""
    if not jobs:
        return [], None
    limits, disabled, period = locked.limits, locked.disabled, locked.period
    used = {t: {"webhooks": int(row["webhooks"]), "emails": int(row["emails"])} for t, row in locked.rows.items()}
    before = {t: dict(counts) for t, counts in used.items()}
    refused_for_quota: set[uuid.UUID] = set()
    blocked = await suppressed_addresses(conn, jobs)
    unverified = await domains.unverified(conn, [(j.tenant_id, d) for j in jobs if (d := from_domain(j))])
    verdicts: list[Verdict] = []
    for job in jobs:
        if job.tenant_id in disabled and job.channel in QUOTA_CHANNELS:
            verdicts.append(Verdict(None, rejection="the tenant is disabled", rejection_kind="tenant_disabled"))
            continue
        domain = from_domain(job)
        if domain and (job.tenant_id, domain) in unverified:
            why = (
                f"the sending domain {domain} is registered but not verified yet: publish its DNS records, "
                "then POST /v1/domains/{id}/verify"
            )
            verdicts.append(Verdict(None, rejection=why, rejection_kind="sender_domain"))
            continue
        hits = [a for a in recipients(job) if a in blocked.get(job.tenant_id, {})]
        if hits:
            reasons = blocked[job.tenant_id]
            why = "suppressed recipients: " + ", ".join(f"{a} ({reasons[a]})" for a in hits)
            verdicts.append(Verdict(job, suppressed=why))
            continue
        tenant_limits_ = limits.get(job.tenant_id)
        if tenant_limits_ is None:
            verdicts.append(Verdict(None, rejection="unknown tenant", rejection_kind="quota"))
            continue
        refusal = room_for(tenant_limits_, used[job.tenant_id], job.channel)
        if refusal:
            refused_for_quota.add(job.tenant_id)
            verdicts.append(Verdict(None, rejection=refusal, rejection_kind="quota"))
            continue
        counter = QUOTA_CHANNELS.get(job.channel)
        if counter is not None:
            used[job.tenant_id][counter] += 1
        verdicts.append(Verdict(job))
    changed = [(t, counts) for t, counts in used.items() if counts != before[t]]
    usage = None
    if changed:
        # One statement for every tenant of the batch (a batch spans many tenants).
        usage = UsageWrite(
            period, [t for t, _ in changed], [c["webhooks"] for _, c in changed], [c["emails"] for _, c in changed]
        )
    warnings = [
        QuotaWarning(tenant_id, counter, threshold, after, limit, period)
        for tenant_id, tenant_limits_ in limits.items()
        if tenant_id in used
        for counter, was, after, limit in _metered(tenant_limits_, before[tenant_id], used[tenant_id])
        if limit is not None
        for threshold in crossed(counter, was, after, limit, tenant_id in refused_for_quota)
    ]
    await queue_quota_warnings(conn, warnings, platform)
    await operational.record_quota(conn, warnings)  # herald.quota.warning / .exhausted
    return verdicts, usage


async def note_refused_fan_out(
    conn: AsyncConnection, tenant_id: uuid.UUID, channel: str, needed: int, platform: PlatformMail | None = None
) -> None:
    """An event refused whole for quota: its transaction rolled back, and with it what
    `decide` queued, so the tenant is told here (herald.quota.exhausted and the platform
    email, once a month per limit like any threshold), with usage as it stands: the fan-out
    needed `needed` more than the limit had room for."""
    locked = await lock_admission(conn, [tenant_id], current_period())
    limits, row = locked.limits.get(tenant_id), locked.rows.get(tenant_id)
    counter = QUOTA_CHANNELS.get(channel)
    if limits is None or row is None or counter is None:
        return
    used = {"webhooks": int(row["webhooks"]), "emails": int(row["emails"])}
    wanted = {**used, counter: used[counter] + needed}
    warnings = [
        QuotaWarning(tenant_id, name, 100, was, limit, locked.period)
        for name, was, want, limit in _metered(limits, used, wanted)
        if limit is not None and want > limit
    ]
    await queue_quota_warnings(conn, warnings, platform)
    # Past this process's memory of written keys: the rolled-back attempt may have noted them.
    await operational.record(conn, operational.quota_events(warnings, remembered=False))


def _metered(limits: Limits, before: dict[str, int], after: dict[str, int]) -> list[tuple[str, int, int, int | None]]:
    """(counter, usage before, usage after, limit) for each limit the tenant has."""
    return [
        ("shared", before["webhooks"] + before["emails"], after["webhooks"] + after["emails"], limits.shared_allowance),
        ("webhooks", before["webhooks"], after["webhooks"], limits.webhooks_per_month),
        ("emails", before["emails"], after["emails"], limits.emails_per_month),
    ]
