"""Per-tenant rate limits shared by every gateway replica through NATS KV.

The shared state of a tenant is a sliding window of one-second buckets: the KV value
holds how many requests were charged in each of the last 61 seconds (a fixed 252
bytes, whatever the limit). A request charged in second `s` counts until second
`s + 60` is over, so any 60 s span holds at most `limit` requests, and "300 requests
in a minute against 200/min" admits exactly 200, whatever their pace (a request
leaves the window up to one second later than an exact log would let it).

Replicas do not write the KV per request. A replica that needs room takes a lease:
with one compare-and-set on the value's revision it charges the request plus a slice
of the remaining room (an eighth of it) to the current second, then spends that slice
locally, without a KV call, until the second ends. Then the unspent rest goes back in
the compare-and-set that takes the next lease (or, when no request comes, in one of its
own shortly after). Near the limit the slices shrink to nothing, so the last requests
of a window are charged one by one. A replica may refuse while another still holds a slice
it leased in the same second (at most an eighth of the room there was): the holder spends
it or hands it back within 1.25 s: a window never admits more than its limit, and admits all of
it while requests keep coming. A request
therefore costs at most a KV get and a compare-and-set, and at high rates a small
fraction of one: the cost no longer grows with the limit (limits up to the int32 the
ledger stores). A replica remembers the window as it last wrote it, so where no other
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
from dataclasses import dataclass

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from herald.plans import RATE_WINDOW_S
from herald.telemetry.metrics import RATE_LIMITER_ERRORS, RATE_LIMITER_KV_OPS

log = logging.getLogger("herald.gateway.rate_limit")
WINDOW_S = int(RATE_WINDOW_S)
# Buckets alive at once: the current second and the 60 before it.
BUCKETS = WINDOW_S + 1
CAS_ATTEMPTS = 25
# A lease takes at most this fraction (1/LEASE_SHARE) of the room left beyond the request itself.
LEASE_SHARE = 8
# How long after its second ends an unspent lease is handed back when no request did it.
RETURN_DELAY_S = 0.25
# After another replica wrote a tenant's window, how long its leases start with a read.
SHARED_S = 60.0
_LAYOUT = struct.Struct(f"<Q{BUCKETS}I")


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
    if not value or len(value) != _LAYOUT.size:
        return {}
    newest, *counts = _LAYOUT.unpack(value)
    live = {}
    for second in range(max(newest - BUCKETS + 1, now_s - WINDOW_S), newest + 1):
        count = counts[second % BUCKETS]
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
    """Room this replica charged to the tenant's window in `second` and has not spent yet."""

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
        self._leases: dict[str, Lease] = {}
        self._returns: set[asyncio.Task[None]] = set()
        # Each tenant's window (value, revision) as this replica last read or wrote it, and until
        # when (monotonic) it is known to be written by other replicas too.
        self._known: dict[str, tuple[bytes | None, int | None]] = {}
        self._shared_until: dict[str, float] = {}

    def forget(self, tenant_id: str) -> None:
        """An erased tenant: what this replica holds of its window (the shared one the ledger purges)."""
        for held in (self._leases, self._known, self._shared_until, self._locks):
            held.pop(tenant_id, None)

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
        """This replica's lease, when it is for this second and covers the whole request (a partial
        request it covers only in part goes to the window, which may have room for the rest)."""
        lease = self._leases.get(tenant_id)
        if lease is not None and lease.second == now_s and lease.left >= count:
            return lease
        return None

    def _spent(self, lease: Lease, limit: int, granted: int, now_ms: int) -> RateState:
        lease.left -= granted
        # Our own unspent lease is still room for our callers.
        return self._state(limit, lease.charged - lease.left, lease.oldest, now_ms, True, granted)

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
        for _ in range(CAS_ATTEMPTS):
            now_ms = int(time.time() * 1000)
            now_s = now_ms // 1000
            if (spendable := self._spendable(tenant_id, now_s, count)) is not None:
                return self._spent(spendable, limit, count, now_ms)
            lease = self._leases.get(tenant_id)
            value, revision = await self._window(tenant_id)
            buckets = unpack(value, now_s)
            # What this replica holds goes back first: expired, or too little for this request.
            held = lease.left if lease is not None else 0
            if held and lease is not None and lease.second in buckets:
                buckets[lease.second] = max(buckets[lease.second] - held, 0)
            charged = sum(buckets.values())
            room = limit - charged
            if room <= 0 or (room < count and not partial):
                if held and not await self._write(tenant_id, pack(buckets, now_s), revision):
                    continue
                self._leases.pop(tenant_id, None)
                return self._state(limit, charged, min(buckets, default=None), now_ms, False, 0)
            granted = min(room, count)
            extra = (room - granted) // LEASE_SHARE
            buckets[now_s] = buckets.get(now_s, 0) + granted + extra
            if not await self._write(tenant_id, pack(buckets, now_s), revision):
                continue
            oldest = min(buckets)
            self._leases[tenant_id] = Lease(now_s, extra, charged + granted + extra, oldest)
            if extra:
                self._return_later(tenant_id, limit, now_s)
            return self._state(limit, charged + granted, oldest, now_ms, True, granted)
        log.warning("rate-limit state too contended; refusing this request", extra={"tenant_id": tenant_id})
        return RateState(limit, 0, 1, allowed=False, retry_after_s=1, granted=0)

    def _return_later(self, tenant_id: str, limit: int, second: int) -> None:
        """Hands an unspent lease back shortly after its second ends, if no request did."""

        def start() -> None:
            task = asyncio.get_running_loop().create_task(self._give_back(tenant_id, second))
            self._returns.add(task)
            task.add_done_callback(self._returns.discard)

        delay = (second + 1) - time.time() + RETURN_DELAY_S
        asyncio.get_running_loop().call_later(max(delay, 0.0), start)

    async def _give_back(self, tenant_id: str, second: int) -> None:
        lock = self._locks.setdefault(tenant_id, asyncio.Lock())
        try:
            async with lock:
                for _ in range(CAS_ATTEMPTS):
                    lease = self._leases.get(tenant_id)
                    if lease is None or lease.second != second or not lease.left:
                        return
                    now_s = int(time.time())
                    value, revision = await self._window(tenant_id)
                    buckets = unpack(value, now_s)
                    if second in buckets:
                        buckets[second] = max(buckets[second] - lease.left, 0)
                    if await self._write(tenant_id, pack(buckets, now_s), revision):
                        self._leases.pop(tenant_id, None)
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
        lease = self._leases.get(tenant_id)
        held = lease.left if lease is not None and lease.second in buckets else 0
        return self._state(limit, sum(buckets.values()) - held, min(buckets, default=None), now_ms, True, 1)

    def _unavailable(self, limit: int, why: str, count: int = 1) -> RateState:
        decision = "open" if self.fail_open else "closed"
        RATE_LIMITER_ERRORS.labels(decision).inc()
        log.error("rate limiter unavailable", extra={"decision": decision, "error": why})
        if self.fail_open:
            return RateState(limit, limit, 0, allowed=True, granted=count)
        raise RateLimiterUnavailable(why)
