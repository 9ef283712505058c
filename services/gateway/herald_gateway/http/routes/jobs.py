"""Reading jobs back: one by id (with its attempts), or pages of them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response

from herald.names import CHANNEL_VALUES, STATUS_NAMES, STATUS_VALUES
from herald.v1 import ledger_jobs_pb2
from herald_gateway.access import Counted
from herald_gateway.http.crud import Cursor, Limit
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.jobs import JobList, JobOut, job_out
from herald_gateway.http.schemas.submit import JobAccepted

router = APIRouter(tags=["jobs"])


@router.get("/v1/jobs/{job_id}", response_model=JobOut)
async def get_job(job_id: str, principal: Tenant, operations: OperationsDep) -> JobOut:
    job, attempts = await operations.get_job(principal, job_id)
    return job_out(job, attempts)


@router.get("/v1/jobs", response_model=JobList)
async def list_jobs(
    principal: Tenant,
    operations: OperationsDep,
    limit: Limit = 50,
    cursor: Cursor = None,
    status: Annotated[
        str | None,
        Query(pattern="^(pending|queued|delivering|delivered|failed|suppressed|bounced|complained|skipped)$"),
    ] = None,
    channel: Annotated[str | None, Query(pattern="^(webhook|email|platform_email)$")] = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    url: Annotated[str | None, Query(max_length=2048, description="Webhook jobs to this URL only.")] = None,
    event_id: Annotated[str | None, Query(max_length=255, description="The deliveries of this event only.")] = None,
    target_id: Annotated[str | None, Query(max_length=64, description="The deliveries to this target only.")] = None,
) -> JobList:
    request = ledger_jobs_pb2.ListJobsRequest(
        page_size=limit,
        cursor=cursor or "",
        status=STATUS_VALUES.get(status or "", 0),  # type: ignore[arg-type]
        channel=CHANNEL_VALUES.get(channel or "", 0),  # type: ignore[arg-type]
        url=url or "",
        event_id=event_id or "",
        target_id=target_id or "",
    )
    if created_after is not None:
        request.created_after.FromDatetime(created_after)
    if created_before is not None:
        request.created_before.FromDatetime(created_before)
    page = await operations.list_jobs(principal, request)
    return JobList(data=[job_out(j) for j in page.jobs], next_cursor=page.next_cursor or None)


@router.post("/v1/jobs/{job_id}/retry", status_code=202, response_model=JobAccepted)
async def retry_job(job_id: str, principal: Counted, operations: OperationsDep) -> JobAccepted:
    """Runs a failed job again from PENDING with a fresh set of attempts (a dead-lettered
    job leaves the dead-letter queue this way). 409 unless the job is failed."""
    outcome = await operations.retry_job(principal, job_id)
    return JobAccepted(id=outcome.job_id, status=STATUS_NAMES.get(outcome.status, "pending"))


@router.post("/v1/jobs/{job_id}/resend", status_code=202, response_model=JobOut)
async def resend_job(job_id: str, principal: Counted, operations: OperationsDep) -> JobOut:
    """Sends a delivered or failed webhook job again as a new job: the same request and payload,
    signed afresh when delivered, linked to the original (`origin_job_id`) and to its event.
    Counted against the rate limit and the quota like any submission. 409 while the job is
    still under way."""
    return job_out(await operations.resend_job(principal, job_id))


@router.delete("/v1/jobs/{job_id}/payload", status_code=204)
async def expunge_job_payload(job_id: str, principal: Tenant, operations: OperationsDep) -> Response:
    """Takes the job's payload out of Herald (body, an email's request, a webhook's request
    headers, the attempts' response headers and excerpts, the idempotency answer). The job still
    answers with its status and attempts, and `payload_expunged_at`. 409 while it is under way;
    404 for an unknown job."""
    await operations.expunge_job_payload(principal, job_id)
    return Response(status_code=204)
