"""What can go wrong in an operation, independent of the surface that reports it.

Each error knows both of its answers: the HTTP status and problem type (`status`, `kind`,
`title`: problem+json, `herald_gateway.http.problems`) and the gRPC code
(`code`: a rich status, `herald_gateway.grpc.errors`). The operations raise them; each surface
turns them into a response in one place. What the ledger, the router or the email-sender
answered is turned into one of them by `from_rpc` (through `ask`), once, never by hand per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import grpc

from herald.grpcio.errors import field_violations
from herald.rejections import meaning_of

T = TypeVar("T")
Code = grpc.StatusCode


class GatewayError(Exception):
    """The base of every error an operation raises. A subclass names its answers once, as class
    keywords (`class NotFound(GatewayError, status=404, ...)`); `code` defaults to UNAVAILABLE."""

    status: ClassVar[int] = 500
    title: ClassVar[str] = "Internal error"
    kind: ClassVar[str] = "internal"
    code: ClassVar[grpc.StatusCode] = Code.UNAVAILABLE

    def __init_subclass__(
        cls, *, status: int, title: str, kind: str, code: grpc.StatusCode = Code.UNAVAILABLE, **rest: Any
    ) -> None:
        super().__init_subclass__(**rest)
        cls.status, cls.title, cls.kind, cls.code = status, title, kind, code

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Unauthenticated(
    GatewayError, status=401, title="Unauthenticated", kind="unauthenticated", code=Code.UNAUTHENTICATED
):
    pass


class OutOfScope(
    GatewayError, status=403, title="Outside the API key's scopes", kind="missing-scope", code=Code.PERMISSION_DENIED
):
    """The key is valid but was not given the scope this call needs (`herald_gateway.scopes`)."""

    def __init__(self, scope: str) -> None:
        super().__init__(f"this API key lacks the scope `{scope}` this call needs")
        self.scope = scope


class NotFound(GatewayError, status=404, title="Not found", kind="not-found", code=Code.NOT_FOUND):
    pass


class Invalid(GatewayError, status=422, title="Invalid request", kind="invalid-request", code=Code.INVALID_ARGUMENT):
    def __init__(self, violations: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {why}" for field, why in violations))
        self.violations = violations


def refuse_invalid(problems: Sequence[tuple[str, str]]) -> None:
    """Raises Invalid with the problems, if there are any: where every check of a request ends."""
    if problems:
        raise Invalid(list(problems))


class Unavailable(GatewayError, status=503, title="Temporarily unavailable", kind="unavailable"):
    pass


class Conflict(GatewayError, status=409, title="Conflict", kind="conflict", code=Code.ALREADY_EXISTS):
    pass


class InvalidCredential(
    GatewayError,
    status=422,
    title="The provider rejected the credential",
    kind="invalid-credential",
    code=Code.FAILED_PRECONDITION,
):
    pass


class ProviderUnreachable(
    GatewayError, status=503, title="The provider could not be reached", kind="provider-unreachable"
):
    pass


class RateLimited(
    GatewayError, status=429, title="Too many requests", kind="rate-limited", code=Code.RESOURCE_EXHAUSTED
):
    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class QuotaExceeded(
    GatewayError, status=429, title="Monthly quota exceeded", kind="quota-exceeded", code=Code.RESOURCE_EXHAUSTED
):
    pass


class IdempotencyConflict(
    GatewayError,
    status=409,
    title="A request with this Idempotency-Key is in progress",
    kind="idempotency-in-flight",
    code=Code.ABORTED,
):
    pass


class IdempotencyMismatch(
    GatewayError,
    status=422,
    title="This Idempotency-Key was used with a different request",
    kind="idempotency-mismatch",
    code=Code.FAILED_PRECONDITION,
):
    pass


class SenderDomainUnverified(
    GatewayError,
    status=422,
    title="The sending domain is not verified",
    kind="sender-domain-unverified",
    code=Code.FAILED_PRECONDITION,
):
    pass


class ProviderRefused(
    GatewayError,
    status=422,
    title="The provider refused the request",
    kind="provider-refused",
    code=Code.FAILED_PRECONDITION,
):
    pass


class NotRetryable(
    GatewayError,
    status=409,
    title="Only a failed job can be retried",
    kind="not-retryable",
    code=Code.FAILED_PRECONDITION,
):
    pass


class TargetDisabled(
    GatewayError,
    status=409,
    title="The webhook target is disabled",
    kind="target-disabled",
    code=Code.FAILED_PRECONDITION,
):
    pass


class Unstorable(Invalid, status=Invalid.status, title=Invalid.title, kind=Invalid.kind, code=Code.INVALID_ARGUMENT):
    """A value PostgreSQL cannot store (the ledger's rejection says what kind)."""

    def __init__(self, detail: str) -> None:
        super().__init__([("request", detail)])


# The error a ledger rejection (herald.rejections) is, by its problem kind.
_BY_KIND: dict[str, type[GatewayError]] = {
    cls.kind: cls for cls in (QuotaExceeded, SenderDomainUnverified, IdempotencyMismatch, IdempotencyConflict)
}
_BY_KIND[Unauthenticated.kind] = Unauthenticated
_BY_KIND[Invalid.kind] = Unstorable


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
