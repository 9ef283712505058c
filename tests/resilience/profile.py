"""How big a resilience run is: `reduced` (the default, part of `make test`) or `full`
(`make test-resilience`, or RESILIENCE_PROFILE=full).

The profile is read from the environment variable RESILIENCE_PROFILE, not from a
HERALD_* variable, because tests/conftest.py clears every HERALD_* variable at start.
Every number the suite uses is here, so the two runs differ only by these figures.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    # Faults under load.
    tenants: int
    webhook_jobs: int
    email_jobs: int
    # Seconds of steady load between two faults (and before the first, after the last).
    fault_gap_s: float
    # Kill the services one at a time (full) or three at a time (reduced, to stay within budget).
    kills_at_once: int
    # How long the load generator keeps retrying one request (503, connection refused, 409).
    client_retry_for_s: float
    # After the load: how long every job may take to settle.
    drain_timeout_s: float
    # Hostile input.
    fuzz_examples: int
    fuzz_examples_unauthenticated: int
    slow_clients: int
    slow_client_hold_s: float
    nesting_depth: int
    # Time limit of the longest test (pytest-timeout).
    timeout_s: int


# The gateway's HTTP read deadlines in the suite's stack (HERALD_HTTP_HEAD_TIMEOUT_S /
# HERALD_HTTP_BODY_TIMEOUT_S); `slow_client_hold_s` outlasts both.
HTTP_HEAD_TIMEOUT_S = 2.0
HTTP_BODY_TIMEOUT_S = 3.0

REDUCED = Profile(
    name="reduced",
    tenants=3,
    webhook_jobs=150,
    email_jobs=20,
    fault_gap_s=0.5,
    kills_at_once=3,
    client_retry_for_s=10.0,
    drain_timeout_s=45.0,
    fuzz_examples=3,
    fuzz_examples_unauthenticated=1,
    slow_clients=20,
    slow_client_hold_s=5.0,
    nesting_depth=100_000,
    timeout_s=240,
)

FULL = Profile(
    name="full",
    tenants=6,
    webhook_jobs=3000,
    email_jobs=300,
    fault_gap_s=3.0,
    kills_at_once=1,
    client_retry_for_s=90.0,
    drain_timeout_s=180.0,
    fuzz_examples=25,
    fuzz_examples_unauthenticated=5,
    slow_clients=200,
    slow_client_hold_s=12.0,
    nesting_depth=100_000,
    timeout_s=1500,
)


def current() -> Profile:
    value = os.environ.get("RESILIENCE_PROFILE", "reduced").strip().lower()
    if value not in ("reduced", "full"):
        raise ValueError(f"RESILIENCE_PROFILE must be 'reduced' or 'full', not {value!r}")
    return FULL if value == "full" else REDUCED


PROFILE = current()
