"""Which lanes an answer releases (herald_ledger.parked_lanes): those jobs are parked on, once
each until parked on again, including a lane parked while the reconciler's read of them all
was under way (its snapshot may not show it); and which lanes the reconciler rechecks. The
release itself, end to end: tests/test_lane_limit.py; the recheck: tests/test_webhook_breaker.py."""

from __future__ import annotations

from herald_ledger.parked_lanes import ParkedLanes
from herald_ledger.reconciler import Reconciler

from herald.config import Settings

DEAD = ("tenant-x", "target:dead")
ALIVE = ("tenant-x", "target:alive")
OTHER_TENANTS = ("tenant-y", "target:dead")


def test_an_answer_releases_a_parked_lane_once() -> None:
    lanes = ParkedLanes()
    assert not lanes, "nothing parked: the records' path asks nothing"
    lanes.parked([DEAD])
    assert lanes.answered([ALIVE, OTHER_TENANTS]) == [], "another lane, or another tenant's lane of that name"
    assert lanes.answered([DEAD, DEAD]) == [DEAD]
    assert lanes.answered([DEAD]) == [], "released: a second answer has nothing to release"
    lanes.parked([DEAD])
    assert lanes.answered([DEAD]) == [DEAD], "parked again, released again"


def test_the_reconcilers_read_brings_in_other_replicas_lanes_and_keeps_those_parked_meanwhile() -> None:
    lanes = ParkedLanes()
    lanes.parked([ALIVE])
    lanes.reading()
    lanes.parked([DEAD])  # committed after the read's snapshot
    lanes.read([OTHER_TENANTS])  # the snapshot: another replica parked this one
    assert sorted(lanes.answered([DEAD, ALIVE, OTHER_TENANTS])) == sorted([DEAD, OTHER_TENANTS]), (
        "the read replaces what it saw, and keeps what was parked while it ran"
    )


def test_each_circuits_lane_is_rechecked_once_a_recheck_and_lines_never() -> None:
    lanes = ParkedLanes(recheck_s=300.0, jitter=lambda: 0.0)
    line = ("tenant-x", "bound:target:slow")
    lanes.parked([DEAD, line])
    assert lanes.rechecks(now=0.0) == [], "first seen: a recheck from now"
    assert lanes.rechecks(now=299.0) == []
    assert lanes.rechecks(now=300.0) == [DEAD], "a line waiting for its turns is never rechecked"
    assert lanes.rechecks(now=301.0) == [], "once a recheck"
    assert lanes.rechecks(now=600.0) == [DEAD]
    lanes.answered([DEAD])
    assert lanes.rechecks(now=900.0) == [], "released: nothing parked to recheck"
    lanes.parked([DEAD])
    assert lanes.rechecks(now=901.0) == [], "parked again: a recheck from now"
    assert lanes.rechecks(now=1201.0) == [DEAD]


def test_the_circuits_holding_deliveries_are_counted_until_their_answer_and_lines_never() -> None:
    lanes = ParkedLanes()
    lanes.parked([DEAD, OTHER_TENANTS, ("tenant-x", "bound:target:slow"), ("tenant-x", "paced:target:slow")])
    assert lanes.circuits() == 2, "each tenant's circuit on the dead target; a line waiting its turn is none"
    lanes.answered([DEAD])
    assert lanes.circuits() == 1
    lanes.read([OTHER_TENANTS, ALIVE])
    assert lanes.circuits() == 2, "as the reconciler's read finds them"


def test_the_reconciler_reads_into_the_set_the_answers_release_from_even_an_empty_one() -> None:
    # An empty set is falsy: `lanes or ParkedLanes()` gave the reconciler a set of its own, so
    # its reads (other replicas' lanes) and rechecks never met the lanes this replica parked.
    lanes = ParkedLanes()
    assert Reconciler(None, Settings(), None, None, lanes).lanes is lanes  # type: ignore[arg-type]
