"""A tenant's jobs: one with its attempts, a page of them, a failed one run again."""

from __future__ import annotations

from dataclasses import dataclass

from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_jobs_pb2, router_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import Invalid, NotFound, NotRetryable, ask
from herald_gateway.operations.base import OperationsBase
from herald_gateway.operations.subscriptions import event_id_ok


@dataclass
class JobPage:
    jobs: list[common_pb2.Job]
    next_cursor: str


class JobOperations(OperationsBase):
    async def get_job(self, principal: Principal, job_id: str) -> tuple[common_pb2.Job, list[common_pb2.Attempt]]:
        if parse_id(job_id) is None:
            raise NotFound("job not found")
        tenant_id = principal.tenant_id
        job = await ask(
            self.ledger.jobs.GetJob(
                ledger_jobs_pb2.GetJobRequest(tenant_id=tenant_id, job_id=job_id, include_request=True)
            ),
            "job",
        )
        attempts = await ask(
            self.ledger.jobs.ListAttempts(ledger_jobs_pb2.ListAttemptsRequest(tenant_id=tenant_id, job_id=job_id)),
            "job",
        )
        # The headers' sealed values are the senders' business; the masked ones are shown.
        if job.job.HasField("webhook"):
            job.job.webhook.ClearField("sealed_headers")
        return job.job, list(attempts.attempts)

    async def list_jobs(self, principal: Principal, request: ledger_jobs_pb2.ListJobsRequest) -> JobPage:
        problems = []
        if request.event_id and not event_id_ok(request.event_id):
            problems.append(("event_id", "1-255 printable ASCII characters without spaces"))
        if request.target_id and parse_id(request.target_id) is None:
            problems.append(("target_id", "must be a UUID"))
        if problems:
            raise Invalid(problems)
        request.tenant_id = principal.tenant_id
        page = await ask(self.ledger.jobs.ListJobs(request), "jobs")
        return JobPage(jobs=list(page.jobs), next_cursor=page.next_cursor)

    async def retry_job(self, principal: Principal, job_id: str) -> ledger_jobs_pb2.RetryOutcome:
        """FAILED -> PENDING, then published again (a fresh attempt budget)."""
        if parse_id(job_id) is None:
            raise NotFound("job not found")
        outcomes = await self._retry(
            router_pb2.RouterServiceRetryJobsRequest(tenant_id=principal.tenant_id, job_ids=[job_id])
        )
        outcome = outcomes[0]
        if outcome.retried:
            return outcome
        if outcome.status == common_pb2.JOB_STATUS_UNSPECIFIED:
            raise NotFound("job not found")
        raise NotRetryable(outcome.detail)

    async def _retry(self, request: router_pb2.RouterServiceRetryJobsRequest) -> list[ledger_jobs_pb2.RetryOutcome]:
        return list((await ask(self.router.RetryJobs(request), "job")).outcomes)
