"""Expunge on demand (Svix's expunge): a tenant takes the payload of a settled job, or of an event
and its deliveries, out of Herald. The rows stay and still answer (status, attempts' outcomes,
`payload_expunged_at`); the ledger runs the same statement retention does
(herald_ledger.store.payloads)."""

from __future__ import annotations

import grpc

from herald.ids import parse_id
from herald.v1 import ledger_jobs_pb2, ledger_subscriptions_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import GatewayError, NotFound, ask
from herald_gateway.operations.base import OperationsBase
from herald_gateway.operations.subscriptions import event_id_ok


class PayloadInUse(
    GatewayError,
    status=409,
    title="The payload is still needed",
    kind="payload-in-use",
    code=grpc.StatusCode.FAILED_PRECONDITION,
):
    """The job (or a delivery of the event) is still under way: its next attempt needs the payload."""


class PayloadExpunged(
    GatewayError,
    status=409,
    title="The payload was expunged",
    kind="payload-expunged",
    code=grpc.StatusCode.FAILED_PRECONDITION,
):
    """A job or an event whose payload is gone cannot be sent again."""


IN_USE = {grpc.StatusCode.FAILED_PRECONDITION: lambda e: PayloadInUse(e.details() or "still under way")}


class PayloadOperations(OperationsBase):
    async def expunge_job_payload(self, principal: Principal, job_id: str) -> None:
        if parse_id(job_id) is None:
            raise NotFound("job not found")
        request = ledger_jobs_pb2.ExpungeJobPayloadRequest(tenant_id=principal.tenant_id, job_id=job_id)
        await ask(self.ledger.jobs.ExpungeJobPayload(request), "job", IN_USE)

    async def expunge_event_payload(self, principal: Principal, event_id: str) -> None:
        if not event_id_ok(event_id):
            raise NotFound("event not found")
        request = ledger_subscriptions_pb2.ExpungeEventPayloadRequest(tenant_id=principal.tenant_id, event_id=event_id)
        await ask(self.ledger.subscriptions.ExpungeEventPayload(request), "event", IN_USE)
