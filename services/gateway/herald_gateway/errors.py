"""What can go wrong in an operation, independent of the surface that reports it.

Each error knows both of its answers: the HTTP status and problem type (`status`, `kind`,
`title`: problem+json, `herald_gateway.http.problems`) and the gRPC code
(`code`: a rich status, `herald_gateway.grpc.errors`). The operations raise them; each surface
turns them into a response in one place. What the ledger, the router or the email-sender
answered is turned into one of them by `from_rpc` (through `ask`), once, never by hand per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import grpc

from herald.grpcio.errors import field_violations
from herald.rejections import meaning_of

T = TypeVar("T")
Code = grpc.StatusCode


class GatewayError(Exception):
    status = 500
    title = "Internal error"
    kind = "internal"
    code = Code.UNAVAILABLE

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Unauthenticated(GatewayError):
    status, title, kind, code = 401, "Unauthenticated", "unauthenticated", Code.UNAUTHENTICATED


class NotFound(GatewayError):
    status, title, kind, code = 404, "Not found", "not-found", Code.NOT_FOUND


class Invalid(GatewayError):
    status, title, kind, code = 422, "Invalid request", "invalid-request", Code.INVALID_ARGUMENT

    def __init__(self, violations: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {why}" for field, why in violations))
        self.violations = violations


class Unavailable(GatewayError):
    status, title, kind = 503, "Temporarily unavailable", "unavailable"


class Conflict(GatewayError):
    status, title, kind, code = 409, "Conflict", "conflict", Code.ALREADY_EXISTS


class InvalidCredential(GatewayError):
    status, title, kind = 422, "The provider rejected the credential", "invalid-credential"
    code = Code.FAILED_PRECONDITION


class ProviderUnreachable(GatewayError):
    status, title, kind = 503, "The provider could not be reached", "provider-unreachable"


class RateLimited(GatewayError):
    status, title, kind, code = 429, "Too many requests", "rate-limited", Code.RESOURCE_EXHAUSTED

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class QuotaExceeded(GatewayError):
    status, title, kind, code = 429, "Monthly quota exceeded", "quota-exceeded", Code.RESOURCE_EXHAUSTED


class IdempotencyConflict(GatewayError):
    status, title, kind = 409, "A request with this Idempotency-Key is in progress", "idempotency-in-flight"
    code = Code.ABORTED


class IdempotencyMismatch(GatewayError):
    status, title, kind = 422, "This Idempotency-Key was used with a different request", "idempotency-mismatch"
    code = Code.FAILED_PRECONDITION


class SenderDomainUnverified(GatewayError):
    status, title, kind = 422, "The sending domain is not verified", "sender-domain-unverified"
    code = Code.FAILED_PRECONDITION


class ProviderRefused(GatewayError):
    status, title, kind = 422, "The provider refused the request", "provider-refused"
    code = Code.FAILED_PRECONDITION


class NotRetryable(GatewayError):
    status, title, kind, code = 409, "Only a failed job can be retried", "not-retryable", Code.FAILED_PRECONDITION


class TargetDisabled(GatewayError):
    status, title, kind, code = 409, "The webhook target is disabled", "target-disabled", Code.FAILED_PRECONDITION


# The error a ledger rejection (herald.rejections) is, by its problem kind.
_BY_KIND: dict[str, type[GatewayError]] = {
    cls.kind: cls for cls in (QuotaExceeded, SenderDomainUnverified, IdempotencyMismatch, IdempotencyConflict)
}
_BY_KIND[Unauthenticated.kind] = Unauthenticated


def refused(rejection: int, detail: str) -> GatewayError:
    """The error a submission's (or an event's) rejection by the ledger is, on every path."""
    meaning = meaning_of(rejection)
    return _BY_KIND[meaning.kind](detail or meaning.default_detail)


# Overrides of `from_rpc` for one call: a status code that means something particular there.
Overrides = Mapping[grpc.StatusCode, Callable[[grpc.aio.AioRpcError], GatewayError]]


def from_rpc(error: grpc.aio.AioRpcError, what: str, overrides: Overrides | None = None) -> GatewayError:
    """What a downstream service's status means to the caller; `what` names the thing asked about."""
    code = error.code()
    if overrides and code in overrides:
        return overrides[code](error)
    if code == grpc.StatusCode.NOT_FOUND:
        return NotFound(f"{what} not found")
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return Invalid(field_violations(error) or [("request", error.details() or "invalid")])
    if code == grpc.StatusCode.ALREADY_EXISTS:
        return Conflict(f"{what} already exists")
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return Unavailable(f"{what}: {error.details()}")
    return Unavailable(f"{what}: a dependency is unavailable; retry shortly")


async def ask(call: Awaitable[T], what: str, overrides: Overrides | None = None) -> T:
    """Awaits one call to the ledger, router or email-sender: its answer, or the GatewayError it means."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise from_rpc(error, what, overrides) from error


# The email-sender's answers about a provider's own API (domains).
PROVIDER_OVERRIDES: Overrides = {
    grpc.StatusCode.FAILED_PRECONDITION: lambda e: ProviderRefused(e.details() or "the provider refused"),
    grpc.StatusCode.UNAVAILABLE: lambda e: ProviderUnreachable(e.details() or "the provider could not be reached"),
}
