"""What a service remembers for a while of what another told it: API keys, signing secrets,
provider credentials, retry schedules, DNS answers. One cache, so each of them expires and
stays bounded the same way.

Change notifications from the ledger evict entries at once (`forget`, `forget_where`); the
time to live only bounds how stale an entry gets when a notification is lost.

`load` asks the ledger once per key however many callers want it meanwhile, and answers a
key still in use from the cache while it refreshes it ahead of its expiry: a tenant sending
steadily never waits for the lookup again when its entry's time runs out, and the lookups
do not all fall due at once. A load that a `forget` overtook is answered but not kept: it
may have read the ledger before the change the forget stands for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from enum import Enum
from typing import Generic, Literal, TypeVar

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class _Missing(Enum):
    MISSING = "missing"


# What `ExpiringCache.get` answers for a key it does not hold (or holds expired): a cached
# value may itself be None (an unknown API key, a tenant with no verification key).
MISSING: Literal[_Missing.MISSING] = _Missing.MISSING


# `load` refreshes an entry asked for after this share of its time to live has passed.
REFRESH_AFTER = 0.8


class ExpiringCache(Generic[Key, Value]):
    """Entries live `ttl_s` after they were put (a put may give its own time to live; zero or
    less keeps nothing). Past `max_entries` the expired entries go first, then the oldest
    put, down to nine tenths of the bound, so a cache full of live entries (unknown API
    keys sprayed at the gateway) costs one sweep per tenth of its size, not one per put."""

    def __init__(self, ttl_s: float, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.clock = clock
        # Insertion order is put order: a put moves its key to the end. (expires, refresh at, value)
        self._entries: dict[Key, tuple[float, float, Value]] = {}
        # The load under way per key (`load`); a forget drops it from here, and a load no longer
        # here when it ends is answered but not kept.
        self._loading: dict[Key, asyncio.Future[Value]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key) -> Value | Literal[_Missing.MISSING]:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self.clock():
            return MISSING
        return entry[2]

    def put(self, key: Key, value: Value, ttl_s: float | None = None) -> None:
        lifetime = self.ttl_s if ttl_s is None else ttl_s
        if lifetime <= 0:
            return
        now = self.clock()
        self._entries.pop(key, None)
        self._entries[key] = (now + lifetime, now + lifetime * REFRESH_AFTER, value)
        if len(self._entries) > self.max_entries:
            self._trim()

    async def load(
        self,
        key: Key,
        loader: Callable[[], Awaitable[Value]],
        ttl_s: Callable[[Value], float | None] = lambda _value: None,
    ) -> Value:
        """The value cached for `key`, else what `loader` answers (kept for `ttl_s(value)`, None:
        the cache's own). One load per key at a time: whoever asks meanwhile awaits it (its
        error too). An entry asked for past `REFRESH_AFTER` of its time is answered at once
        and loaded again in the background."""
        entry = self._entries.get(key)
        now = self.clock()
        if entry is not None and now < entry[1]:
            return entry[2]
        loading = self._loading.get(key)
        if loading is None or loading.done():
            loading = self._loading[key] = asyncio.ensure_future(self._fill(key, loader, ttl_s))
            loading.add_done_callback(self._loaded(key))
        if entry is not None and now < entry[0]:
            return entry[2]
        return await asyncio.shield(loading)

    async def _fill(
        self, key: Key, loader: Callable[[], Awaitable[Value]], ttl_s: Callable[[Value], float | None]
    ) -> Value:
        value = await loader()
        if self._loading.get(key) is asyncio.current_task():
            self.put(key, value, ttl_s(value))
        return value

    def _loaded(self, key: Key) -> Callable[[asyncio.Future[Value]], None]:
        def done(loading: asyncio.Future[Value]) -> None:
            if self._loading.get(key) is loading:
                del self._loading[key]
            if not loading.cancelled():
                loading.exception()  # retrieved: a failed refresh nobody awaited is no error

        return done

    def forget(self, key: Key) -> None:
        """Drops the entry and any load of it under way: the load may have read the ledger
        before the change (a revoked API key must be refused by the next request)."""
        self._loading.pop(key, None)
        self._entries.pop(key, None)

    def forget_where(self, predicate: Callable[[Key, Value], bool]) -> None:
        """Drops every entry the predicate picks (a tenant's, when the ledger says it changed),
        and every load under way: what a load answers is not known before it ends."""
        self._loading.clear()
        for key in [k for k, (_, _, value) in self._entries.items() if predicate(k, value)]:
            del self._entries[key]

    def clear(self) -> None:
        self._loading.clear()
        self._entries.clear()

    def _trim(self) -> None:
        now = self.clock()
        for key in [k for k, (expires, _, _) in self._entries.items() if expires <= now]:
            del self._entries[key]
        keep = self.max_entries * 9 // 10
        while len(self._entries) > keep:
            del self._entries[next(iter(self._entries))]
