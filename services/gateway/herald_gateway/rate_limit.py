"""Per-tenant rate limits shared by every gateway replica through NATS KV.

The shared state of a tenant is a sliding window of one-second buckets: the KV value
holds how many requests were charged in each of the last 61 seconds and the next one (a
fixed 256 bytes, whatever the limit). A request charged in second `s` counts until second
`s + 60` is over, so any 60 s span holds at most `limit` requests, and "300 requests
in a minute against 200/min" admits exactly 200, whatever their pace (a request
leaves the window up to two seconds later than an exact log would let it: never sooner).

Replicas do not write the KV per request. A replica that needs room takes a lease:
with one compare-and-set on the value's revision it charges the request plus a slice
of the remaining room (an eighth of it) to the current second, then spends that slice
locally, without a KV call, until the second ends. Near the limit the slices shrink to
nothing, so the last requests of a window are charged one by one. A replica may refuse
while another still holds slices it leased (at most an eighth of the room there was, twice):
the holder spends them or hands them back within 2.25 s: a window never admits more than
its limit, and admits all of it while requests keep coming. A request therefore costs at
most a KV get and a compare-and-set, and at high rates a small fraction of one: the cost
no longer grows with the limit (limits up to the int32 the ledger stores).

A tenant that keeps sending would otherwise wait for a round trip at every second's turn
(its first request of the second takes the lease, the others queue behind it; measured at
3 to 11 ms under load, docs/performance.md, session 17). So the first request spent from a
lease also starts, in the background, the lease of the next second: charged to that second,
and spendable from the moment it is taken (a request spent early is counted later than it
came, which only ever admits less). The unspent rest of a lease that ended goes back in the
next compare-and-set (or, when no request comes, in one of its own shortly after).

A replica remembers the window as it last wrote it, so where no other
replica writes a tenant's window (one gateway, or a tenant one replica serves) the next
lease is the compare-and-set alone: the requests that find their second's lease gone wait
for one round trip to NATS, not two. A tenant whose window another replica wrote is read
first again for `SHARED_S`, so a fleet pays no failed attempt per lease. `kv_ops` counts
the KV operations, for tests and the herald_rate_limiter_kv_ops_total metric.

If the KV store cannot be reached the decision is a setting: fail closed (default:
503, nothing admitted beyond what is already leased) or fail open; either way it is
logged and counted.
"""

from __future__ import annotations

import asyncio
import logging
import math
import struct
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from herald.plans import RATE_WINDOW_S
from herald.telemetry.metrics import RATE_LIMITER_ERRORS, RATE_LIMITER_KV_OPS

log = logging.getLogger("herald.gateway.rate_limit")
WINDOW_S = int(RATE_WINDOW_S)
# Buckets alive at once: the next second (leased ahead), the current one and the 60 before it.
BUCKETS = WINDOW_S + 2
CAS_ATTEMPTS = 25
# A lease takes at most this fraction (1/LEASE_SHARE) of the room left beyond the request itself.
LEASE_SHARE = 8
# How long after its second ends an unspent lease is handed back when no request did it.
RETURN_DELAY_S = 0.25
# After another replica wrote a tenant's window, how long its leases start with a read.
SHARED_S = 60.0
_LAYOUT = struct.Struct(f"<Q{BUCKETS}I")
# The layout before the next second was leased ahead (61 buckets), still read: a fleet upgraded
# replica by replica keeps its windows.
_EARLIER_LAYOUT = struct.Struct(f"<Q{BUCKETS - 1}I")


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


def unpack(value: bytes | None, now_s: int) -> dict[int, int]:
    """The live buckets of a stored window: second -> requests charged in it."""
    layout = _LAYOUT if value and len(value) == _LAYOUT.size else _EARLIER_LAYOUT
    if not value or len(value) != layout.size:
        return {}
    newest, *counts = layout.unpack(value)
    live = {}
    for second in range(max(newest - len(counts) + 1, now_s - WINDOW_S), newest + 1):
        count = counts[second % len(counts)]
        if count:
            live[second] = count
    return live


