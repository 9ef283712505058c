"""The sender's call slots (herald.sender.slots) on their own: calls that never end hold no more
than their target's and their tenant's bounds, and the calls behind them in other lanes are
made meanwhile; a crowded sender turns a stalled lane's further jobs away before they start."""

from __future__ import annotations

import asyncio

from herald.sender.slots import CallLane, CallSlots, Place, Refusal


class Calls:
    """Calls that hang until released, and the ones that were made."""

    def __init__(self) -> None:
        self.running: dict[str, int] = {}
        self.made: list[str] = []
        self.hang = asyncio.Event()

    def call(
        self, slots: CallSlots, lane: CallLane, name: str, *, hang: bool, told: list[Refusal | None] | None = None
    ) -> asyncio.Task[str]:
        """`told` gets what the sender would note as the job's waiting reason when it queues its call."""
        place = slots.admit(lane)
        assert isinstance(place, Place), place

        async def run() -> str:
            self.running[lane.target] = self.running.get(lane.target, 0) + 1
            try:
                if hang:
                    await self.hang.wait()
                self.made.append(name)
                return name
            finally:
                self.running[lane.target] -= 1

        async def job() -> str:
            try:
                if told is not None:
                    told.append(slots.holding_back(lane))
                return await slots.call(place, run)
            finally:
                slots.release(place)

        return asyncio.create_task(job())


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_a_hanging_target_holds_its_bound_and_no_more() -> None:
    async def scenario() -> None:
        slots = CallSlots(concurrency=4)
        slots.start()
        calls = Calls()
        silent = CallLane("x", "silent", bound=2)
        fast = CallLane("y", "fast", bound=2)
        hanging = [calls.call(slots, silent, f"x{n}", hang=True) for n in range(6)]
        quick = [calls.call(slots, fast, f"y{n}", hang=False) for n in range(10)]
        assert sorted(await asyncio.gather(*quick)) == sorted(f"y{n}" for n in range(10))
        assert calls.running["silent"] == 2 and not any(t.done() for t in hanging)
        assert slots.readings() == (2, 4, 1)  # in flight, held behind the bound, lanes at their bound
        calls.hang.set()
        assert len(await asyncio.gather(*hanging)) == 6
        await slots.stop()

    asyncio.run(scenario())


def test_a_tenant_holds_its_share_over_all_its_targets() -> None:
    async def scenario() -> None:
        slots = CallSlots(concurrency=8, tenant_bound=3)
        slots.start()
        calls = Calls()
        hanging = [
            calls.call(slots, CallLane("x", target, bound=2), f"{target}{n}", hang=True)
            for target in ("a", "b", "c")
            for n in range(2)
        ]
        other = [calls.call(slots, CallLane("y", "d", bound=2), f"d{n}", hang=False) for n in range(5)]
        await asyncio.gather(*other)
        await settle()
        assert sum(calls.running.get(t, 0) for t in "abc") == 3
        calls.hang.set()
        await asyncio.gather(*hanging)
        await slots.stop()

    asyncio.run(scenario())


def test_a_crowded_sender_turns_a_stalled_lanes_jobs_away_before_they_start() -> None:
    async def scenario() -> None:
        slots = CallSlots(concurrency=4, crowded_at=6)
        slots.start()
        calls = Calls()
        silent = CallLane("x", "silent", bound=1)
        admitted = [calls.call(slots, silent, f"x{n}", hang=True) for n in range(6)]
        await settle()
        assert slots.admit(silent) is Refusal.TARGET
        assert slots.held_delay_s(silent) > 0
        # Another tenant's target is still admitted and called.
        assert await calls.call(slots, CallLane("y", "fast", bound=1), "y", hang=False) == "y"
        calls.hang.set()
        await asyncio.gather(*admitted)
        await slots.stop()

    asyncio.run(scenario())


def test_a_burst_says_which_of_its_calls_wait_behind_the_bound() -> None:
    """A burst reaches its lane before any caller has run (nothing in flight yet): the calls beyond
    the bound are told they wait behind it, as the ones that come after a full lane are."""

    async def scenario() -> None:
        slots = CallSlots(concurrency=8)
        slots.start()
        calls = Calls()
        told: list[Refusal | None] = []
        silent = CallLane("x", "silent", bound=2)
        hanging = [calls.call(slots, silent, f"x{n}", hang=True, told=told) for n in range(6)]
        await settle()
        later: list[Refusal | None] = []
        hanging.append(calls.call(slots, silent, "x6", hang=True, told=later))
        await settle()
        assert calls.running["silent"] == 2
        assert told == [None, None] + [Refusal.TARGET] * 4 and later == [Refusal.TARGET]
        calls.hang.set()
        await asyncio.gather(*hanging)
        await slots.stop()

    asyncio.run(scenario())
