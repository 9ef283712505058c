"""Behind an open circuit, one delivery per cool-down waits on the bus to be the next probe and
the others are parked in the ledger (herald_webhook_sender.parking), per tenant and target: one
per recheck until the recheck, to come back as a probe, the rest until their retry window ends."""

from __future__ import annotations

from herald_webhook_sender.parking import BOUND, PACED, Parking

from herald.config import Settings
from herald.sender.slots import CallLane
from herald.sender.states import Park

X = CallLane("tenant-x", "target:a", 16)
# What is left of a delivery's retry window.
WINDOW_S = 20_000.0


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def parking(clock: Clock | None = None) -> Parking:
    # No ledger: hold() alone is tried here (tests/test_lane_limit.py runs the rest on a stack).
    return Parking(None, Settings(webhook_park_recheck_s=300), clock or Clock())  # type: ignore[arg-type]


def test_the_first_in_a_cool_down_waits_on_the_bus_and_the_rest_are_parked() -> None:
    held = parking()
    assert held.hold(X, 30.0, WINDOW_S) == 30.0
    parked = held.hold(X, 30.0, WINDOW_S)
    assert isinstance(parked, Park)
    assert parked.lane == "target:a" and parked.reason == "circuit_open"
    assert 300 <= parked.delay_s <= 450, "the recheck's: back to be a probe, spread over half again"
    assert parked.fallback_s == 30.0, "on the bus for the cool-down if the ledger cannot take it"
    # Another target of the tenant, and another tenant's target of the same name, have their own probe.
    assert held.hold(CallLane("tenant-x", "target:b", 16), 30.0, WINDOW_S) == 30.0
    assert held.hold(CallLane("tenant-y", "target:a", 16), 30.0, WINDOW_S) == 30.0


def test_past_the_first_in_a_recheck_a_backlog_waits_for_its_window_not_cycling() -> None:
    clock = Clock()
    held = parking(clock)
    assert held.hold(X, 30.0, WINDOW_S) == 30.0
    assert isinstance(carrier := held.hold(X, 30.0, WINDOW_S), Park) and carrier.delay_s <= 450
    rest = [held.hold(X, 30.0, WINDOW_S - n) for n in range(3)]
    assert [p.delay_s for p in rest if isinstance(p, Park)] == [WINDOW_S + 1, WINDOW_S, WINDOW_S - 1]
    # A recheck on (the cool-down long past: the first is the probe again), the next one parked
    # comes back at the recheck.
    clock.now += 300
    assert held.hold(X, 30.0, WINDOW_S) == 30.0
    assert 300 <= held.hold(X, 30.0, WINDOW_S).delay_s <= 450  # type: ignore[union-attr]
    # Near its window's end, even the recheck's comes back no later than just past it.
    clock.now += 300
    assert held.hold(X, 30.0, 10.0) == 30.0
    assert held.hold(X, 30.0, 10.0).delay_s == 11.0  # type: ignore[union-attr]


def test_once_the_cool_down_has_passed_the_next_one_is_the_probe() -> None:
    clock = Clock()
    held = parking(clock)
    assert held.hold(X, 30.0, WINDOW_S) == 30.0
    clock.now += 29
    assert isinstance(held.hold(X, 30.0, WINDOW_S), Park)
    clock.now += 1
    assert held.hold(X, 30.0, WINDOW_S) == 30.0


def test_a_backlog_behind_a_bound_or_a_rate_limit_is_parked_each_until_its_turn() -> None:
    clock = Clock()
    held = parking(clock)
    first = held.until_turn(X, BOUND, 40.0, 0.5, 2.0, "target_bound")
    second = held.until_turn(X, BOUND, 40.0, 0.5, 2.0, "target_bound")
    assert (first.delay_s, second.delay_s) == (40.0, 40.5), "each after the one parked before it"
    assert first.lane == "bound:target:a" and first.fallback_s == 2.0
    # The rate limit's line is another: its turns do not follow the bound's.
    paced = held.until_turn(X, PACED, 60.0, 6.0, 60.0, "rate_limit")
    assert paced.lane == "paced:target:a" and paced.delay_s == 60.0
    # Once the line has moved on, a new one starts from its own wait.
    clock.now += 100
    assert held.until_turn(X, BOUND, 40.0, 0.5, 2.0, "target_bound").delay_s == 40.0
