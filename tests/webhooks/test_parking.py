"""Behind an open circuit, one delivery per cool-down waits on the bus to be the next probe and
the others are parked in the ledger (herald_webhook_sender.parking), per tenant and target, until
just past their retry window's end (the ledger's recheck brings one back now and then:
tests/test_parked_lanes.py)."""

from __future__ import annotations

from herald_webhook_sender.parking import Parking

from herald.sender.slots import CallLane
from herald.sender.states import BOUND, PACED, Park

X = CallLane("tenant-x", "target:a", 16)
# What is left of a delivery's retry window.
WINDOW_S = 20_000.0


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def parking(clock: Clock | None = None) -> Parking:
    # No ledger: hold() alone is tried here (tests/test_lane_limit.py runs the rest on a stack).
    return Parking(None, clock or Clock())  # type: ignore[arg-type]


def test_the_first_in_a_cool_down_waits_on_the_bus_and_the_rest_are_parked() -> None:
    held = parking()
    assert held.hold(X, 30.0, WINDOW_S) == 30.0
    parked = held.hold(X, 30.0, WINDOW_S)
    assert isinstance(parked, Park)
    assert parked.lane == "target:a" and parked.reason == "circuit_open"
    assert parked.delay_s == WINDOW_S + 1, "until past its window, unless the target answers first"
    assert parked.fallback_s == 30.0, "on the bus for the cool-down if the ledger cannot take it"
    # Another target of the tenant, and another tenant's target of the same name, have their own probe.
    assert held.hold(CallLane("tenant-x", "target:b", 16), 30.0, WINDOW_S) == 30.0
    assert held.hold(CallLane("tenant-y", "target:a", 16), 30.0, WINDOW_S) == 30.0


def test_a_backlog_waits_parked_each_until_its_own_window_ends() -> None:
    held = parking()
    assert held.hold(X, 30.0, WINDOW_S) == 30.0
    parked = [held.hold(X, 30.0, left_s) for left_s in (WINDOW_S, 10.0, -5.0)]
    assert [p.delay_s for p in parked if isinstance(p, Park)] == [WINDOW_S + 1, 11.0, 1.0]


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
