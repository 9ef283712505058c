"""Errors as exceptions: every refusal carries the gateway's problem details (RFC 9457)."""

from __future__ import annotations

from typing import Any


class HeraldError(Exception):
    """Anything the SDK raises."""


class HeraldConnectionError(HeraldError):
    """The gateway could not be reached (after the retries)."""


class ApiError(HeraldError):
    """The gateway refused the request. `problem` is its problem+json body as sent; `status`,
    `title`, `detail` and `errors` (per field, for a 422) are read from it."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        self.type = str(problem.get("type", ""))
        self.title = str(problem.get("title", ""))
        self.detail = str(problem.get("detail", ""))
        self.errors: list[dict[str, str]] = list(problem.get("errors") or [])
        super().__init__(f"{status} {self.title}: {self.detail}")


class AuthenticationError(ApiError):
    """401: no valid API key (unknown, revoked, or its tenant disabled: `detail` says which)."""


class NotFoundError(ApiError):
    """404: no such resource, or another tenant's."""


class ConflictError(ApiError):
    """409: the state forbids it (an Idempotency-Key reused with another body, a job not retryable ...)."""


class InvalidRequestError(ApiError):
    """422 (or 400, 413): the request itself is wrong; `errors` lists each field and why."""


class RateLimitedError(ApiError):
    """429 after the retries: the rate limit or the monthly quota. `retry_after` in seconds, if given."""

    def __init__(self, status: int, problem: dict[str, Any], retry_after: float | None) -> None:
        super().__init__(status, problem)
        self.retry_after = retry_after


class UnavailableError(ApiError):
    """503 (or another 5xx) after the retries: retry later with the same Idempotency-Key."""


def error_for(status: int, problem: dict[str, Any], retry_after: float | None) -> ApiError:
    if status == 429:
        return RateLimitedError(status, problem, retry_after)
    kinds: dict[int, type[ApiError]] = {
        400: InvalidRequestError,
        401: AuthenticationError,
        404: NotFoundError,
        409: ConflictError,
        413: InvalidRequestError,
        422: InvalidRequestError,
    }
    if status >= 500:
        return UnavailableError(status, problem)
    return kinds.get(status, ApiError)(status, problem)
