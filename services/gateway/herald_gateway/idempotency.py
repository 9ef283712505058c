"""Idempotency-Key handling, shared by HTTP and gRPC.

Routes that create a job (a webhook, an email) send the key with the job: the
ledger writes both in one transaction (see `request_hash`). Every other tenant
POST goes through the claim-and-store protocol below.

Before the work: claim the key in the ledger (with a hash of the request). A key
done before replays its stored response; one in progress answers 409; one used for
a different request answers 422. After the work: store the response (2xx-4xx), or
release the claim (5xx, crash) so the client can retry.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import grpc

from herald.batching import Batcher
from herald.v1 import ledger_pb2, ledger_pb2_grpc
from herald_gateway.errors import IdempotencyConflict, IdempotencyMismatch, Invalid, Unavailable

MAX_KEY_LENGTH = 255


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

    def __init__(self, ledger: ledger_pb2_grpc.LedgerServiceAsyncStub) -> None:
        self.ledger = ledger
        self.claims: Batcher[ledger_pb2.BeginIdempotentRequest, ledger_pb2.BeginIdempotentResponse] = Batcher(
            self._claim_many, max_items=256, max_wait=0.002, max_concurrent=2
        )
        self.completions: Batcher[ledger_pb2.CompleteIdempotentRequest, None] = Batcher(
            self._complete_many, max_items=256, max_wait=0.002, max_concurrent=2
        )

    async def _claim_many(
        self, claims: list[ledger_pb2.BeginIdempotentRequest]
    ) -> list[ledger_pb2.BeginIdempotentResponse]:
        found = await self.ledger.ClaimIdempotencyKeys(ledger_pb2.ClaimIdempotencyKeysRequest(claims=claims))
        return list(found.results)

    async def _complete_many(self, completions: list[ledger_pb2.CompleteIdempotentRequest]) -> list[None]:
        await self.ledger.CompleteIdempotencyKeys(ledger_pb2.CompleteIdempotencyKeysRequest(completions=completions))
        return [None] * len(completions)

    async def begin(self, tenant_id: str, key: str, digest: bytes) -> Replay | None:
        """None: the caller owns the key now and must `complete` or `abandon` it."""
        check_idempotency_key(key)
        try:
            claim = await self.claims.submit(
                ledger_pb2.BeginIdempotentRequest(tenant_id=tenant_id, key=key, request_hash=digest)
            )
        except grpc.aio.AioRpcError as error:
            raise Unavailable("idempotency keys cannot be checked right now; retry shortly") from error
        if claim.state == ledger_pb2.IDEMPOTENCY_STATE_NEW:
            return None
        if claim.state == ledger_pb2.IDEMPOTENCY_STATE_IN_FLIGHT:
            raise IdempotencyConflict("the first request with this key has not finished; retry shortly")
        if claim.state == ledger_pb2.IDEMPOTENCY_STATE_MISMATCH:
            raise IdempotencyMismatch("the key was used with a different request body or route")
        return Replay(claim.status_code, claim.body)

    async def complete(self, tenant_id: str, key: str, status_code: int, body: bytes) -> None:
        await self.completions.submit(
            ledger_pb2.CompleteIdempotentRequest(tenant_id=tenant_id, key=key, status_code=status_code, body=body)
        )

    async def abandon(self, tenant_id: str, key: str) -> None:
        try:
            await self.ledger.AbandonIdempotent(ledger_pb2.AbandonIdempotentRequest(tenant_id=tenant_id, key=key))
        except grpc.aio.AioRpcError:
            pass  # the claim expires on its own after a minute
