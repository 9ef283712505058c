"""AdvanceWalks, the email-sender's one ledger call per batch: the walks that finished are
recorded and the jobs that begin are started in one transaction; a finished job never starts
again, and a malformed request is refused whole with the field named."""

from __future__ import annotations

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.grpcio.ledger import Ledger
from herald.v1 import common_pb2, ledger_jobs_pb2
from tests.standins.herald_email import add_provider, email
from tests.standins.resend import ResendStandIn
from tests.support.api import TenantKey, wait_for_status


def test_a_delivered_email_does_not_start_again_and_a_late_walk_moves_nothing(
    stack: Stack, gateway: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    add_provider(gateway, tenant, resend, priority=1)
    sent = httpx.post(f"{gateway}/v1/emails", json=email(), headers=tenant.headers)
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    job = wait_for_status(gateway, tenant, job_id)
    assert job["status"] == "delivered", job
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = Ledger.over(channel)
        late = ledger_jobs_pb2.WalkRecord(job_id=job_id, next_status=common_pb2.JOB_STATUS_FAILED, error="late")
        answer = ledger.jobs.AdvanceWalks(
            ledger_jobs_pb2.AdvanceWalksRequest(walks=[late], start_job_ids=[job_id]), timeout=10
        )
    assert [s.proceed for s in answer.starts] == [False], "a redelivery of a finished job is skipped"
    assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered", "DELIVERED -> FAILED is no transition"


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (ledger_jobs_pb2.AdvanceWalksRequest(start_job_ids=["nope"]), "start_job_ids[0]"),
        (
            ledger_jobs_pb2.AdvanceWalksRequest(
                walks=[ledger_jobs_pb2.WalkRecord(job_id="0190a6b2-0000-7000-8000-000000000000")]
            ),
            "walks[0].next_status",
        ),
        (
            ledger_jobs_pb2.AdvanceWalksRequest(
                walks=[ledger_jobs_pb2.WalkRecord(job_id="x", next_status=common_pb2.JOB_STATUS_DELIVERED)]
            ),
            "walks[0].job_id",
        ),
    ],
)
def test_malformed_requests_are_refused_with_the_field(
    stack: Stack, request_: ledger_jobs_pb2.AdvanceWalksRequest, field: str
) -> None:
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = Ledger.over(channel)
        with pytest.raises(grpc.RpcError) as refused:
            ledger.jobs.AdvanceWalks(request_, timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert field in refused.value.details()  # type: ignore[attr-defined]
