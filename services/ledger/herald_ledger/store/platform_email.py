"""Herald's own mail (platform email): written here as jobs of channel "platform_email"
(always CRITICAL) with a row in the platform email log, inside the transaction that
decided to send them. The router's outbox publishes them like any PENDING job; the
email-sender delivers them through the platform provider configured in settings.

Three kinds:
- Quota warnings: when admission takes a tenant's monthly usage to 80 % or 100 % of a
  limit (or refuses a job for quota), the tenant's contact address gets one email per
  limit, threshold and month; the log's unique `dedupe_key` makes that a constraint.
- Key-created notices: a new API key (its name and public prefix, never the secret) is
  announced to the tenant's contact address in the transaction that stores the key.
- Dead-letter alerts to operators (`HERALD_ALERT_EMAIL_TO`): the senders' rate-limited
  alerter asks for them (`QueueOperatorEmail`). They concern no tenant, so they are jobs of
  the platform's own tenant (`PLATFORM_TENANT_ID`, disabled, no keys, hidden from tenant
  listings): a tenant never sees another tenant's job ids in its own job list.
A tenant without a contact address gets no mail (logged)."""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Any

from sqlalchemy import and_, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.crypto import API_KEY_PREFIX
from herald_ledger.db.models import jobs as jobs_table
from herald_ledger.db.models import platform_emails, tenants
from herald_ledger.store.job_creation import NewJob, create_jobs

log = logging.getLogger("herald.ledger.platform_email")

THRESHOLDS = (80, 100)
# The tenant that owns Herald's mail to operators (dead-letter alerts): a fixed id, created
# on first use, disabled (no key can act as it) and left out of tenant listings.
PLATFORM_TENANT_ID = uuid.UUID(int=0)
PLATFORM_TENANT_NAME = "Herald platform (operator mail)"
KINDS = ("quota_warning_80", "quota_warning_100", "dlq_alert", "api_key_created")
COUNTER_WORDS = {"shared": "emails and webhooks", "webhooks": "webhooks", "emails": "emails"}


@dataclass(frozen=True)
class PlatformMail:
    """Where Herald's own mail comes from (settings: HERALD_PLATFORM_EMAIL_FROM)."""

    from_address: str

    def sender(self) -> dict[str, str]:
        name, email = parseaddr(self.from_address)
        return {"email": email, "name": name} if name else {"email": email}


@dataclass(frozen=True)
class QuotaWarning:
    tenant_id: uuid.UUID
    # "shared" (FREE: emails and webhooks together), "webhooks" or "emails"
    counter: str
    threshold: int
    used: int
    limit: int
    period: str

    @property
    def dedupe_key(self) -> str:
        return f"quota:{self.tenant_id}:{self.period}:{self.counter}:{self.threshold}"


def crossed(counter: str, before: int, after: int, limit: int | None, refused: bool) -> list[int]:
    """The thresholds this admission reached: usage went from below a threshold to at or
    above it, or (100 %) a job was refused because the limit is reached."""
    if limit is None or limit <= 0:
        return []
    reached = []
    for threshold in THRESHOLDS:
        mark = math.ceil(limit * threshold / 100)
        if before < mark <= after or (threshold == 100 and refused and after >= limit):
            reached.append(threshold)
    return reached


async def queue_quota_warnings(
    conn: AsyncConnection, warnings: Sequence[QuotaWarning], platform: PlatformMail | None
) -> int:
    """Writes the warnings not sent yet this month; returns how many were written."""
    if not warnings:
        return 0
    if platform is None:
        log.info("quota thresholds reached; no platform email provider configured", extra={"count": len(warnings)})
        return 0
    keys = [w.dedupe_key for w in warnings]
    sent = set(
        (
            await conn.execute(select(platform_emails.c.dedupe_key).where(platform_emails.c.dedupe_key.in_(keys)))
        ).scalars()
    )
    todo = [w for w in {w.dedupe_key: w for w in warnings}.values() if w.dedupe_key not in sent]
    if not todo:
        return 0
    found = await conn.execute(
        select(tenants.c.id, tenants.c.name, tenants.c.contact_email).where(
            tenants.c.id.in_({w.tenant_id for w in todo})
        )
    )
    contacts = {row.id: row for row in found.all()}
    jobs: list[NewJob] = []
    logged = []
    for warning in todo:
        tenant = contacts.get(warning.tenant_id)
        if tenant is None or not tenant.contact_email:
            log.info(
                "quota threshold reached; the tenant has no contact address",
                extra={"tenant_id": str(warning.tenant_id), "threshold": warning.threshold},
            )
            continue
        subject, text = compose(tenant.name, warning)
        job = NewJob(
            tenant_id=warning.tenant_id,
            channel="platform_email",
            priority="critical",
            request={
                "from": platform.sender(),
                "to": [{"email": tenant.contact_email}],
                "subject": subject,
                "text": text,
                "tags": ["herald-quota-warning"],
            },
            body=b"",
        )
        jobs.append(job)
        logged.append(
            {
                "id": job.id,
                "tenant_id": warning.tenant_id,
                "kind": f"quota_warning_{warning.threshold}",
                "dedupe_key": warning.dedupe_key,
                "recipient": tenant.contact_email,
                "subject": subject,
            }
        )
    if jobs:
        await create_jobs(conn, jobs)
        await conn.execute(insert(platform_emails), logged)
    return len(jobs)