def pack(buckets: dict[int, int], now_s: int) -> bytes:
    """The window as stored; a replica whose clock runs behind keeps the seconds it has not reached."""
    newest = max(now_s, *buckets) if buckets else now_s
    counts = [0] * BUCKETS
    for second, count in buckets.items():
        if second > newest - BUCKETS and count > 0:
            counts[second % BUCKETS] = count
    return _LAYOUT.pack(newest, *counts)


@dataclass
class Lease:
    """Room this replica charged to the tenant's window in `second` and has not spent yet:
    spendable until that second ends (from before it starts, for a lease taken ahead)."""

    second: int
    left: int
    # What the window showed when the lease was taken (for the RateLimit-* headers).
    charged: int
    oldest: int


class RateLimiter:
    def __init__(self, fail_open: bool) -> None:
        self.kv: KeyValue | None = None
        self.fail_open = fail_open
        self.kv_ops = 0
        self._locks: dict[str, asyncio.Lock] = {}
        # Per tenant, oldest first: at most the current second's lease and the next one's.
        self._leases: dict[str, list[Lease]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # Per tenant, the second in which the next second's lease was last tried: once a second.
        self._ahead_tried: dict[str, int] = {}
        # Each tenant's window (value, revision) as this replica last read or wrote it, and until
        # when (monotonic) it is known to be written by other replicas too.
        self._known: dict[str, tuple[bytes | None, int | None]] = {}
        self._shared_until: dict[str, float] = {}

    @staticmethod
    def _state(limit: int, charged: int, oldest: int | None, now_ms: int, allowed: bool, granted: int) -> RateState:
        wait_ms = (oldest + BUCKETS) * 1000 - now_ms if oldest is not None else 0
        return RateState(
            limit=limit,
            remaining=max(limit - charged, 0),
            reset_s=max(math.ceil(wait_ms / 1000), 0),
            allowed=allowed,
            retry_after_s=0 if allowed else max(math.ceil(wait_ms / 1000), 1),
            granted=granted if allowed else 0,
        )

    def _spendable(self, tenant_id: str, now_s: int, count: int) -> Lease | None:
        """This replica's oldest lease that has not ended and covers the whole request (a partial
        request it covers only in part goes to the window, which may have room for the rest)."""
        for lease in self._leases.get(tenant_id, ()):
            if lease.second >= now_s and lease.left >= count:
                return lease
        return None

    def _spent(self, lease: Lease, limit: int, granted: int, now_ms: int) -> RateState:
        lease.left -= granted
        # Our own unspent lease is still room for our callers.
        return self._state(limit, lease.charged - lease.left, lease.oldest, now_ms, True, granted)

    def _held(self, tenant_id: str, ended_before: int | None = None) -> dict[int, int]:
        """Takes the unspent rest of this replica's leases (only those that ended before
        `ended_before`, when given) off the fast path, to go back to the window: second -> count.
        Taken at once, so no request spends what is being handed back while the write is out."""
        held: dict[int, int] = {}
        kept = []
        for lease in self._leases.get(tenant_id, ()):
            if ended_before is None or lease.second < ended_before:
                if lease.left:
                    held[lease.second] = held.get(lease.second, 0) + lease.left
                lease.left = 0
            else:
                kept.append(lease)
        self._leases[tenant_id] = kept
        return held

    @staticmethod
    def _give_back_to(buckets: dict[int, int], held: dict[int, int]) -> None:
        for second, count in held.items():
            if second in buckets:
                buckets[second] = max(buckets[second] - count, 0)

    async def _read(self, key: str) -> tuple[bytes | None, int | None]:
        assert self.kv is not None
        self._count_op()
        try:
            entry = await self.kv.get(key)
        except KeyNotFoundError:
            self._known[key] = (None, None)
            return None, None
        self._known[key] = (entry.value, entry.revision)
        return entry.value, entry.revision

    async def _window(self, key: str) -> tuple[bytes | None, int | None]:
        """The tenant's window to compare-and-set on: as this replica last read or wrote it while no
        other replica writes it (a stale one only fails the compare-and-set), else read now."""
        known = self._known.get(key)
        if known is not None and time.monotonic() >= self._shared_until.get(key, 0.0):
            return known
        return await self._read(key)

    def _count_op(self) -> None:
        self.kv_ops += 1
        RATE_LIMITER_KV_OPS.inc()

    async def _write(self, key: str, value: bytes, revision: int | None) -> bool:
        """Compare-and-set on the revision read; False when another replica wrote first."""
        assert self.kv is not None
        self._count_op()
        self._known.pop(key, None)
        try:
            if revision is None:
                written = await self.kv.create(key, value)
            else:
                written = await self.kv.update(key, value, last=revision)
        except KeyWrongLastSequenceError:
            return self._written_by_another(key)
        except Exception as error:
            if "wrong last sequence" in str(error).lower() or "key exists" in str(error).lower():
                return self._written_by_another(key)
            raise
        self._known[key] = (value, written)
        return True

    def _written_by_another(self, key: str) -> bool:
        """A compare-and-set lost: another replica writes this window, so read it first for a while."""
        self._shared_until[key] = time.monotonic() + SHARED_S
        return False

    async def consume(self, tenant_id: str, limit: int, count: int = 1, partial: bool = False) -> RateState:
        """Admits one request, or says when the next one would be admitted.

        With `count`, admits that many at once (a batch: each item is a request), all or
        none; with `partial`, as many as fit (`granted`), the rest refused as if each had come
        alone after them (a stream's items). `allowed` is true when at least one was admitted."""
        now_ms = int(time.time() * 1000)
        lease = self._spendable(tenant_id, now_ms // 1000, count)
        if lease is not None:
            self._lease_ahead(tenant_id, limit, lease, now_ms // 1000)
            return self._spent(lease, limit, count, now_ms)
        if self.kv is None:
            return self._unavailable(limit, "the shared rate-limit state is not connected", count)
        lock = self._locks.setdefault(tenant_id, asyncio.Lock())
        try:
            async with lock:
                return await self._lease(tenant_id, limit, count, partial)
        except RateLimiterUnavailable:
            raise
        except Exception as error:
            return self._unavailable(limit, repr(error), count)

    async def _lease(self, tenant_id: str, limit: int, count: int, partial: bool) -> RateState:
        """Under the tenant's lock: spend what is leased, or charge the window for more."""
        # What this replica holds goes back first: ended, or too little for this request.
        held: dict[int, int] = {}
        for _ in range(CAS_ATTEMPTS):
            now_ms = int(time.time() * 1000)
            now_s = now_ms // 1000
            if (spendable := self._spendable(tenant_id, now_s, count)) is not None:
                if held:
                    self._return_later(tenant_id, held)
                return self._spent(spendable, limit, count, now_ms)
            for second, unspent in self._held(tenant_id).items():
                held[second] = held.get(second, 0) + unspent
            value, revision = await self._window(tenant_id)
            buckets = unpack(value, now_s)
            self._give_back_to(buckets, held)
            charged = sum(buckets.values())
            room = limit - charged
            if room <= 0 or (room < count and not partial):
                if held and not await self._write(tenant_id, pack(buckets, now_s), revision):
                    continue
                return self._state(limit, charged, min(buckets, default=None), now_ms, False, 0)
            granted = min(room, count)
            extra = (room - granted) // LEASE_SHARE
            buckets[now_s] = buckets.get(now_s, 0) + granted + extra
            if not await self._write(tenant_id, pack(buckets, now_s), revision):
                continue
            oldest = min(buckets)
            if extra:
                self._leases[tenant_id] = [Lease(now_s, extra, charged + granted + extra, oldest)]
                self._return_later(tenant_id, {now_s: 0})
            return self._state(limit, charged + granted, oldest, now_ms, True, granted)
        if held:
            self._return_later(tenant_id, held)
        log.warning("rate-limit state too contended; refusing this request", extra={"tenant_id": tenant_id})
        return RateState(limit, 0, 1, allowed=False, retry_after_s=1, granted=0)

    def _lease_ahead(self, tenant_id: str, limit: int, spending: Lease, now_s: int) -> None:
        """A request spent from this second's lease: the next second's is taken now, in the
        background, once a second at most (near the limit, or when another replica wrote first,
        the attempt may take nothing; the next second's first request then leases as before)."""
        if spending.second != now_s or self._ahead_tried.get(tenant_id) == now_s:
            return
        if any(lease.second > now_s for lease in self._leases.get(tenant_id, ())):
            return
        self._ahead_tried[tenant_id] = now_s
        self._start(self._take_ahead(tenant_id, limit))

    async def _take_ahead(self, tenant_id: str, limit: int) -> None:
        """Charges a slice of the room to the next second (and hands back what leases that ended
        left unspent, in the same write). One attempt: a lost compare-and-set leaves the next
        second's first request to take its lease as before."""
        lock = self._locks.setdefault(tenant_id, asyncio.Lock())
        held: dict[int, int] = {}
        try:
            async with lock:
                now_s = int(time.time())
                if any(lease.second > now_s for lease in self._leases.get(tenant_id, ())):
                    return
                held = self._held(tenant_id, ended_before=now_s)
                value, revision = await self._window(tenant_id)
                buckets = unpack(value, now_s)
                self._give_back_to(buckets, held)
                charged = sum(buckets.values())
                extra = (limit - charged) // LEASE_SHARE
                if extra <= 0:
                    if held and await self._write(tenant_id, pack(buckets, now_s), revision):
                        held = {}
                    return
                ahead = now_s + 1
                buckets[ahead] = buckets.get(ahead, 0) + extra
                if await self._write(tenant_id, pack(buckets, now_s), revision):
                    held = {}
                    self._leases.setdefault(tenant_id, []).append(Lease(ahead, extra, charged + extra, min(buckets)))
                    self._return_later(tenant_id, {ahead: 0})
        except Exception as error:
            log.info("next second's rate-limit lease not taken", extra={"tenant_id": tenant_id, "error": repr(error)})
        finally:
            if held:
                self._return_later(tenant_id, held)

    async def settled(self) -> None:
        """Waits for the writes under way in the background (a lease taken ahead, one handed back)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _return_later(self, tenant_id: str, held: dict[int, int]) -> None:
        """Shortly after the latest of these seconds ends: hands back `held` (rest of leases
        already taken off the fast path), and what the replica's leases of those seconds left
        unspent, if no request did it meanwhile."""
        latest = max(held)
        delay = (latest + 1) - time.time() + RETURN_DELAY_S
        asyncio.get_running_loop().call_later(
            max(delay, 0.0), lambda: self._start(self._give_back(tenant_id, dict(held)))
        )

    async def _give_back(self, tenant_id: str, held: dict[int, int]) -> None:
        lock = self._locks.setdefault(tenant_id, asyncio.Lock())
        try:
            async with lock:
                now_s = int(time.time())
                for second, unspent in self._held(tenant_id, ended_before=now_s).items():
                    held[second] = held.get(second, 0) + unspent
                held = {second: count for second, count in held.items() if count}
                for _ in range(CAS_ATTEMPTS):
                    if not held:
                        return
                    value, revision = await self._window(tenant_id)
                    buckets = unpack(value, int(time.time()))
                    self._give_back_to(buckets, held)
                    if await self._write(tenant_id, pack(buckets, int(time.time())), revision):
                        return
        except Exception as error:
            # The lease expires with its bucket in a minute; until then the room is merely held.
            log.info("unspent rate-limit lease not returned", extra={"tenant_id": tenant_id, "error": repr(error)})

    async def peek(self, tenant_id: str, limit: int) -> RateState | None:
        """The current state without counting a request (for reads)."""
        if self.kv is None:
            return None
        now_ms = int(time.time() * 1000)
        try:
            value, _ = await self._read(tenant_id)
        except Exception:
            return None
        buckets = unpack(value, now_ms // 1000)
        held = sum(lease.left for lease in self._leases.get(tenant_id, ()) if lease.second in buckets)
        return self._state(limit, sum(buckets.values()) - held, min(buckets, default=None), now_ms, True, 1)

    def _unavailable(self, limit: int, why: str, count: int = 1) -> RateState:
        decision = "open" if self.fail_open else "closed"
        RATE_LIMITER_ERRORS.labels(decision).inc()
        log.error("rate limiter unavailable", extra={"decision": decision, "error": why})
        if self.fail_open:
            return RateState(limit, limit, 0, allowed=True, granted=count)
        raise RateLimiterUnavailable(why)
