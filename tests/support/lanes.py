"""The suite's two lanes, for `make test` (pytest-xdist, `-n 2`): one worker process each.

The packages that bring their own stacks and infrastructure (a three-node cluster, the
resilience suite's private PostgreSQL and nats-server, the browser, the deploy tooling) make
one lane; everything on the session's stack makes the other. The suite mostly waits (on
deliveries, retries, restarts), so two lanes share the machine's cores instead of leaving one
idle. A lane is one unit of work: its tests run in collection order (files in name order, the
`test_zz_*` files last) in one process, so a package's fixtures are made once and the ordering
each lane relies on holds as in a single-process run.

A test chooses its lane by a parameter named after it (tests/test_zz_secret_hygiene.py runs
once at the end of each lane). xdist's own `--dist loadgroup` cannot do this: it marks a test's
group by rewriting `Item._nodeid`, which pytest 9 no longer reads.
"""

from __future__ import annotations

from xdist.scheduler.loadscope import LoadScopeScheduling

SESSION_STACK_LANE = "session-stack"
OWN_STACKS_LANE = "own-stacks"
LANES = (SESSION_STACK_LANE, OWN_STACKS_LANE)
OWN_STACK_PACKAGES = frozenset({"cluster", "console", "deploy", "resilience"})
# Files at the top that bring their own stacks (`herald up`, embedded servers, a stack on a
# database of its own): they touch nothing of the session's stack, so they run in the lane
# with the other own stacks, which keeps the two lanes about as long as each other.
OWN_STACK_FILES = frozenset(
    {
        "test_herald_up.py",
        "test_embedded.py",
        "test_lost_work.py",
        "test_slow_attempts.py",
        "test_delivery_isolation.py",
        "test_trace_propagation.py",
        "test_bus_start_patience.py",
        "test_fair_fetcher_redelivery.py",
    }
)


def lane_of(nodeid: str) -> str:
    """The lane of a test, from its id alone (the scheduler sees nothing else)."""
    for lane in LANES:
        if nodeid.endswith(f"[{lane}]"):
            return lane
    parts = nodeid.split("::", 1)[0].split("/")
    if (len(parts) > 2 and parts[1] in OWN_STACK_PACKAGES) or (len(parts) == 2 and parts[1] in OWN_STACK_FILES):
        return OWN_STACKS_LANE
    return SESSION_STACK_LANE


class LaneScheduling(LoadScopeScheduling):
    """xdist's scope scheduling, with a lane as the scope: each worker takes a whole lane."""

    def _split_scope(self, nodeid: str) -> str:
        return lane_of(nodeid)
