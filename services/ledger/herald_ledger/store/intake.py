"""The first statement of a CreateJobs transaction: the drafts' idempotency keys claimed
(`store.idempotency`) and their tenants' usage rows locked for admission (`store.quota`),
sent together, one round trip where they were two.

Both run in the statement the way they ran one after the other: the claim's rows come first
(the outer query reads its CTE first, so a key another transaction holds is waited for before
any usage row is locked, as before), then the usage rows, locked in tenant order. The usage
rows this process has not seen are inserted by a statement of their own before it (a
statement does not see its own inserts)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.store import quota
from herald_ledger.store.driver import in_transaction
from herald_ledger.store.idempotency import EarlierUse, KeyClaims, KeyedDraft, claim_for_jobs_sql

# Rows of both kinds in one result: a claimed key has `key` set, a locked usage row has not.
_CLAIM_AND_LOCK = f"""
    WITH claimed AS ({claim_for_jobs_sql(first=1)}),
    locked AS ({quota.lock_usage(tenants=7, period=8)})
    SELECT tenant_id, key, NULL::bigint AS webhooks, NULL::bigint AS emails, NULL::text AS plan,
           NULL::integer AS rate_per_min, NULL::integer AS webhooks_per_month, NULL::integer AS emails_per_month,
           NULL::boolean AS disabled
    FROM claimed
    UNION ALL
    SELECT tenant_id, NULL, webhooks, emails, plan, rate_per_min, webhooks_per_month, emails_per_month, disabled
    FROM locked
"""  # noqa: S608 (constant statements only)


async def claim_keys_and_lock_usage(
    conn: AsyncConnection, drafts: dict[int, KeyedDraft], tenant_ids: Sequence[uuid.UUID], period: str
) -> tuple[dict[int, EarlierUse], quota.LockedAdmission]:
    """Claims the drafts' keys and locks the counters of `tenant_ids` (every tenant of the
    batch: a tenant whose drafts all turn out to be repeats is locked for nothing, harmlessly).
    Returns the drafts that must not create a job (see `KeyClaims`) and the locked admission."""
    claims = KeyClaims.of(drafts)
    if not claims.first:
        return claims.earlier, await quota.lock_admission(conn, tenant_ids, period)
    ordered = sorted(set(tenant_ids))
    driver = await in_transaction(conn)
    unseen = await quota.ensure_usage_rows(driver, ordered, period)
    rows = await driver.fetch(_CLAIM_AND_LOCK, *claims.arguments(), ordered, period)
    claimed = {(row["tenant_id"], row["key"]) for row in rows if row["key"] is not None}
    locked = await quota.admission_locked(driver, ordered, unseen, period, [row for row in rows if row["key"] is None])
    return await claims.settle(driver, claimed), locked
