"""gRPC errors that carry a google.rpc.Status with details, so clients get the
field that was wrong and why, not just a code."""

from __future__ import annotations

from typing import NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status


def _status(code: int, message: str, *details: object) -> grpc.Status:
    packed = []
    for detail in details:
        box = any_pb2.Any()
        box.Pack(detail)  # type: ignore[arg-type]
        packed.append(box)
    return rpc_status.to_status(status_pb2.Status(code=code, message=message, details=packed))  # type: ignore[no-any-return]


async def abort_invalid(
    context: grpc.aio.ServicerContext[object, object], violations: list[tuple[str, str]]
) -> NoReturn:
    request = error_details_pb2.BadRequest(
        field_violations=[error_details_pb2.BadRequest.FieldViolation(field=f, description=d) for f, d in violations]
    )
    summary = "; ".join(f"{f}: {d}" for f, d in violations)
    await context.abort_with_status(_status(code_pb2.INVALID_ARGUMENT, f"invalid request: {summary}", request))
    raise AssertionError("unreachable")


async def abort_not_found(context: grpc.aio.ServicerContext[object, object], what: str) -> NoReturn:
    await context.abort_with_status(
        _status(code_pb2.NOT_FOUND, f"{what} not found", error_details_pb2.ResourceInfo(resource_type=what))
    )
    raise AssertionError("unreachable")


async def abort_unauthenticated(context: grpc.aio.ServicerContext[object, object], why: str) -> NoReturn:
    await context.abort_with_status(
        _status(
            code_pb2.UNAUTHENTICATED,
            why,
            error_details_pb2.ErrorInfo(reason="UNAUTHENTICATED", domain="herald"),
        )
    )
    raise AssertionError("unreachable")


async def abort_unavailable(context: grpc.aio.ServicerContext[object, object], why: str) -> NoReturn:
    await context.abort_with_status(
        _status(code_pb2.UNAVAILABLE, why, error_details_pb2.RetryInfo(retry_delay={"seconds": 1}))
    )
    raise AssertionError("unreachable")


def field_violations(error: grpc.aio.AioRpcError) -> list[tuple[str, str]]:
    """The BadRequest violations carried by an error, for callers that translate them."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    if status is None:
        return []
    out: list[tuple[str, str]] = []
    for detail in status.details:
        request = error_details_pb2.BadRequest()
        if detail.Is(request.DESCRIPTOR):
            detail.Unpack(request)
            out.extend((v.field, v.description) for v in request.field_violations)
    return out


async def abort_failed_precondition(context: grpc.aio.ServicerContext[object, object], why: str) -> NoReturn:
    await context.abort_with_status(
        _status(
            code_pb2.FAILED_PRECONDITION,
            why,
            error_details_pb2.PreconditionFailure(
                violations=[error_details_pb2.PreconditionFailure.Violation(type="STATE", description=why)]
            ),
        )
    )
    raise AssertionError("unreachable")


async def abort_already_exists(context: grpc.aio.ServicerContext[object, object], what: str) -> NoReturn:
    await context.abort_with_status(
        _status(code_pb2.ALREADY_EXISTS, f"{what} already exists", error_details_pb2.ResourceInfo(resource_type=what))
    )
    raise AssertionError("unreachable")


async def abort_resource_exhausted(
    context: grpc.aio.ServicerContext[object, object], why: str, retry_after_s: int = 0
) -> NoReturn:
    details: list[object] = [
        error_details_pb2.QuotaFailure(
            violations=[error_details_pb2.QuotaFailure.Violation(subject="tenant", description=why)]
        )
    ]
    if retry_after_s:
        details.append(error_details_pb2.RetryInfo(retry_delay={"seconds": retry_after_s}))
    await context.abort_with_status(_status(code_pb2.RESOURCE_EXHAUSTED, why, *details))
    raise AssertionError("unreachable")


async def abort_aborted(context: grpc.aio.ServicerContext[object, object], why: str) -> NoReturn:
    await context.abort_with_status(
        _status(code_pb2.ABORTED, why, error_details_pb2.ErrorInfo(reason="IN_FLIGHT", domain="herald"))
    )
    raise AssertionError("unreachable")
