"""The suite's four lanes, for `make test` (pytest-xdist, `-n 4`): one worker process each.

The packages that bring their own stacks and infrastructure (a three-node cluster, the
resilience suite's private PostgreSQL and nats-server, the browser, the deploy tooling) make
two lanes; everything on a session's stack makes the other two, each lane with a session stack
of its own. The suite waits much of the time (on deliveries, retries, restarts), so lanes
share the machine's cores: on a 2-core machine four kept them 91 % busy and took 714 s where two
took 830 s; more would only share the same CPU. A lane is one unit of work: its tests run in
collection order (files in name order, the `test_zz_*` files last) in one process, so a
package's fixtures are made once and the ordering each lane relies on holds as in a
single-process run.

A test chooses its lane by a parameter named after it (tests/test_zz_secret_hygiene.py runs
once at the end of each lane). xdist's own `--dist loadgroup` cannot do this: it marks a test's
group by rewriting `Item._nodeid`, which pytest 9 no longer reads.
"""

from __future__ import annotations

from xdist.scheduler.loadscope import LoadScopeScheduling

SESSION_STACK_LANE = "session-stack"
OWN_STACKS_LANE = "own-stacks"
# Each kind of lane is cut in two by path (relative to tests/), each half in collection order:
# the paths named here make the second half (by one run's test durations, 650-680 s each).
SECOND_HALVES = {
    SESSION_STACK_LANE: lambda path: path >= "test_g",
    OWN_STACKS_LANE: lambda path: path.startswith(
        ("resilience/", "test_herald_up.py", "test_lost_work.py", "test_delivery_isolation.py", "test_slow_attempts.py")
    ),
}
LANES = tuple(f"{kind}-{half}" for kind in SECOND_HALVES for half in ("a", "b"))
OWN_STACK_PACKAGES = frozenset({"cluster", "console", "deploy", "resilience"})
# Files at the top that bring their own stacks (`herald up`, embedded servers, a stack on a
# database of its own): they touch nothing of the session's stack, so they run in the lanes
# with the other own stacks, which keeps the four lanes about as long as each other.
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
        "test_lane_limit.py",
    }
)


def lane_of(nodeid: str) -> str:
    """The lane of a test, from its id alone (the scheduler sees nothing else)."""
    for lane in LANES:
        if nodeid.endswith(f"[{lane}]"):
            return lane
    path = nodeid.split("::", 1)[0].removeprefix("tests/")
    parts = path.split("/")
    own = (len(parts) > 1 and parts[0] in OWN_STACK_PACKAGES) or (len(parts) == 1 and parts[0] in OWN_STACK_FILES)
    kind = OWN_STACKS_LANE if own else SESSION_STACK_LANE
    return f"{kind}-{'b' if SECOND_HALVES[kind](path) else 'a'}"


class LaneScheduling(LoadScopeScheduling):
    """xdist's scope scheduling, with a lane as the scope: each worker takes a whole lane."""

    def _split_scope(self, nodeid: str) -> str:
        return lane_of(nodeid)
