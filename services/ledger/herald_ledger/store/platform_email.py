"""Herald's own mail (platform email): written here as jobs of channel "platform_email"
(always CRITICAL) with a row in the platform email log, inside the transaction that
decided to send them. The router's outbox publishes them like any PENDING job; the
email-sender delivers them through the platform provider configured in settings.

Quota warnings: when admission takes a tenant's monthly usage to 80 % or 100 % of a
limit (or refuses a job for quota), the tenant's contact address gets one email per
limit, threshold and month; the log's unique `dedupe_key` makes that a constraint.
A tenant without a contact address gets none (logged)."""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import parseaddr

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import platform_emails, tenants
from herald_ledger.store.jobs import NewJob, create_jobs

log = logging.getLogger("herald.ledger.platform_email")

THRESHOLDS = (80, 100)
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
