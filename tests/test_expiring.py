"""The one cache every service keeps of what the ledger told it (herald.expiring): entries
expire, a cached None is an answer, and the cache stays bounded without forgetting what is
still live before what has expired."""

from __future__ import annotations

from herald.expiring import MISSING, ExpiringCache
from tests.support.fake_clock import Clock


def test_an_entry_lives_its_time_then_is_missing() -> None:
    clock = Clock()
    cache: ExpiringCache[str, int] = ExpiringCache(10.0, clock=clock)
    cache.put("tenant", 7)
    clock.now += 9.9
    assert cache.get("tenant") == 7
    clock.now += 0.1
    assert cache.get("tenant") is MISSING


def test_a_put_may_give_its_own_time_and_zero_keeps_nothing() -> None:
    clock = Clock()
    cache: ExpiringCache[str, int] = ExpiringCache(30.0, clock=clock)
    cache.put("short", 1, ttl_s=2.0)
    cache.put("never", 2, ttl_s=0)
    clock.now += 3
    assert cache.get("short") is MISSING and cache.get("never") is MISSING
    assert len(ExpiringCache[str, int](0, clock=clock)) == 0


def test_a_cached_none_is_an_answer_not_a_miss() -> None:
    cache: ExpiringCache[str, None] = ExpiringCache(10.0, clock=Clock())
    cache.put("unknown api key", None)
    assert cache.get("unknown api key") is None
    assert cache.get("never asked") is MISSING


def test_forgetting_one_key_or_every_key_a_tenant_holds() -> None:
    cache: ExpiringCache[tuple[str, str], int] = ExpiringCache(10.0, clock=Clock())
    for tenant in ("a", "b"):
        for target in ("t1", "t2"):
            cache.put((tenant, target), 1)
    cache.forget(("b", "t1"))
    cache.forget_where(lambda key, _value: key[0] == "a")
    assert [cache.get((t, x)) for t in ("a", "b") for x in ("t1", "t2")] == [MISSING, MISSING, MISSING, 1]


def test_past_its_bound_the_expired_go_first_then_the_oldest_put() -> None:
    clock = Clock()
    cache: ExpiringCache[int, int] = ExpiringCache(10.0, max_entries=10, clock=clock)
    for key in range(5):
        cache.put(key, key, ttl_s=1.0)  # these will have expired
    clock.now += 2
    for key in range(5, 11):
        cache.put(key, key)
    # Eleven entries: the five expired went, and no live one had to.
    assert len(cache) == 6 and all(cache.get(k) == k for k in range(5, 11))
    cache.put(5, 5)  # put again: now the newest
    for key in range(11, 16):
        cache.put(key, key)
    # Eleven live entries: trimmed to nine, the oldest put (6 and 7) first.
    assert len(cache) == 9
    assert cache.get(6) is MISSING and cache.get(7) is MISSING
    assert all(cache.get(k) == k for k in (5, 8, 9, 10, 11, 12, 13, 14, 15))
