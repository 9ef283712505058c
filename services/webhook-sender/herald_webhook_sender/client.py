"""One HTTP call to a receiver, classified as the retry logic needs it, with what the
receiver answered kept for the attempt record: its headers (capped, cookies and credentials
left out) and the start of its body (capped; a receiver cannot make us read more). The call
itself, behind the target guard, is `herald.webhooks.receiver_client`."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.retry_policy import ReceiverCallError
from herald.webhooks.target_guard import TargetRefused

USER_AGENT = "Herald-Webhooks/0.1"
RESPONSE_EXCERPT_BYTES = 4096  # the client's excerpt cap (ReceiverClient's excerpt_bytes)
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


def recorded_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """At most RESPONSE_HEADERS_MAX headers and RESPONSE_HEADERS_BYTES in all, each value cut
    at RESPONSE_HEADER_VALUE_CHARS; repeated headers are joined with ", "."""
    kept: dict[str, str] = {}
    size = 0
    for name, value in headers:
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


def delivery_headers(
    job_id: str, request: common_pb2.WebhookRequest, signature: dict[str, str], tenant_headers: Mapping[str, str]
) -> dict[str, str]:
    """The tenant's headers (opened: herald.webhooks.sealed_headers), then Herald's own over
    them. Names are merged case-insensitively, so a tenant's `Content-Type` or `user-agent`
    replaces nothing twice: the receiver gets one Content-Type (the request's), one
    User-Agent (Herald's) and Herald's id and signature."""
    headers = {name.lower(): value for name, value in tenant_headers.items()}
    headers["content-type"] = request.content_type or "application/json"
    headers["user-agent"] = USER_AGENT
    headers["webhook-id"] = job_id
    headers.update(signature)
    return headers


async def call_receiver(
    client: ReceiverClient,
    job_id: str,
    request: common_pb2.WebhookRequest,
    signature: dict[str, str],
    tenant_headers: Mapping[str, str] | None = None,
) -> CallResult:
    """`tenant_headers`: the request's headers opened (None: the request's as they are)."""
    headers = delivery_headers(
        job_id, request, signature, request.headers if tenant_headers is None else tenant_headers
    )
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    try:
        answer = await client.post(request.url, request.body, headers)
    except (TargetRefused, ReceiverCallError) as error:
        elapsed = int((time.perf_counter() - started) * 1000)
        return CallResult(None, None, error, elapsed, started_at)
    elapsed = int((time.perf_counter() - started) * 1000)
    retry_after = next((value for name, value in answer.headers if name.lower() == "retry-after"), None)
    return CallResult(
        answer.status_code,
        retry_after,
        None,
        elapsed,
        started_at,
        recorded_headers(answer.headers),
        _text(answer.excerpt.decode("utf-8", errors="replace")),
    )
