"""Which lanes an answer releases (herald_ledger.parked_lanes): those jobs are parked on, once
each until parked on again, including a lane parked while the reconciler's read of them all
was under way (its snapshot may not show it). The release itself, end to end:
tests/test_lane_limit.py."""

from __future__ import annotations

from herald_ledger.parked_lanes import ParkedLanes

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
