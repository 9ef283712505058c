"""RouterService: admission, then the ledger writes the jobs, then the bus takes them."""

from __future__ import annotations

from typing import Any

import grpc

from herald.grpcio.errors import abort_invalid
from herald.telemetry.metrics import JOBS_ACCEPTED, label
from herald.v1 import common_pb2, ledger_pb2, ledger_pb2_grpc, router_pb2, router_pb2_grpc
from herald_router.admission import effective_priority
from herald_router.publishing import Publisher

Context = grpc.aio.ServicerContext[Any, Any]


class RouterServicer(router_pb2_grpc.RouterServiceServicer):
    def __init__(self, ledger: ledger_pb2_grpc.LedgerServiceAsyncStub, publisher: Publisher) -> None:
        self.ledger = ledger
        self.publisher = publisher

    async def SubmitJobs(
        self, request: router_pb2.SubmitJobsRequest, context: Context
    ) -> router_pb2.SubmitJobsResponse:
        drafts = []
        for i, submission in enumerate(request.submissions):
            if submission.WhichOneof("request") != "webhook":
                await abort_invalid(context, [(f"submissions[{i}].request", "only webhooks are routed yet")])
            drafts.append(
                ledger_pb2.JobDraft(
                    tenant_id=submission.tenant_id,
                    channel=submission.channel,
                    priority=effective_priority(submission),  # type: ignore[arg-type]
                    idempotency_key=submission.idempotency_key,
                    webhook=submission.webhook,
                )
            )
        created = await self.ledger.CreateJobs(ledger_pb2.CreateJobsRequest(drafts=drafts))
        jobs = list(created.jobs)
        for job in jobs:
            JOBS_ACCEPTED.labels(label(common_pb2.Channel.Name(job.channel))).inc()
        published = await self.publisher.publish(jobs)
        for job in jobs:
            job.ClearField("webhook")
            if job.id in published:
                job.status = common_pb2.JOB_STATUS_QUEUED
        return router_pb2.SubmitJobsResponse(jobs=jobs)
