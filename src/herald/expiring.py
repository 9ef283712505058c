"""What a service remembers for a while of what another told it: API keys, signing secrets,
provider credentials, retry schedules, DNS answers. One cache, so each of them expires and
stays bounded the same way.

Change notifications from the ledger evict entries at once (`forget`, `forget_where`); the
time to live only bounds how stale an entry gets when a notification is lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from enum import Enum
from typing import Generic, Literal, TypeVar

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class _Missing(Enum):
    MISSING = "missing"


# What `ExpiringCache.get` answers for a key it does not hold (or holds expired): a cached
# value may itself be None (an unknown API key, a tenant with no verification key).
MISSING: Literal[_Missing.MISSING] = _Missing.MISSING


class ExpiringCache(Generic[Key, Value]):
    """Entries live `ttl_s` after they were put (a put may give its own time to live; zero or
    less keeps nothing). Past `max_entries` the expired entries go first, then the oldest
    put, down to nine tenths of the bound, so a cache full of live entries (unknown API
    keys sprayed at the gateway) costs one sweep per tenth of its size, not one per put."""

    def __init__(self, ttl_s: float, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.clock = clock
        # Insertion order is put order: a put moves its key to the end.
        self._entries: dict[Key, tuple[float, Value]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key) -> Value | Literal[_Missing.MISSING]:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self.clock():
            return MISSING
        return entry[1]

    def put(self, key: Key, value: Value, ttl_s: float | None = None) -> None:
        lifetime = self.ttl_s if ttl_s is None else ttl_s
        if lifetime <= 0:
            return
        self._entries.pop(key, None)
        self._entries[key] = (self.clock() + lifetime, value)
        if len(self._entries) > self.max_entries:
            self._trim()

    def forget(self, key: Key) -> None:
        self._entries.pop(key, None)

    def forget_where(self, predicate: Callable[[Key, Value], bool]) -> None:
        """Drops every entry the predicate picks (a tenant's, when the ledger says it changed)."""
        for key in [k for k, (_, value) in self._entries.items() if predicate(k, value)]:
            del self._entries[key]

    def clear(self) -> None:
        self._entries.clear()

    def _trim(self) -> None:
        now = self.clock()
        for key in [k for k, (expires, _) in self._entries.items() if expires <= now]:
            del self._entries[key]
        keep = self.max_entries * 9 // 10
        while len(self._entries) > keep:
            del self._entries[next(iter(self._entries))]
