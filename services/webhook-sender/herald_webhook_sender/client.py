"""One HTTP call to a receiver, classified as the retry logic needs it, with what the
receiver answered kept for the attempt record: its headers (capped, cookies and credentials
left out) and the start of its body (capped; a receiver cannot make us read more)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx

from herald.v1 import common_pb2

USER_AGENT = "Herald-Webhooks/0.1"
RESPONSE_EXCERPT_BYTES = 4096
RESPONSE_HEADERS_MAX = 50
RESPONSE_HEADERS_BYTES = 4096
RESPONSE_HEADER_VALUE_CHARS = 512
# Never recorded: they may carry a session or a credential.
UNRECORDED_HEADERS = frozenset({"set-cookie", "set-cookie2", "cookie", "authorization", "proxy-authorization"})


@dataclass(frozen=True)
class CallResult:
    """What happened, unjudged: the retry policy decides what it means."""

    status_code: int | None
    retry_after: str | None
    error: BaseException | None
    duration_ms: int
    started_at: datetime
    response_headers: dict[str, str] = field(default_factory=dict)
    response_excerpt: str = ""


def _text(raw: str) -> str:
    """PostgreSQL text cannot hold NUL."""
    return raw.replace("\x00", "\ufffd")


def recorded_headers(headers: httpx.Headers) -> dict[str, str]:
    """At most RESPONSE_HEADERS_MAX headers and RESPONSE_HEADERS_BYTES in all, each value cut
    at RESPONSE_HEADER_VALUE_CHARS; repeated headers are joined with ", "."""
    kept: dict[str, str] = {}
    size = 0
    for name, value in headers.multi_items():
        key = name.lower()
        if key in UNRECORDED_HEADERS:
            continue
        value = _text(value[:RESPONSE_HEADER_VALUE_CHARS])
        joined = f"{kept[key]}, {value}" if key in kept else value
        new_size = size - (len(key) + len(kept[key]) if key in kept else 0) + len(key) + len(joined)
        if (key not in kept and len(kept) >= RESPONSE_HEADERS_MAX) or new_size > RESPONSE_HEADERS_BYTES:
            continue
        kept[key] = joined
        size = new_size
    return kept


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
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk[: RESPONSE_EXCERPT_BYTES - len(body)]
                if len(body) >= RESPONSE_EXCERPT_BYTES:
                    break
        elapsed = int((time.perf_counter() - started) * 1000)
        return CallResult(
            response.status_code,
            response.headers.get("retry-after"),
            None,
            elapsed,
            started_at,
            recorded_headers(response.headers),
            _text(bytes(body).decode("utf-8", errors="replace")),
        )
    except httpx.HTTPError as error:
        elapsed = int((time.perf_counter() - started) * 1000)
        return CallResult(None, None, error, elapsed, started_at)
