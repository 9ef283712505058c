"""Batch submission: many jobs in one request or stream, each admitted as if it came alone.

Each item is validated by the single routes' own rules (`webhook_problems`, `email_problems`)
and refused on its own; the valid ones reach the router as `SubmitJobs` calls of up to
`CHUNK_ITEMS` submissions, one after the other (so quota and ordering keys see the items in
their order), straight to the router rather than through the per-request coalescing of
`Operations.submitter`: a batch is already a batch, and one router call and one ledger
transaction per chunk is the whole point. Each item's idempotency key travels with its
submission, with a digest of the item, and is claimed by the ledger in the job's own
transaction; a key repeated inside one batch is settled here, so the ledger never sees the
same key twice in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import grpc

from herald.grpcio.options import CALL_DEADLINE_S
from herald.v1 import common_pb2, ledger_jobs_pb2, router_pb2, router_pb2_grpc
from herald_gateway.errors import GatewayError, IdempotencyMismatch, Invalid, Unavailable, from_rpc, refused
from herald_gateway.target_check import TargetCheck

MAX_BATCH_ITEMS = 1000
# One SubmitJobs call: a batch of up to 1,000 items is one router hop and one ledger transaction.
CHUNK_ITEMS = MAX_BATCH_ITEMS
# And never a message near the gRPC limit (16 MB), whatever the items weigh.
CHUNK_BYTES = 8 * 1024 * 1024


@dataclass
class ItemOutcome:
    """What became of one item: a job (new, or the earlier one its key named), or why not."""

    job: common_pb2.Job | None = None
    replayed: bool = False
    error: GatewayError | None = None


async def refuse_non_public_targets(
    prepared: list[router_pb2.Submission | GatewayError], check: TargetCheck | None
) -> None:
    """The submit-time target check of POST /v1/webhooks, item by item (in place): an item whose
    URL is refused becomes its 422, as it would alone. (The send-time guard applies either way.)"""
    if check is None:
        return
    for i, item in enumerate(prepared):
        if isinstance(item, router_pb2.Submission) and item.HasField("webhook"):
            problems = await check.problems(item.webhook.url)
            if problems:
                prepared[i] = Invalid(problems)


def outcome_of(draft: ledger_jobs_pb2.DraftOutcome) -> ItemOutcome:
    if draft.HasField("job"):
        return ItemOutcome(job=draft.job, replayed=draft.replayed)
    return ItemOutcome(error=refused(draft.rejection, draft.detail))


def _refusal(error: grpc.aio.AioRpcError) -> GatewayError:
    """A chunk the router refused as a whole (every item of it gets this)."""
    if error.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND):
        return from_rpc(error, "tenant")
    return Unavailable("the item could not be submitted; retry it (with its idempotency_key, it is never doubled)")


def chunks(pending: list[tuple[int, router_pb2.Submission]]) -> Iterable[list[tuple[int, router_pb2.Submission]]]:
    chunk: list[tuple[int, router_pb2.Submission]] = []
    size = 0
    for entry in pending:
        weight = entry[1].ByteSize()
        if chunk and (len(chunk) >= CHUNK_ITEMS or size + weight > CHUNK_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(entry)
        size += weight
    if chunk:
        yield chunk


class BatchSubmitter:
    def __init__(self, router: router_pb2_grpc.RouterServiceAsyncStub) -> None:
        self.router = router

    async def submit(self, items: list[router_pb2.Submission | GatewayError]) -> list[ItemOutcome]:
        """One outcome per item, in order. An item given as an error stays refused with it."""
        outcomes = [ItemOutcome(error=item) if isinstance(item, GatewayError) else ItemOutcome() for item in items]
        pending: list[tuple[int, router_pb2.Submission]] = []
        # A key given twice in one batch: the same request answers the first item's outcome
        # (replayed), another one is refused, as a second request with the key would be.
        first_with_key: dict[str, int] = {}
        repeats: list[tuple[int, int]] = []
        for index, item in enumerate(items):
            if isinstance(item, GatewayError):
                continue
            if item.idempotency_key:
                first = first_with_key.setdefault(item.idempotency_key, index)
                if first != index:
                    earlier = items[first]
                    assert not isinstance(earlier, GatewayError)
                    if earlier.request_hash == item.request_hash:
                        repeats.append((index, first))
                    else:
                        outcomes[index].error = IdempotencyMismatch(
                            f"the key was used by item {first} of this batch for a different request"
                        )
                    continue
            pending.append((index, item))
        await self._send(pending, outcomes)
        for index, first in repeats:
            earlier_outcome = outcomes[first]
            outcomes[index] = ItemOutcome(
                job=earlier_outcome.job, replayed=earlier_outcome.job is not None, error=earlier_outcome.error
            )
        return outcomes

    async def _send(self, pending: list[tuple[int, router_pb2.Submission]], outcomes: list[ItemOutcome]) -> None:
        """The pending items to the router, chunk by chunk, their outcomes into `outcomes`."""
        failure: GatewayError | None = None
        for chunk in chunks(pending):
            if failure is None:
                try:
                    response = await self.router.SubmitJobs(
                        router_pb2.SubmitJobsRequest(submissions=[s for _, s in chunk]), timeout=CALL_DEADLINE_S
                    )
                except grpc.aio.AioRpcError as error:
                    failure = _refusal(error)
                else:
                    for (index, _), draft in zip(chunk, response.outcomes, strict=True):
                        outcomes[index] = outcome_of(draft)
                    continue
            # After a failed chunk the rest are not tried: they stay in order for the retry.
            for index, _ in chunk:
                outcomes[index].error = failure
