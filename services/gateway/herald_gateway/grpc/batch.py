"""NotificationService's streaming submits: SubmitWebhooks and SubmitEmails, the gRPC twins of
POST /v1/webhooks/batch and /v1/emails/batch.

The stream is authenticated when it opens and again before every chunk (through the API-key
cache, so it costs no ledger call): a key revoked or a tenant disabled mid-stream ends the
stream UNAUTHENTICATED at the next chunk, and a plan change applies from the next chunk.
Items are read as they come and gathered into chunks without waiting for company: a chunk is
what has arrived (at most FLUSH_ITEMS) when the one before it is answered, so a slow client's
item goes out at once and a fast client's chunks grow with the time a chunk takes (the next
chunk keeps filling while one is submitted). Each chunk spends its
items' share of the rate limit at once (as many as fit; the rest are refused, as they would
have been one by one), then goes through `BatchSubmitter`: one router call and one ledger
transaction for hundreds of items. Results come back in the order the items were sent, each
with its index; a refused item carries what the unary call would have failed with.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from herald.grpcio.context import Context
from herald.v1 import common_pb2, gateway_pb2, router_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import GatewayError, RateLimited, Unavailable
from herald_gateway.grpc.errors import item_error
from herald_gateway.idempotency import request_hash
from herald_gateway.operations import Operations
from herald_gateway.operations.batch import BatchSubmitter, ItemOutcome, refuse_non_public_targets
from herald_gateway.operations.submit import WebhookInput, email_submission, webhook_submission
from herald_gateway.rate_limit import RateLimiter, RateLimiterUnavailable

FLUSH_ITEMS = 500
# Items read ahead of the chunk being submitted: past this, the stream's flow control holds the client.
READ_AHEAD_ITEMS = 2 * FLUSH_ITEMS
Request = TypeVar("Request", gateway_pb2.SubmitWebhooksRequest, gateway_pb2.SubmitEmailsRequest)
AnswerT = TypeVar("AnswerT", gateway_pb2.SubmitWebhooksResponse, gateway_pb2.SubmitEmailsResponse)
END = object()


def webhook_item(principal: Principal, request: gateway_pb2.SubmitWebhooksRequest) -> router_pb2.Submission:
    webhook = request.webhook
    item = WebhookInput.of_grpc(webhook)
    digest = (
        request_hash("grpc", "SendWebhook", webhook.SerializeToString(deterministic=True))
        if item.idempotency_key
        else b""
    )
    return webhook_submission(principal, item, digest)


def email_item(principal: Principal, request: gateway_pb2.SubmitEmailsRequest) -> router_pb2.Submission:
    send = request.email
    email = common_pb2.EmailRequest()
    email.CopyFrom(send.email)
    digest = (
        request_hash("grpc", "SendEmail", send.SerializeToString(deterministic=True)) if send.idempotency_key else b""
    )
    return email_submission(principal, email, send.priority, send.idempotency_key, send.ordering_key, digest)


def _submit_rpc(
    build: Callable[[Principal, Request], router_pb2.Submission], answer: Callable[..., AnswerT]
) -> Callable[[Any, AsyncIterator[Request], Context], AsyncIterator[AnswerT]]:
    """SubmitWebhooks or SubmitEmails: the same stream, with its own items and answers."""

    async def submit(self: Any, request_iterator: AsyncIterator[Request], context: Context) -> AsyncIterator[AnswerT]:
        principal = await self._principal(context)
        async for index, outcome in self._submit_stream(request_iterator, context, principal, build):
            yield _answer(answer(index=index), outcome)

    return submit


class BatchGrpc:
    """Mixed into NotificationServicer, which provides authentication."""

    operations: Operations
    limiter: RateLimiter

    if TYPE_CHECKING:  # provided by NotificationServicer; declared here for the type checker only

        async def _principal(self, context: Context) -> Principal: ...

    SubmitWebhooks = _submit_rpc(webhook_item, gateway_pb2.SubmitWebhooksResponse)
    SubmitEmails = _submit_rpc(email_item, gateway_pb2.SubmitEmailsResponse)

    async def _submit_stream(
        self,
        requests: AsyncIterator[Request],
        context: Context,
        principal: Principal,
        build: Callable[[Principal, Request], router_pb2.Submission],
    ) -> AsyncIterator[tuple[int, ItemOutcome]]:
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=READ_AHEAD_ITEMS)

        async def read() -> None:
            try:
                async for request in requests:
                    await queue.put(request)
            finally:
                await queue.put(END)

        reader = asyncio.create_task(read())
        submitter = BatchSubmitter(self.operations.router)
        index = 0
        ended = False
        try:
            while not ended:
                chunk: list[Request] = []
                first = await queue.get()
                if first is END:
                    break
                chunk.append(first)
                ended = _drain(queue, chunk)
                # Checked again for every chunk: the key may have been revoked, the tenant disabled.
                principal = await self._principal(context)
                for outcome in await self._admit(chunk, principal, build, submitter):
                    yield index, outcome
                    index += 1
        finally:
            if not reader.done():
                reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader  # a stream that broke while being read ends the call with its error

    async def _admit(
        self,
        chunk: list[Request],
        principal: Principal,
        build: Callable[[Principal, Request], router_pb2.Submission],
        submitter: BatchSubmitter,
    ) -> list[ItemOutcome]:
        granted = await self._spend_chunk_rate(principal, len(chunk))
        prepared: list[router_pb2.Submission | GatewayError] = []
        for position, request in enumerate(chunk):
            if isinstance(granted, GatewayError):
                prepared.append(granted)
                continue
            if position >= granted[0]:
                prepared.append(granted[1])
                continue
            try:
                prepared.append(build(principal, request))
            except GatewayError as error:
                prepared.append(error)
        await refuse_non_public_targets(prepared, self.operations.target_check)
        return await submitter.submit(prepared)

    async def _spend_chunk_rate(self, principal: Principal, count: int) -> tuple[int, GatewayError] | GatewayError:
        """How many of `count` items the rate limit admits, and what the others are refused with."""
        if principal.rate_per_min is None:
            return count, Unavailable("unreachable")
        try:
            state = await self.limiter.consume(principal.tenant_id, principal.rate_per_min, count=count, partial=True)
        except RateLimiterUnavailable:
            return Unavailable("the rate limiter is unavailable; retry shortly")
        limit = principal.rate_per_min
        refused = RateLimited(
            f"rate limit of {limit} requests per minute reached", max(state.retry_after_s, state.reset_s, 1)
        )
        return state.granted, refused


def _drain(queue: asyncio.Queue[Any], chunk: list[Any]) -> bool:
    """Moves what has arrived into the chunk (up to FLUSH_ITEMS); True when the stream ended."""
    while len(chunk) < FLUSH_ITEMS:
        try:
            item = queue.get_nowait()
        except asyncio.QueueEmpty:
            return False
        if item is END:
            return True
        chunk.append(item)
    return False


def _answer(answer: AnswerT, outcome: ItemOutcome) -> AnswerT:
    if outcome.job is not None:
        answer.id = outcome.job.id
        answer.status = outcome.job.status
        answer.replayed = outcome.replayed
    else:
        answer.error.CopyFrom(item_error(outcome.error or Unavailable("the item was not submitted; retry it")))
    return answer
