"""Per-tenant rate limits shared by every gateway replica through NATS KV.

The algorithm is an exact sliding-window log: the KV value holds the accept times
(ms) of the tenant's last minute; a request is admitted when fewer than `limit`
fall inside the trailing 60 s. Unlike a fixed window it never lets 2x through at a
boundary, and unlike a token bucket "300 requests in a minute against 200/min"
admits exactly 200, whatever their pace. Replicas update the value with
compare-and-set on its revision and retry on conflict; a per-tenant lock keeps one
replica's own requests from conflicting with each other. The log costs 8 bytes per
admitted request in the window, so limits are capped at MAX_LOGGED_LIMIT per minute
(higher limits are configured as unlimited or handled by a plan change).

If the KV store cannot be reached the decision is a setting: fail closed (default:
503, nothing admitted) or fail open; either way it is logged and counted.
"""

from __future__ import annotations

import asyncio
import logging
import math
import struct
import time
from dataclasses import dataclass

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from herald.plans import RATE_WINDOW_S
from herald.telemetry.metrics import RATE_LIMITER_ERRORS

log = logging.getLogger("herald.gateway.rate_limit")
WINDOW_MS = int(RATE_WINDOW_S * 1000)
MAX_LOGGED_LIMIT = 10_000
CAS_ATTEMPTS = 25


@dataclass(frozen=True)
class RateState:
    limit: int
    remaining: int
    # Seconds until the oldest counted request leaves the window.
    reset_s: int
    allowed: bool
    retry_after_s: int = 0
    # How many of the requests asked for were admitted (a batch asks for several at once).
    granted: int = 1


class RateLimiterUnavailable(Exception):
    pass


def _pack(stamps: list[int]) -> bytes:
    return struct.pack(f"<{len(stamps)}Q", *stamps)


def _unpack(value: bytes | None) -> list[int]:
    if not value:
        return []
    return list(struct.unpack(f"<{len(value) // 8}Q", value[: len(value) // 8 * 8]))


class RateLimiter:
    def __init__(self, fail_open: bool) -> None:
        self.kv: KeyValue | None = None
        self.fail_open = fail_open
        self._locks: dict[str, asyncio.Lock] = {}

    def _state(self, limit: int, stamps: list[int], now: int, allowed: bool, granted: int = 1) -> RateState:
        reset_ms = (stamps[0] + WINDOW_MS - now) if stamps else 0
        retry_ms = (stamps[0] + WINDOW_MS - now) if not allowed and stamps else 0
        return RateState(
            limit=limit,
            remaining=max(limit - len(stamps), 0),
            reset_s=max(math.ceil(reset_ms / 1000), 0),
            allowed=allowed,
            retry_after_s=max(math.ceil(retry_ms / 1000), 1) if not allowed else 0,
            granted=granted if allowed else 0,
        )

    async def _read(self, key: str) -> tuple[list[int], int | None]:
        assert self.kv is not None
        try:
            entry = await self.kv.get(key)
        except KeyNotFoundError:
            return [], None
        return _unpack(entry.value), entry.revision

    async def consume(self, tenant_id: str, limit: int, count: int = 1, partial: bool = False) -> RateState:
        """Admits one request, or says when the next one would be admitted.

        With `count`, admits that many at once (a batch: each item is a request), all or
        none; with `partial`, as many as fit (`granted`), the rest refused as if each had come
        alone after them (a stream's items). `allowed` is true when at least one was admitted."""
        if self.kv is None:
            return self._unavailable(limit, "the shared rate-limit state is not connected", count)
        limit = min(limit, MAX_LOGGED_LIMIT)
        lock = self._locks.setdefault(tenant_id, asyncio.Lock())
        try:
            async with lock:
                for _ in range(CAS_ATTEMPTS):
                    stamps, revision = await self._read(tenant_id)
                    now = int(time.time() * 1000)
                    stamps = [s for s in stamps if s > now - WINDOW_MS]
                    room = limit - len(stamps)
                    if room <= 0 or (room < count and not partial):
                        return self._state(limit, stamps, now, allowed=False)
                    granted = min(room, count)
                    stamps.extend([now] * granted)
                    try:
                        if revision is None:
                            await self.kv.create(tenant_id, _pack(stamps))
                        else:
                            await self.kv.update(tenant_id, _pack(stamps), last=revision)
                    except KeyWrongLastSequenceError:
                        continue
                    except Exception as error:
                        if "wrong last sequence" in str(error).lower() or "key exists" in str(error).lower():
                            continue
                        raise
                    return self._state(limit, stamps, now, allowed=True, granted=granted)
        except RateLimiterUnavailable:
            raise
        except Exception as error:
            return self._unavailable(limit, repr(error), count)
        log.warning("rate-limit state too contended; refusing this request", extra={"tenant_id": tenant_id})
        return RateState(limit, 0, 1, allowed=False, retry_after_s=1, granted=0)

    async def peek(self, tenant_id: str, limit: int) -> RateState | None:
        """The current state without counting a request (for reads)."""
        if self.kv is None:
            return None
        try:
            stamps, _ = await self._read(tenant_id)
        except Exception:
            return None
        now = int(time.time() * 1000)
        return self._state(min(limit, MAX_LOGGED_LIMIT), [s for s in stamps if s > now - WINDOW_MS], now, True)

    def _unavailable(self, limit: int, why: str, count: int = 1) -> RateState:
        decision = "open" if self.fail_open else "closed"
        RATE_LIMITER_ERRORS.labels(decision).inc()
        log.error("rate limiter unavailable", extra={"decision": decision, "error": why})
        if self.fail_open:
            return RateState(limit, limit, 0, allowed=True, granted=count)
        raise RateLimiterUnavailable(why)
