"""Idempotency keys: a claim while the request is processed, then the stored response.

A claim older than IN_FLIGHT_TIMEOUT is taken to be from a gateway that died
mid-request and may be claimed again; a completed key replays for RETENTION.
"""

from __future__ import annotations

import hmac
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import idempotency_keys
from herald_ledger.store.driver import in_transaction

IN_FLIGHT_TIMEOUT_S = 60
RETENTION_S = 24 * 3600


@dataclass(frozen=True)
class Claim:
    state: str  # new | in_flight | completed | mismatch
    status_code: int = 0
    body: bytes = b""


_CLAIM = text(
    """
    INSERT INTO idempotency_keys (tenant_id, key, request_hash, state)
    VALUES (:tenant_id, :key, :hash, 'in_flight')
    ON CONFLICT (tenant_id, key) DO UPDATE SET
        request_hash = EXCLUDED.request_hash, state = 'in_flight', status_code = NULL, body = NULL,
        created_at = now(), updated_at = now()
    WHERE (idempotency_keys.state = 'in_flight'
           AND idempotency_keys.updated_at < now() - make_interval(secs => :in_flight_s))
       OR idempotency_keys.created_at < now() - make_interval(secs => :retention_s)
    RETURNING state
    """
)


async def claim(conn: AsyncConnection, tenant_id: uuid.UUID, key: str, request_hash: bytes) -> Claim:
    params = {
        "tenant_id": tenant_id,
        "key": key,
        "hash": request_hash,
        "in_flight_s": IN_FLIGHT_TIMEOUT_S,
        "retention_s": RETENTION_S,
    }
    if (await conn.execute(_CLAIM, params)).first() is not None:
        return Claim("new")
    row = (
        await conn.execute(
            idempotency_keys.select().where(
                and_(idempotency_keys.c.tenant_id == tenant_id, idempotency_keys.c.key == key)
            )
        )
    ).one()
    if not hmac.compare_digest(bytes(row.request_hash), request_hash):
        return Claim("mismatch")
    if row.state == "in_flight":
        return Claim("in_flight")
    return Claim("completed", row.status_code or 0, bytes(row.body or b""))


async def complete(conn: AsyncConnection, tenant_id: uuid.UUID, key: str, status_code: int, body: bytes) -> None:
    await conn.execute(
        update(idempotency_keys)
        .where(and_(idempotency_keys.c.tenant_id == tenant_id, idempotency_keys.c.key == key))
        .values(state="completed", status_code=status_code, body=body, updated_at=text("now()"))
    )


async def abandon(conn: AsyncConnection, tenant_id: uuid.UUID, key: str) -> None:
    await conn.execute(
        delete(idempotency_keys).where(
            and_(
                idempotency_keys.c.tenant_id == tenant_id,
                idempotency_keys.c.key == key,
                idempotency_keys.c.state == "in_flight",
            )
        )
    )


async def complete_many(conn: AsyncConnection, completions: list[tuple[uuid.UUID, str, int, bytes]]) -> None:
    """Stores many responses in one statement."""
    if not completions:
        return
    tenants, keys, codes, bodies = zip(*completions, strict=True)
    await conn.execute(
        text(
            """
            UPDATE idempotency_keys SET state = 'completed', status_code = u.code, body = u.body, updated_at = now()
            FROM unnest(
                CAST(:tenants AS uuid[]), CAST(:keys AS text[]), CAST(:codes AS int[]), CAST(:bodies AS bytea[])
            ) AS u(tenant_id, key, code, body)
            WHERE idempotency_keys.tenant_id = u.tenant_id AND idempotency_keys.key = u.key
            """
        ),
        {"tenants": list(tenants), "keys": list(keys), "codes": list(codes), "bodies": list(bodies)},
    )


# ---- keys sent with a job: claimed in the job's own transaction ---------------------


@dataclass(frozen=True)
class KeyedDraft:
    """A draft's key as `claim_for_jobs` sees it."""

    tenant_id: uuid.UUID
    key: str
    request_hash: bytes
    job_id: uuid.UUID


@dataclass(frozen=True)
class EarlierUse:
    """What a key already names: a job to answer again (`job_id`), or why not (`mismatch`)."""

    job_id: uuid.UUID | None = None
    mismatch: str = ""
    # Held by a request of the claim-and-store protocol that has not finished.
    in_flight: bool = False
    # Another draft of the same batch carries the key first: this one shares its outcome.
    same_as: int | None = None


