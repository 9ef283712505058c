"""A ledger rejection means one thing on every path: a single submission, an item of a batch
(HTTP or streamed gRPC) and an event are refused with the same error, hence the same HTTP
problem and the same gRPC status. (A batch item refused as idempotency-in-flight was once
answered as quota exceeded, 429.)"""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from herald_gateway.errors import GatewayError, IdempotencyConflict, QuotaExceeded, refused
from herald_gateway.grpc.errors import item_error, status_of
from herald_gateway.operations.batch import outcome_of
from herald_gateway.operations.submit import submitted

from herald.rejections import REJECTIONS
from herald.v1 import ledger_jobs_pb2, ledger_pb2


def _single(rejection: int) -> GatewayError:
    with pytest.raises(GatewayError) as raised:
        submitted(ledger_jobs_pb2.DraftOutcome(rejection=rejection, detail="why"))  # type: ignore[arg-type]
    return raised.value


@pytest.mark.parametrize("rejection", sorted(REJECTIONS))
def test_every_path_refuses_a_rejection_alike(rejection: int) -> None:
    single = _single(rejection)
    item = outcome_of(ledger_jobs_pb2.DraftOutcome(rejection=rejection, detail="why")).error  # type: ignore[arg-type]
    event = refused(rejection, "why")
    assert item is not None
    for error in (item, event):
        assert (type(error), error.status, error.kind, error.code, error.detail) == (
            type(single),
            single.status,
            single.kind,
            single.code,
            single.detail,
        )
    # A streamed item carries the status the unary call ends with.
    assert item_error(item).SerializeToString() == status_of(single).SerializeToString()


def test_a_batch_item_in_flight_is_409_aborted_not_429() -> None:
    item = outcome_of(ledger_jobs_pb2.DraftOutcome(rejection=ledger_pb2.REJECTION_IDEMPOTENCY_IN_FLIGHT)).error
    assert isinstance(item, IdempotencyConflict)
    assert (item.status, item.kind, item.code) == (409, "idempotency-in-flight", grpc.StatusCode.ABORTED)
    assert item_error(item).code == code_pb2.ABORTED
    assert item.detail  # the ledger gave none: the table's default is said


def test_a_quota_rejection_is_429_resource_exhausted() -> None:
    error = refused(ledger_pb2.REJECTION_QUOTA_EXCEEDED, "")
    assert isinstance(error, QuotaExceeded)
    assert (error.status, error.code) == (429, grpc.StatusCode.RESOURCE_EXHAUSTED)
    assert error.detail == "monthly quota reached"
