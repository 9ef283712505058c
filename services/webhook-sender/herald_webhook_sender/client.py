"""One HTTP call to a receiver, classified as the retry logic needs it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

from herald.v1 import common_pb2

USER_AGENT = "Herald-Webhooks/0.1"
RESPONSE_EXCERPT_BYTES = 4096


@dataclass(frozen=True)
class CallResult:
    """What happened, unjudged: the retry policy decides what it means."""

    status_code: int | None
    retry_after: str | None
    error: BaseException | None
    duration_ms: int
    started_at: datetime


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
            # Read at most an excerpt: a receiver cannot make us download a large body.
            read = 0
            async for chunk in response.aiter_bytes():
                read += len(chunk)
                if read >= RESPONSE_EXCERPT_BYTES:
                    break
        elapsed = int((time.perf_counter() - started) * 1000)
        return CallResult(response.status_code, response.headers.get("retry-after"), None, elapsed, started_at)
    except httpx.HTTPError as error:
        elapsed = int((time.perf_counter() - started) * 1000)
        return CallResult(None, None, error, elapsed, started_at)
