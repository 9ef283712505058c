"""The ledger refuses any status change its transition table does not list,
whoever asks for it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import grpc
import httpx

from herald.cli.stack import Stack
from herald.grpcio.ledger import Ledger
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, ledger_jobs_pb2, ledger_pb2
from tests.support.api import TenantKey, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Receiver
from tests.test_retention import uuid7_at


def test_illegal_transitions_are_refused(stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=tenant.headers)
    job_id = sent.json()["id"]
    assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"

    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = Ledger.over(channel)
        # A finished job does not start again: a late redelivery is told not to proceed.
        starts = ledger.jobs.AdvanceDeliveries(
            ledger_jobs_pb2.AdvanceDeliveriesRequest(start_job_ids=[job_id]), timeout=10
        )
        assert [s.proceed for s in starts.starts] == [False]
        # DELIVERED -> QUEUED (a retry reported late) and DELIVERED -> FAILED are not
        # transitions; the attempts are still recorded.
        for outcome, status in (
            (common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE, common_pb2.JOB_STATUS_QUEUED),
            (common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE, common_pb2.JOB_STATUS_FAILED),
        ):
            attempt = common_pb2.Attempt(job_id=job_id, target="late", outcome=outcome, duration_ms=1)  # type: ignore[arg-type]
            ledger.jobs.AdvanceDeliveries(
                ledger_jobs_pb2.AdvanceDeliveriesRequest(
                    results=[ledger_jobs_pb2.AttemptResult(attempt=attempt, next_status=status)]  # type: ignore[arg-type]
                ),
                timeout=10,
            )
    job = wait_for_status(gateway, tenant, job_id)
    assert job["status"] == "delivered"
    assert len(job["attempts"]) == 3


def test_ledger_rejects_malformed_ids_with_a_field_violation(stack: Stack) -> None:
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = Ledger.over(channel)
        try:
            ledger.jobs.AdvanceDeliveries(ledger_jobs_pb2.AdvanceDeliveriesRequest(start_job_ids=["nope"]), timeout=10)
        except grpc.RpcError as error:
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
            assert "start_job_ids[0]" in error.details()  # type: ignore[attr-defined]
        else:
            raise AssertionError("a malformed id was accepted")


def _attempt_result(job_id: str, outcome: int, next_status: int) -> ledger_jobs_pb2.AttemptResult:
    attempt = common_pb2.Attempt(job_id=job_id, target="copy", outcome=outcome, duration_ms=1)  # type: ignore[arg-type]
    return ledger_jobs_pb2.AttemptResult(attempt=attempt, next_status=next_status)  # type: ignore[arg-type]


def test_two_copies_of_one_delivery_recorded_in_one_batch_end_the_job_whatever_their_order(
    stack: Stack, gateway: str, tenant: TenantKey
) -> None:
    """After a NATS restart one work message can be delivered twice at once: one copy succeeds,
    the other schedules a retry, and the sender's batcher records both in one AdvanceDeliveries.
    The success is final in either order (a job left QUEUED would never run again: the
    succeeding copy acknowledged the only message), and both attempts are kept."""
    succeeded = (common_pb2.ATTEMPT_OUTCOME_SUCCEEDED, common_pb2.JOB_STATUS_DELIVERED)
    retry = (common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE, common_pb2.JOB_STATUS_QUEUED)
    failed = (common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE, common_pb2.JOB_STATUS_FAILED)
    batches = {"success then retry": [succeeded, retry], "retry then success": [retry, succeeded]}
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = Ledger.over(channel)
        # Jobs written straight into the ledger, then started by "a sender" (the ledger also
        # publishes them, so the real sender may add attempts of its own: only ours are counted).
        draft = ledger_pb2.JobDraft(
            tenant_id=tenant.tenant_id,
            channel=common_pb2.CHANNEL_WEBHOOK,
            priority=common_pb2.PRIORITY_NORMAL,
            webhook=common_pb2.WebhookRequest(url="http://127.0.0.1:9/copies", body=b"{}"),
        )
        created = ledger.jobs.CreateJobs(ledger_jobs_pb2.CreateJobsRequest(drafts=[draft] * len(batches)), timeout=10)
        job_ids = [outcome.job.id for outcome in created.outcomes]
        starts = ledger.jobs.AdvanceDeliveries(
            ledger_jobs_pb2.AdvanceDeliveriesRequest(start_job_ids=job_ids), timeout=10
        )
        assert [s.proceed for s in starts.starts] == [True] * len(job_ids)
        for job_id, batch in zip(job_ids, batches.values(), strict=True):
            results = [_attempt_result(job_id, outcome, status) for outcome, status in batch]
            ledger.jobs.AdvanceDeliveries(ledger_jobs_pb2.AdvanceDeliveriesRequest(results=results), timeout=10)
        # A failure reported later, in its own batch, is kept as an attempt and changes nothing.
        ledger.jobs.AdvanceDeliveries(
            ledger_jobs_pb2.AdvanceDeliveriesRequest(results=[_attempt_result(job_ids[0], *failed)]), timeout=10
        )
    for (order, _), job_id in zip(batches.items(), job_ids, strict=True):
        job = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers, timeout=10).json()
        assert job["status"] == "delivered", f"{order}: {job['status']}"
    first = httpx.get(f"{gateway}/v1/jobs/{job_ids[0]}", headers=tenant.headers, timeout=10).json()
    assert len([a for a in first["attempts"] if a["target"] == "copy"]) == 3


def test_a_success_recorded_after_a_concurrent_copys_retry_still_ends_the_job(
    stack: Stack, gateway: str, tenant: TenantKey
) -> None:
    """The same two copies recorded in two batches, the retry first: the job is QUEUED when the success
    arrives, and the success ends it."""
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = Ledger.over(channel)
        draft = ledger_pb2.JobDraft(
            tenant_id=tenant.tenant_id,
            channel=common_pb2.CHANNEL_WEBHOOK,
            priority=common_pb2.PRIORITY_NORMAL,
            webhook=common_pb2.WebhookRequest(url="http://127.0.0.1:9/copies", body=b"{}"),
        )
        job_id = (
            ledger.jobs.CreateJobs(ledger_jobs_pb2.CreateJobsRequest(drafts=[draft]), timeout=10).outcomes[0].job.id
        )
        ledger.jobs.AdvanceDeliveries(ledger_jobs_pb2.AdvanceDeliveriesRequest(start_job_ids=[job_id]), timeout=10)
        for outcome, status in (
            (common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE, common_pb2.JOB_STATUS_QUEUED),
            (common_pb2.ATTEMPT_OUTCOME_SUCCEEDED, common_pb2.JOB_STATUS_DELIVERED),
        ):
            ledger.jobs.AdvanceDeliveries(
                ledger_jobs_pb2.AdvanceDeliveriesRequest(results=[_attempt_result(job_id, outcome, status)]), timeout=10
            )
    job = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers, timeout=10).json()
    assert job["status"] == "delivered"
    assert len([a for a in job["attempts"] if a["target"] == "copy"]) == 2


def test_a_value_the_database_cannot_hold_is_invalid_argument_not_a_retry(stack: Stack, operator_token: str) -> None:
    """The HTTP schemas refuse NUL at the door; the gRPC surface has no such schema, so the ledger
    says what PostgreSQL refused (INVALID_ARGUMENT with a reason), and the gateway passes it on
    rather than answering UNAVAILABLE for a request that can never succeed."""
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        try:
            gateway_pb2_grpc.AdminServiceStub(channel).CreateTenant(
                gateway_pb2.AdminServiceCreateTenantRequest(name="a\x00b", plan=common_pb2.PLAN_STARTUP),
                metadata=(("authorization", f"Bearer {operator_token}"),),
                timeout=10,
            )
        except grpc.RpcError as error:
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()  # type: ignore[attr-defined]
            assert "NUL" in error.details()  # type: ignore[attr-defined]
        else:
            raise AssertionError("a tenant name with NUL was accepted")


def test_a_job_of_yesterday_starts_and_ends_in_one_batch_with_todays(
    stack: Stack, gateway: str, tenant: TenantKey, infra: dict[str, str]
) -> None:
    """A retry of a job made yesterday reaches the sender beside today's jobs: one call starts
    them all and one records their ends (the ledger's statements read the days their ids name),
    and yesterday's unfinished job of an ordering key holds today's job of that key back until
    it ends."""
    made = {
        "yesterday": (uuid7_at(datetime.now(UTC) - timedelta(days=1)), "k"),
        "today": (uuid7_at(datetime.now(UTC)), None),
        "today, same key": (uuid7_at(datetime.now(UTC)), "k"),
    }
    for job_id, key in made.values():  # in this order: the key's sequence follows it
        query(
            infra["database_url"],
            "INSERT INTO jobs (id, tenant_id, channel, status, priority, request, body, ordering_key) "
            "VALUES ($1, $2, 'webhook', 'QUEUED', 'normal', '{\"url\": \"http://127.0.0.1:9/days\"}', '{}', $3)",
            job_id,
            uuid.UUID(tenant.tenant_id),
            key,
        )
    ids = {name: str(job_id) for name, (job_id, _) in made.items()}
    succeeded = (common_pb2.ATTEMPT_OUTCOME_SUCCEEDED, common_pb2.JOB_STATUS_DELIVERED)
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = Ledger.over(channel)
        starts = ledger.jobs.AdvanceDeliveries(
            ledger_jobs_pb2.AdvanceDeliveriesRequest(start_job_ids=list(ids.values())), timeout=10
        )
        assert [(s.proceed, s.wait) for s in starts.starts] == [(True, False), (True, False), (False, True)]
        ended = ledger.jobs.AdvanceDeliveries(
            ledger_jobs_pb2.AdvanceDeliveriesRequest(
                results=[_attempt_result(ids[name], *succeeded) for name in ("yesterday", "today")],
                start_job_ids=[ids["today, same key"]],
            ),
            timeout=10,
        )
        assert [s.proceed for s in ended.starts] == [True], "the key's earlier job ended in the same call"
        ledger.jobs.AdvanceDeliveries(
            ledger_jobs_pb2.AdvanceDeliveriesRequest(results=[_attempt_result(ids["today, same key"], *succeeded)]),
            timeout=10,
        )
    for name, job_id in ids.items():
        job = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers, timeout=10).json()
        assert (job["status"], [a["target"] for a in job["attempts"]]) == ("delivered", ["copy"]), name
