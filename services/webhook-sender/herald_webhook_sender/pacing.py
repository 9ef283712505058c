"""Per-target rate limits (`rate_limit_per_min`), shared by every webhook-sender replica.

The limit is enforced as strict spacing (GCRA without burst): deliveries to a target limited
to N per minute start at least 60/N s apart, so no 60-second window ever holds more than N,
and neither does any shorter window hold more than its share plus one. The state per target
is one number, the earliest time the next delivery may start ("theoretical arrival time"),
kept in a NATS KV bucket and updated with compare-and-set on its revision, so replicas share
one schedule; a per-target lock stops one replica's own deliveries from conflicting.

A delivery that may not start yet is not attempted and not counted: the worker hands its
message back to JetStream with a delay until its turn (NAK with delay), so nothing sleeps
with a message unacknowledged. Held-back messages of one target come back spread over as many
intervals as this replica held back for it in a row lately (at most MAX_SPREAD_INTERVALS), so
a large backlog is not handed back and refused again every interval; those that lose the
race are held back again.

If the KV store cannot be reached, each replica paces on its own (in memory), so the limit
holds per replica rather than in total; that is logged and counted.
"""

from __future__ import annotations

import asyncio
import logging
import random
import struct
import time
from collections.abc import Callable

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue
from prometheus_client import Counter

log = logging.getLogger("herald.webhook_sender.pacing")

CAS_ATTEMPTS = 10
MAX_SPREAD_INTERVALS = 50
# The KV bucket forgets a target after this long without deliveries (its state is then moot).
STATE_TTL_S = 3600.0

HELD_BACK = Counter("herald_webhook_rate_limited_total", "Webhook deliveries held back by their target's rate limit.")
PACER_FALLBACKS = Counter(
    "herald_webhook_pacer_fallbacks_total", "Target rate-limit checks made per replica because NATS KV failed."
)


def interval_s(limit_per_min: int) -> float:
    return 60.0 / limit_per_min


def _pack(ms: int) -> bytes:
    return struct.pack("<Q", ms)


def _unpack(value: bytes | None) -> int:
    if not value or len(value) < 8:
        return 0
    return int(struct.unpack("<Q", value[:8])[0])


class Pacer:
    """`take(target_id, limit)` says 0.0 (go now; the slot is taken) or how many seconds to
    hold the delivery back. `clock` is wall-clock seconds (replicas compare times)."""

    def __init__(
        self,
        kv: KeyValue | None,
        *,
        clock: Callable[[], float] = time.time,
        spread: Callable[[], float] = random.random,
    ) -> None:
        self.kv = kv
        self.clock = clock
        self.spread = spread
        self._locks: dict[str, asyncio.Lock] = {}
        self._local: dict[str, int] = {}
        # target -> (the last hold, holds in a row less than an interval apart): the backlog.
        self._held: dict[str, tuple[float, int]] = {}

    async def take(self, target_id: str, limit_per_min: int) -> float:
        if limit_per_min <= 0:
            return 0.0
        step_ms = max(int(interval_s(limit_per_min) * 1000), 1)
        lock = self._locks.setdefault(target_id, asyncio.Lock())
        async with lock:
            wait_ms: int | None = None
            if self.kv is not None:
                try:
                    wait_ms = await self._take_shared(target_id, step_ms)
                except Exception as error:
                    PACER_FALLBACKS.inc()
                    log.warning("target pacing state unavailable; pacing per replica", extra={"error": repr(error)})
            if wait_ms is None:
                wait_ms = self._take_local(target_id, step_ms)
        if wait_ms <= 0:
            return 0.0
        HELD_BACK.inc()
        return (wait_ms + self.spread() * step_ms * self._backlog(target_id, step_ms)) / 1000

    def _backlog(self, target_id: str, step_ms: int) -> int:
        """How many intervals to spread this hold over: the holds for the target since holds
        began arriving less than one interval apart (a backlog), capped."""
        now = self.clock()
        last, count = self._held.get(target_id, (now, 0))
        if now - last > step_ms / 1000:
            count = 0  # the last backlog drained
        count += 1
        self._held[target_id] = (now, count)
        if len(self._held) > 10_000:
            self._held.clear()
        return min(count, MAX_SPREAD_INTERVALS)

    def _take_local(self, target_id: str, step_ms: int) -> int:
        now = int(self.clock() * 1000)
        due = self._local.get(target_id, 0)
        if due > now:
            return due - now
        self._local[target_id] = now + step_ms
        return 0

    async def _take_shared(self, target_id: str, step_ms: int) -> int:
        assert self.kv is not None
        for _ in range(CAS_ATTEMPTS):
            try:
                entry = await self.kv.get(target_id)
                due, revision = _unpack(entry.value), entry.revision
            except KeyNotFoundError:
                due, revision = 0, None
            now = int(self.clock() * 1000)
            if due > now:
                return due - now
            try:
                if revision is None:
                    await self.kv.create(target_id, _pack(now + step_ms))
                else:
                    await self.kv.update(target_id, _pack(now + step_ms), last=revision)
            except KeyWrongLastSequenceError:
                continue  # another replica took a slot meanwhile: look again
            except Exception as error:
                text = str(error).lower()
                if "wrong last sequence" in text or "key exists" in text:
                    continue
                raise
            return 0
        # Heavily contended: let this one wait one interval rather than spin.
        return step_ms
