"""Idempotency-Key handling, shared by HTTP and gRPC.

Routes that create a job (a webhook, an email) send the key with the job: the
ledger writes both in one transaction (see `request_hash`). Every other tenant
POST goes through the claim-and-store protocol below.

Before the work: claim the key in the ledger (with a hash of the request). A key
done before replays its stored response; one in progress answers 409; one used for
a different request answers 422. After the work: store the response (2xx-4xx), or
release the claim (5xx, crash) so the client can retry.

Responses that carry a shown-once secret (`SHOWN_ONCE`: a new API key, a new or rotated
webhook signing secret) are stored without it: a key shown once is never kept, not even
in the idempotency table. A replay of such a request answers 409 `secret-not-replayed`,
with what was created (its id, its status) but not the secret: the client that lost the
first answer revokes or rotates and asks again. Rows are deleted once their 24 hours are
over (the ledger's maintenance loop).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import grpc
import orjson

from herald.batching import Batcher
from herald.grpcio.ledger import Ledger
from herald.v1 import ledger_jobs_pb2
from herald_gateway.errors import IdempotencyConflict, IdempotencyMismatch, Invalid, Unavailable

MAX_KEY_LENGTH = 255

# POST routes whose answer carries a secret shown once, and the field holding it.
SHOWN_ONCE = {
    "/v1/api-keys": "api_key",
    "/v1/webhook-secret": "secret",
    "/v1/webhook-secret/rotate": "secret",
}
# What a replay of those tells the client to do instead.
SHOWN_ONCE_ADVICE = {
    "/v1/api-keys": "revoke that key (DELETE /v1/api-keys/{id}) if it was lost, and create another",
    "/v1/webhook-secret": "rotate it (POST /v1/webhook-secret/rotate) if it was lost",
    "/v1/webhook-secret/rotate": "rotate again (POST /v1/webhook-secret/rotate) if it was lost",
}
# A target's rotation answers its new key: not kept either (GET .../secret reads it again).
TARGET_ROTATION = re.compile(r"/v1/webhooks/targets/[^/]+/secret/rotate")
TARGET_ROTATION_ADVICE = "read the target's secret again (GET /v1/webhooks/targets/{id}/secret)"


def shown_once(path: str) -> tuple[str, str] | None:
    """(the field holding the secret, the advice to a replay) for a route that shows one."""
    if path in SHOWN_ONCE:
        return SHOWN_ONCE[path], SHOWN_ONCE_ADVICE[path]
    if TARGET_ROTATION.fullmatch(path):
        return "key", TARGET_ROTATION_ADVICE
    return None


def without_secret(path: str, status_code: int, body: bytes) -> bytes:
    """The body to store for replay: as answered, except a shown-once secret, which is dropped
    (a body that is not the JSON object expected is not stored at all)."""
    found = shown_once(path)
    if found is None or status_code >= 300:
        return body
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return b""
    if not isinstance(answer, dict):
        return b""
    answer.pop(found[0], None)
    return orjson.dumps(answer)


def withheld_secret(path: str, replay: Replay) -> dict[str, Any] | None:
    """For a replay of a shown-once answer: the problem's members (detail, what was created);
    None for every other replay, which answers as stored."""
    found = shown_once(path)
    if found is None or replay.status_code >= 300:
        return None
    try:
        created = orjson.loads(replay.body) if replay.body else None
    except orjson.JSONDecodeError:
        created = None
    detail = (
        "the first request with this Idempotency-Key succeeded and its secret was shown once, in that answer; "
        f"Herald does not keep it: {found[1]}"
    )
    return {"detail": detail, "created": created}


@dataclass(frozen=True)
class Replay:
    status_code: int
    body: bytes


def check_idempotency_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise Invalid([("Idempotency-Key", f"must be 1-{MAX_KEY_LENGTH} printable characters")])


def request_hash(method: str, route: str, body: bytes) -> bytes:
    return hashlib.sha256(method.encode() + b" " + route.encode() + b"\n" + body).digest()


class Idempotency:
    """Claims and completions of concurrent requests are coalesced: one ledger call and
    one transaction for many keys (profiled: two transactions per request before)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.claims: Batcher[ledger_jobs_pb2.IdempotencyClaim, ledger_jobs_pb2.IdempotencyClaimResult] = Batcher(
            self._claim_many, max_items=256, max_concurrent=2
        )
        self.completions: Batcher[ledger_jobs_pb2.IdempotencyCompletion, None] = Batcher(
            self._complete_many, max_items=256, max_concurrent=2
        )

    async def _claim_many(
        self, claims: list[ledger_jobs_pb2.IdempotencyClaim]
    ) -> list[ledger_jobs_pb2.IdempotencyClaimResult]:
        found = await self.ledger.jobs.ClaimIdempotencyKeys(ledger_jobs_pb2.ClaimIdempotencyKeysRequest(claims=claims))
        return list(found.results)

    async def _complete_many(self, completions: list[ledger_jobs_pb2.IdempotencyCompletion]) -> list[None]:
        await self.ledger.jobs.CompleteIdempotencyKeys(
            ledger_jobs_pb2.CompleteIdempotencyKeysRequest(completions=completions)
        )
        return [None] * len(completions)

    async def begin(self, tenant_id: str, key: str, digest: bytes) -> Replay | None:
        """None: the caller owns the key now and must `complete` or `abandon` it."""
        check_idempotency_key(key)
        try:
            claim = await self.claims.submit(
                ledger_jobs_pb2.IdempotencyClaim(tenant_id=tenant_id, key=key, request_hash=digest)
            )
        except grpc.aio.AioRpcError as error:
            raise Unavailable("idempotency keys cannot be checked right now; retry shortly") from error
        if claim.state == ledger_jobs_pb2.IDEMPOTENCY_STATE_NEW:
            return None
        if claim.state == ledger_jobs_pb2.IDEMPOTENCY_STATE_IN_FLIGHT:
            raise IdempotencyConflict("the first request with this key has not finished; retry shortly")
        if claim.state == ledger_jobs_pb2.IDEMPOTENCY_STATE_MISMATCH:
            raise IdempotencyMismatch("the key was used with a different request body or route")
        return Replay(claim.status_code, claim.body)

    async def complete(self, tenant_id: str, key: str, status_code: int, body: bytes) -> None:
        await self.completions.submit(
            ledger_jobs_pb2.IdempotencyCompletion(tenant_id=tenant_id, key=key, status_code=status_code, body=body)
        )

    async def abandon(self, tenant_id: str, key: str) -> None:
        try:
            await self.ledger.jobs.AbandonIdempotent(
                ledger_jobs_pb2.AbandonIdempotentRequest(tenant_id=tenant_id, key=key)
            )
        except grpc.aio.AioRpcError:
            pass  # the claim expires on its own after a minute
