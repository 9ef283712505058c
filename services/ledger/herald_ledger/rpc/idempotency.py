"""Idempotency keys of the gateway's requests, many at once (gateways coalesce concurrent
requests): one transaction per call. A job's own key is claimed in its creation (rpc/jobs.py)."""

from __future__ import annotations

from herald.grpcio.errors import abort_invalid
from herald.v1 import ledger_jobs_pb2
from herald_ledger.rpc.common import Context, Rpcs, require_id, require_tenant_ids
from herald_ledger.store import idempotency

STATE_TO_PROTO = {
    "new": ledger_jobs_pb2.IDEMPOTENCY_STATE_NEW,
    "in_flight": ledger_jobs_pb2.IDEMPOTENCY_STATE_IN_FLIGHT,
    "completed": ledger_jobs_pb2.IDEMPOTENCY_STATE_COMPLETED,
    "mismatch": ledger_jobs_pb2.IDEMPOTENCY_STATE_MISMATCH,
}


class IdempotencyRpcs(Rpcs):
    async def ClaimIdempotencyKeys(
        self, request: ledger_jobs_pb2.ClaimIdempotencyKeysRequest, context: Context
    ) -> ledger_jobs_pb2.ClaimIdempotencyKeysResponse:
        claims = []
        for i, claim in enumerate(request.claims):
            tenant_id = await require_id(context, claim.tenant_id, f"claims[{i}].tenant_id")
            if not claim.key or len(claim.key) > 255 or len(claim.request_hash) != 32:
                await abort_invalid(context, [(f"claims[{i}].key", "1-255 characters, with a SHA-256 request hash")])
            claims.append((tenant_id, claim.key, claim.request_hash))
        results = []
        async with self.engine.begin() as conn:
            for tenant_id, key, digest in claims:
                found = await idempotency.claim(conn, tenant_id, key, digest)
                results.append(
                    ledger_jobs_pb2.IdempotencyClaimResult(
                        state=STATE_TO_PROTO[found.state], status_code=found.status_code, body=found.body
                    )
                )
        return ledger_jobs_pb2.ClaimIdempotencyKeysResponse(results=results)

    async def CompleteIdempotencyKeys(
        self, request: ledger_jobs_pb2.CompleteIdempotencyKeysRequest, context: Context
    ) -> ledger_jobs_pb2.CompleteIdempotencyKeysResponse:
        tenant_ids = await require_tenant_ids(context, request.completions, "completions")
        completions = [
            (t, item.key, item.status_code, item.body) for t, item in zip(tenant_ids, request.completions, strict=True)
        ]
        await self.write(idempotency.complete_many, completions)
        return ledger_jobs_pb2.CompleteIdempotencyKeysResponse()

    async def AbandonIdempotent(
        self, request: ledger_jobs_pb2.AbandonIdempotentRequest, context: Context
    ) -> ledger_jobs_pb2.AbandonIdempotentResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        await self.write(idempotency.abandon, tenant_id, request.key)
        return ledger_jobs_pb2.AbandonIdempotentResponse()