def compose(tenant_name: str, warning: QuotaWarning) -> tuple[str, str]:
    what = COUNTER_WORDS.get(warning.counter, warning.counter)
    if warning.threshold >= 100:
        subject = f"Herald: {tenant_name} has reached its monthly limit of {warning.limit} {what}"
        tail = "Further requests are refused until the month ends or the limit is raised."
    else:
        subject = f"Herald: {tenant_name} has used {warning.threshold}% of its monthly {what}"
        tail = "Requests beyond the limit will be refused until the month ends or the limit is raised."
    text = (
        f"Hello,\n\n{tenant_name} has used {warning.used} of its {warning.limit} {what} for {warning.period} (UTC).\n"
        f"{tail}\n\n— Herald\n"
    )
    return subject, text


def _job(tenant_id: uuid.UUID, platform: PlatformMail, to: Sequence[str], subject: str, text: str, tag: str) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel="platform_email",
        priority="critical",
        request={
            "from": platform.sender(),
            "to": [{"email": address} for address in to],
            "subject": subject,
            "text": text,
            "tags": [tag],
        },
        body=b"",
    )


async def queue_key_created(
    conn: AsyncConnection,
    platform: PlatformMail | None,
    tenant_id: uuid.UUID,
    key_id: uuid.UUID,
    key_name: str,
    public_id: str,
) -> bool:
    """Tells the tenant's contact address that an API key was created: its name and public
    prefix, never the secret (Herald does not have it). True when a notice was written."""
    if platform is None:
        return False
    tenant = (
        await conn.execute(select(tenants.c.name, tenants.c.contact_email).where(tenants.c.id == tenant_id))
    ).first()
    if tenant is None or not tenant.contact_email:
        log.info("API key created; the tenant has no contact address", extra={"tenant_id": str(tenant_id)})
        return False
    prefix = f"{API_KEY_PREFIX}{public_id}_"
    subject = f"Herald: a new API key was created for {tenant.name}"
    text = (
        f"Hello,\n\nA new API key was created for {tenant.name}:\n\n"
        f"  name:   {key_name}\n  prefix: {prefix}…\n\n"
        "The key itself is shown only to whoever created it; Herald does not keep it.\n"
        "If you did not expect this key, revoke it (DELETE /v1/api-keys/{id}) and tell your operator.\n\n— Herald\n"
    )
    job = _job(tenant_id, platform, [tenant.contact_email], subject, text, "herald-api-key-created")
    await create_jobs(conn, [job])
    await conn.execute(
        insert(platform_emails).values(
            id=job.id,
            tenant_id=tenant_id,
            kind="api_key_created",
            dedupe_key=f"api_key_created:{key_id}",
            recipient=tenant.contact_email,
            subject=subject,
        )
    )
    return True


async def ensure_platform_tenant(conn: AsyncConnection) -> None:
    await conn.execute(
        pg_insert(tenants)
        .values(id=PLATFORM_TENANT_ID, name=PLATFORM_TENANT_NAME, plan="startup", disabled=True)
        .on_conflict_do_nothing(index_elements=[tenants.c.id])
    )


async def queue_operator_email(
    conn: AsyncConnection,
    platform: PlatformMail,
    kind: str,
    to: Sequence[str],
    subject: str,
    text: str,
    dedupe_key: str,
) -> uuid.UUID | None:
    """Writes one operator email (a job of the platform tenant and its log row); None when
    `dedupe_key` was queued before (a sender that asks twice sends one mail)."""
    seen = await conn.execute(select(platform_emails.c.id).where(platform_emails.c.dedupe_key == dedupe_key))
    if seen.first() is not None:
        return None
    await ensure_platform_tenant(conn)
    job = _job(PLATFORM_TENANT_ID, platform, to, subject, text, f"herald-{kind.replace('_', '-')}")
    await create_jobs(conn, [job])
    await conn.execute(
        insert(platform_emails).values(
            id=job.id,
            tenant_id=PLATFORM_TENANT_ID,
            kind=kind,
            dedupe_key=dedupe_key,
            recipient=", ".join(to),
            subject=subject,
        )
    )
    return job.id


async def list_platform_emails(
    conn: AsyncConnection, tenant_id: uuid.UUID | None, kind: str, page_size: int, before: uuid.UUID | None
) -> tuple[list[Row[Any]], str]:
    """The log, newest first (ids are UUIDv7: creation order), with the carrying job's
    status and attempts; `before` is the last id of the previous page."""
    query = (
        select(
            platform_emails,
            jobs_table.c.attempt_count.label("attempts"),
            jobs_table.c.status.label("job_status"),
        )
        .join(jobs_table, jobs_table.c.id == platform_emails.c.id)
        .order_by(platform_emails.c.id.desc())
        .limit(page_size + 1)
    )
    conditions = []
    if tenant_id is not None:
        conditions.append(platform_emails.c.tenant_id == tenant_id)
    if kind:
        conditions.append(platform_emails.c.kind == kind)
    if before is not None:
        conditions.append(platform_emails.c.id < before)
    if conditions:
        query = query.where(and_(*conditions))
    rows = list((await conn.execute(query)).all())
    next_cursor = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_cursor