def claim_for_jobs_sql(first: int = 1) -> str:
    """The claim of keys sent with jobs, its six arguments numbered from `first` (so it can
    share a statement): the keys it claimed come back."""
    t, k, h, j, in_flight_s, retention_s = range(first, first + 6)
    return f"""
    INSERT INTO idempotency_keys (tenant_id, key, request_hash, state, status_code, job_id)
    SELECT t, k, h, 'job', 202, j
    FROM unnest(${t}::uuid[], ${k}::text[], ${h}::bytea[], ${j}::uuid[]) AS u(t, k, h, j)
    ON CONFLICT (tenant_id, key) DO UPDATE SET
        request_hash = EXCLUDED.request_hash, state = 'job', status_code = 202, body = NULL,
        job_id = EXCLUDED.job_id, created_at = now(), updated_at = now()
    WHERE (idempotency_keys.state = 'in_flight'
           AND idempotency_keys.updated_at < now() - make_interval(secs => ${in_flight_s}::float8))
       OR idempotency_keys.created_at < now() - make_interval(secs => ${retention_s}::float8)
    RETURNING tenant_id, key
    """  # noqa: S608 (argument numbers only)


# On the driver (prepared once per connection), in the caller's transaction.
_CLAIM_FOR_JOBS = claim_for_jobs_sql()

_EARLIER_USES = """
    SELECT i.tenant_id, i.key, i.request_hash, i.state, i.job_id
    FROM idempotency_keys i
    JOIN unnest($1::uuid[], $2::text[]) AS u(t, k) ON i.tenant_id = u.t AND i.key = u.k
"""

_RELEASE = """
    DELETE FROM idempotency_keys i
    USING unnest($1::uuid[], $2::text[]) AS u(t, k)
    WHERE i.tenant_id = u.t AND i.key = u.k AND i.state = 'job'
"""


@dataclass
class KeyClaims:
    """The keys sent with a batch's drafts, claimed for their (not yet written) jobs in the
    caller's transaction (`store.intake` sends the claim): the first draft of each key is
    claimed; a repeat of a key earlier in the batch shares that draft's outcome.

    `settle` then says, by draft index, which drafts must not create a job: a key another
    request used before (its job, or a mismatch when the request differed) or a repeat. A
    concurrent transaction claiming the same key makes this one wait on the key's row, then
    see its committed claim, so one key never yields two jobs. Call `release` for claimed
    drafts that end up refused."""

    drafts: dict[int, KeyedDraft]
    first: dict[tuple[uuid.UUID, str], int]
    earlier: dict[int, EarlierUse]

    @classmethod
    def of(cls, drafts: dict[int, KeyedDraft]) -> KeyClaims:
        earlier: dict[int, EarlierUse] = {}
        first: dict[tuple[uuid.UUID, str], int] = {}
        for index, draft in drafts.items():
            seen = first.get((draft.tenant_id, draft.key))
            if seen is None:
                first[(draft.tenant_id, draft.key)] = index
            elif hmac.compare_digest(drafts[seen].request_hash, draft.request_hash):
                earlier[index] = EarlierUse(same_as=seen)
            else:
                earlier[index] = EarlierUse(mismatch="the key was used with a different request body or route")
        return cls(drafts, first, earlier)

    def arguments(self) -> list[object]:
        """The claim's arguments, in the order `claim_for_jobs_sql` numbers them."""
        claiming = [self.drafts[i] for i in self.first.values()]
        return [
            [d.tenant_id for d in claiming],
            [d.key for d in claiming],
            [d.request_hash for d in claiming],
            [d.job_id for d in claiming],
            IN_FLIGHT_TIMEOUT_S,
            RETENTION_S,
        ]

    async def settle(self, driver: Any, claimed: set[tuple[uuid.UUID, str]]) -> dict[int, EarlierUse]:
        """After the claim (`claimed`: the keys it returned): by draft index, the drafts that must
        not create a job, with what their key names instead."""
        earlier = dict(self.earlier)
        taken = {pair: index for pair, index in self.first.items() if pair not in claimed}
        if not taken:
            return earlier
        for row in await driver.fetch(_EARLIER_USES, [t for t, _ in taken], [k for _, k in taken]):
            index = taken.pop((row["tenant_id"], row["key"]))
            if not hmac.compare_digest(bytes(row["request_hash"]), self.drafts[index].request_hash):
                earlier[index] = EarlierUse(mismatch="the key was used with a different request body or route")
            elif row["state"] != "job" or row["job_id"] is None:
                earlier[index] = EarlierUse(in_flight=True)
            else:
                earlier[index] = EarlierUse(job_id=row["job_id"])
        for index in taken.values():  # claimed by a transaction that has since let it go: never guess
            earlier[index] = EarlierUse(in_flight=True)
        return earlier


async def release(conn: AsyncConnection, pairs: list[tuple[uuid.UUID, str]]) -> None:
    """Drops keys claimed for drafts that were refused: nothing was written for them, so
    the client may send the same key again."""
    if pairs:
        await (await in_transaction(conn)).execute(_RELEASE, [t for t, _ in pairs], [k for _, k in pairs])
