"""What the sync and async clients share: one request described once (`Op`), the headers every
call carries, when to retry and how long to wait, and how an answer becomes a model or an error."""

from __future__ import annotations

import datetime
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar

import httpx

from herald_client.errors import ApiError, error_for

T = TypeVar("T")
VERSION = "0.1.0"
DEFAULT_BASE_URL = "http://127.0.0.1:8080"
# Worth another try: the rate limit (429, which says when) and a dependency briefly down (503).
RETRIED = frozenset({429, 503})


@dataclass(frozen=True)
class Op(Generic[T]):
    """One API call: method, path, body or query, and how its answer is read."""

    method: str
    path: str
    parse: Callable[[Any], T]
    json: Any = None
    params: dict[str, str] = field(default_factory=dict)
    idempotency_key: str | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` more tries after the first on 429, 503 or a connection failure, waiting what
    `Retry-After` says (at most `max_wait_s`) or else an exponential backoff with jitter."""

    max_retries: int = 3
    backoff_s: float = 0.5
    max_wait_s: float = 30.0

    def wait(self, attempt: int, response: httpx.Response | None) -> float:
        said = retry_after(response) if response is not None else None
        if said is not None:
            return min(said, self.max_wait_s)
        return min(self.backoff_s * 2.0**attempt * (0.5 + random.random() / 2), self.max_wait_s)


def retry_after(response: httpx.Response) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((when - datetime.datetime.now(datetime.timezone.utc)).total_seconds(), 0.0)  # noqa: UP017 (Python 3.9)


def headers(api_key: str, op: Op[Any]) -> dict[str, str]:
    """Every call: the key and a user agent; every POST: an Idempotency-Key, so that the retries
    (ours, or the caller's after a timeout) never make a second job."""
    sent = {"authorization": f"Bearer {api_key}", "user-agent": f"herald-client-python/{VERSION}"}
    if op.method == "POST":
        sent["idempotency-key"] = op.idempotency_key or str(uuid.uuid4())
    return sent


def should_retry(response: httpx.Response) -> bool:
    return response.status_code in RETRIED


def result(op: Op[T], response: httpx.Response) -> T:
    """The answer as the op's model, or its problem as an exception."""
    if response.is_success:
        return op.parse(response.json() if response.content else None)
    raise failure(response)


def failure(response: httpx.Response) -> ApiError:
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        problem = {"title": response.reason_phrase, "detail": response.text[:500], "status": response.status_code}
    return error_for(response.status_code, problem, retry_after(response))


def dropped(values: dict[str, Any]) -> dict[str, Any]:
    """The body without the arguments left unset."""
    return {k: v for k, v in values.items() if v is not None}
