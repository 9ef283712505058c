"""One HTTP call to a receiver, classified as the retry logic needs it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

from herald.v1 import common_pb2

USER_AGENT = "Herald-Webhooks/0.1"
RESPONSE_EXCERPT_BYTES = 4096
# 4xx answers that say "later", not "never".
RETRYABLE_CLIENT_ERRORS = frozenset({408, 409, 425, 429})


@dataclass(frozen=True)
class CallResult:
    outcome: int  # common_pb2.AttemptOutcome
    status_code: int
    duration_ms: int
    error: str
    started_at: datetime


def classify(status_code: int) -> int:
    if 200 <= status_code < 300:
        return common_pb2.ATTEMPT_OUTCOME_SUCCEEDED
    if status_code >= 500 or status_code in RETRYABLE_CLIENT_ERRORS:
        return common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE
    return common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE


async def call_receiver(
    client: httpx.AsyncClient, job_id: str, request: common_pb2.WebhookRequest, signature: dict[str, str]
) -> CallResult:
    headers = dict(request.headers)
    headers["content-type"] = request.content_type or "application/json"
    headers["user-agent"] = USER_AGENT
    headers["webhook-id"] = job_id
    headers.update(signature)
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    try:
        async with client.stream("POST", request.url, content=request.body, headers=headers) as response:
            excerpt = b""
            async for chunk in response.aiter_bytes():
                excerpt += chunk
                if len(excerpt) >= RESPONSE_EXCERPT_BYTES:
                    break
        elapsed = int((time.perf_counter() - started) * 1000)
        outcome = classify(response.status_code)
        error = "" if outcome == common_pb2.ATTEMPT_OUTCOME_SUCCEEDED else f"receiver answered {response.status_code}"
        return CallResult(outcome, response.status_code, elapsed, error, started_at)
    except httpx.TimeoutException:
        error = "timed out"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
    elapsed = int((time.perf_counter() - started) * 1000)
    return CallResult(common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE, 0, elapsed, error, started_at)
