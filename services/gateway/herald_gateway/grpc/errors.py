"""GatewayError → gRPC status, in one place: the status a unary call ends with and the
`ItemError` a streamed batch item carries are the same value (`status_of`), and every RPC of a
servicer turns a raised GatewayError into it through `answers_errors`, so no method catches."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from herald.grpcio.context import Context
from herald.v1 import gateway_pb2
from herald_gateway.errors import Code, GatewayError, Invalid, NotFound, OutOfScope
from herald_gateway.grpc.audit import record_rpc
from herald_gateway.grpc.metadata import CURRENT_RPC

ServicerT = TypeVar("ServicerT", bound=type)


def _details(error: GatewayError) -> list[Message]:
    code = error.code
    if code == Code.INVALID_ARGUMENT and isinstance(error, Invalid):
        violations = [error_details_pb2.BadRequest.FieldViolation(field=f, description=d) for f, d in error.violations]
        return [error_details_pb2.BadRequest(field_violations=violations)]
    if code == Code.RESOURCE_EXHAUSTED:
        found: list[Message] = [
            error_details_pb2.QuotaFailure(
                violations=[error_details_pb2.QuotaFailure.Violation(subject="tenant", description=error.detail)]
            )
        ]
        retry_after_s = getattr(error, "retry_after_s", 0)
        if retry_after_s:
            found.append(error_details_pb2.RetryInfo(retry_delay={"seconds": retry_after_s}))
        return found
    if code == Code.FAILED_PRECONDITION:
        violation = error_details_pb2.PreconditionFailure.Violation(type="STATE", description=error.detail)
        return [error_details_pb2.PreconditionFailure(violations=[violation])]
    if code in (Code.NOT_FOUND, Code.ALREADY_EXISTS):
        what = error.detail.removesuffix(" not found") if isinstance(error, NotFound) else error.detail
        return [error_details_pb2.ResourceInfo(resource_type=what)]
    if isinstance(error, OutOfScope):
        return [error_details_pb2.ErrorInfo(reason="MISSING_SCOPE", domain="herald", metadata={"scope": error.scope})]
    if code == Code.UNAUTHENTICATED:
        return [error_details_pb2.ErrorInfo(reason="UNAUTHENTICATED", domain="herald")]
    if code == Code.ABORTED:
        return [error_details_pb2.ErrorInfo(reason="IN_FLIGHT", domain="herald")]
    return [error_details_pb2.RetryInfo(retry_delay={"seconds": 1})]


def status_of(error: GatewayError) -> status_pb2.Status:
    """The rich status an error is on gRPC: its code, its detail and what a client can act on."""
    message = f"invalid request: {error.detail}" if isinstance(error, Invalid) else error.detail
    packed = []
    for detail in _details(error):
        box = any_pb2.Any()
        box.Pack(detail)
        packed.append(box)
    return status_pb2.Status(code=error.code.value[0], message=message, details=packed)


def item_error(error: GatewayError) -> gateway_pb2.ItemError:
    """The status the unary call would end with, as the value a streamed item carries."""
    status = status_of(error)
    return gateway_pb2.ItemError(code=status.code, message=status.message, details=status.details)


async def abort(context: Context, error: GatewayError) -> None:
    await context.abort_with_status(rpc_status.to_status(status_of(error)))


def _unary(method: Callable[..., Any], service: str, name: str) -> Callable[..., Any]:
    @functools.wraps(method)
    async def answering(self: Any, request: Any, context: Context) -> Any:
        CURRENT_RPC.set(name)
        try:
            response = await method(self, request, context)
        except GatewayError as error:
            await abort(context, error)
            return None
        await record_rpc(self, service, name, request, response, context)
        return response

    return answering


def _streaming(method: Callable[..., Any], service: str, name: str) -> Callable[..., Any]:
    @functools.wraps(method)
    async def answering(self: Any, request: Any, context: Context) -> Any:
        CURRENT_RPC.set(name)
        try:
            async for answer in method(self, request, context):
                yield answer
        except GatewayError as error:
            await abort(context, error)

    return answering


def answers_errors(service: str) -> Callable[[ServicerT], ServicerT]:
    """Wraps every method of the servicer that is an RPC of `service` (gateway.proto) so a
    GatewayError it raises ends the call with `status_of(error)`; each records its name
    (`CURRENT_RPC`) for the scope check, and a unary one that succeeded is recorded in the
    audit log when it changed configuration (`grpc.audit`)."""

    def wrap(cls: ServicerT) -> ServicerT:
        for method in gateway_pb2.DESCRIPTOR.services_by_name[service].methods:
            own = getattr(cls, method.name)
            wrapper = _streaming if inspect.isasyncgenfunction(own) else _unary
            setattr(cls, method.name, wrapper(own, service, method.name))
        return cls

    return wrap
