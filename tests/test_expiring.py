"""The one cache every service keeps of what the ledger told it (herald.expiring): entries
expire, a cached None is an answer, and the cache stays bounded without forgetting what is
still live before what has expired; its loads are shared by the callers of a key, refresh a
key in use before it expires, and are not kept when a change overtook them."""

from __future__ import annotations

import asyncio

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


class Ledger:
    """A lookup that answers when told to, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.answer = 1
        self.release = asyncio.Event()

    async def lookup(self) -> int:
        self.calls += 1
        await self.release.wait()
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_callers_of_one_key_share_one_lookup_and_its_error() -> None:
    async def run() -> None:
        ledger = Ledger()
        cache: ExpiringCache[str, int] = ExpiringCache(10.0, clock=Clock())
        waiting = [asyncio.create_task(cache.load("key", ledger.lookup)) for _ in range(20)]
        await asyncio.sleep(0)
        ledger.release.set()
        assert await asyncio.gather(*waiting) == [1] * 20 and ledger.calls == 1
        assert await cache.load("key", ledger.lookup) == 1 and ledger.calls == 1

        cache.forget("key")
        ledger.answer = ConnectionError("ledger away")  # type: ignore[assignment]
        failing = [asyncio.create_task(cache.load("key", ledger.lookup)) for _ in range(5)]
        outcomes = await asyncio.gather(*failing, return_exceptions=True)
        assert all(isinstance(o, ConnectionError) for o in outcomes) and ledger.calls == 2
        assert cache.get("key") is MISSING

    asyncio.run(run())


def test_a_key_in_use_is_answered_from_the_cache_while_it_is_looked_up_again() -> None:
    async def run() -> None:
        clock, ledger = Clock(), Ledger()
        cache: ExpiringCache[str, int] = ExpiringCache(10.0, clock=clock)
        ledger.release.set()
        assert await cache.load("key", ledger.lookup) == 1
        ledger.release.clear()
        ledger.answer = 2
        clock.now += 8.5  # past REFRESH_AFTER of its 10 s
        assert await cache.load("key", ledger.lookup) == 1  # at once, not waiting for the lookup
        await asyncio.sleep(0)
        assert ledger.calls == 2
        ledger.release.set()
        while cache.get("key") != 2:  # the refresh lands
            await asyncio.sleep(0)
        clock.now += 5  # the first entry would have expired by now
        assert await cache.load("key", ledger.lookup) == 2 and ledger.calls == 2

        # A refresh that fails leaves the entry to its time.
        ledger.answer = ConnectionError("ledger away")  # type: ignore[assignment]
        clock.now += 4  # past its refresh, before its end (put at 8.5 s, refreshed from 16.5 s, ends at 18.5 s)
        assert await cache.load("key", ledger.lookup) == 2
        for _ in range(3):
            await asyncio.sleep(0)
        assert cache.get("key") == 2 and ledger.calls == 3

    asyncio.run(run())


def test_a_lookup_a_forget_overtook_is_neither_kept_nor_joined() -> None:
    async def run() -> None:
        ledger = Ledger()
        cache: ExpiringCache[str, int] = ExpiringCache(10.0, clock=Clock())

        async def asked_while_the_ledger_is(calls: int) -> asyncio.Task[int]:
            asked = asyncio.create_task(cache.load("api key", ledger.lookup))
            while ledger.calls < calls:
                await asyncio.sleep(0)
            return asked

        before = await asked_while_the_ledger_is(1)
        cache.forget("api key")  # revoked meanwhile
        ledger.release.set()
        assert await before == 1
        assert cache.get("api key") is MISSING

        # A caller after the change does not join the lookup begun before it: it asks again.
        ledger.release.clear()
        before = await asked_while_the_ledger_is(2)
        cache.forget_where(lambda _key, _value: True)  # the key's tenant changed meanwhile
        after = await asked_while_the_ledger_is(3)
        ledger.release.set()
        assert await asyncio.gather(before, after) == [1, 1] and ledger.calls == 3

    asyncio.run(run())
