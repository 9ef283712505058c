"""The ledger refuses any status change its transition table does not list,
whoever asks for it."""

from __future__ import annotations

import grpc
import httpx

from herald.cli.stack import Stack
from herald.v1 import common_pb2, ledger_pb2, ledger_pb2_grpc
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver


def test_illegal_transitions_are_refused(stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=tenant.headers)
    job_id = sent.json()["id"]
    assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"

    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = ledger_pb2_grpc.LedgerServiceStub(channel)
        # DELIVERED -> QUEUED is not a transition.
        moved = ledger.MarkQueued(ledger_pb2.MarkQueuedRequest(job_ids=[job_id]), timeout=10)
        assert moved.updated == 0
        # A finished job does not start again: a late redelivery is told not to proceed.
        starts = ledger.StartDeliveries(ledger_pb2.StartDeliveriesRequest(job_ids=[job_id]), timeout=10)
        assert [s.proceed for s in starts.starts] == [False]
        # DELIVERED -> FAILED is not a transition either; the attempt is still recorded.
        attempt = common_pb2.Attempt(
            job_id=job_id, target="late", outcome=common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE, duration_ms=1
        )
        ledger.RecordAttempts(
            ledger_pb2.RecordAttemptsRequest(
                results=[ledger_pb2.AttemptResult(attempt=attempt, next_status=common_pb2.JOB_STATUS_FAILED)]
            ),
            timeout=10,
        )
    job = wait_for_status(gateway, tenant, job_id)
    assert job["status"] == "delivered"
    assert len(job["attempts"]) == 2


def test_ledger_rejects_malformed_ids_with_a_field_violation(stack: Stack) -> None:
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        ledger = ledger_pb2_grpc.LedgerServiceStub(channel)
        try:
            ledger.MarkQueued(ledger_pb2.MarkQueuedRequest(job_ids=["nope"]), timeout=10)
        except grpc.RpcError as error:
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
            assert "job_ids[0]" in error.details()  # type: ignore[attr-defined]
        else:
            raise AssertionError("a malformed id was accepted")
