"""What can go wrong in a handler, independent of the transport that reports it
(problem+json on HTTP, a rich status on gRPC)."""

from __future__ import annotations


class GatewayError(Exception):
    status = 500
    title = "Internal error"
    kind = "internal"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Unauthenticated(GatewayError):
    status = 401
    title = "Unauthenticated"
    kind = "unauthenticated"


class NotFound(GatewayError):
    status = 404
    title = "Not found"
    kind = "not-found"


class Invalid(GatewayError):
    status = 422
    title = "Invalid request"
    kind = "invalid-request"

    def __init__(self, violations: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {why}" for field, why in violations))
        self.violations = violations


class Unavailable(GatewayError):
    status = 503
    title = "Temporarily unavailable"
    kind = "unavailable"


class Conflict(GatewayError):
    status = 409
    title = "Conflict"
    kind = "conflict"


class InvalidCredential(GatewayError):
    status = 422
    title = "The provider rejected the credential"
    kind = "invalid-credential"


class ProviderUnreachable(GatewayError):
    status = 503
    title = "The provider could not be reached"
    kind = "provider-unreachable"


class RateLimited(GatewayError):
    status = 429
    title = "Too many requests"
    kind = "rate-limited"

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class QuotaExceeded(GatewayError):
    status = 429
    title = "Monthly quota exceeded"
    kind = "quota-exceeded"


class IdempotencyConflict(GatewayError):
    status = 409
    title = "A request with this Idempotency-Key is in progress"
    kind = "idempotency-in-flight"


class IdempotencyMismatch(GatewayError):
    status = 422
    title = "This Idempotency-Key was used with a different request"
    kind = "idempotency-mismatch"


class SenderDomainUnverified(GatewayError):
    status = 422
    title = "The sending domain is not verified"
    kind = "sender-domain-unverified"


class ProviderRefused(GatewayError):
    status = 422
    title = "The provider refused the request"
    kind = "provider-refused"


class NotRetryable(GatewayError):
    status = 409
    title = "Only a failed job can be retried"
    kind = "not-retryable"


class TargetDisabled(GatewayError):
    status = 409
    title = "The webhook target is disabled"
    kind = "target-disabled"
