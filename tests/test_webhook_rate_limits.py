"""A target's rate limit is enforced: a target limited to 60 deliveries a minute never gets
them closer together than the limit allows, however many wait; another target on the same
events is not held back; and waiting is not failing (one attempt per job)."""

from __future__ import annotations

import httpx

from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import publish, subscribe

EVENT = "paced.v1"
EVENTS = 8
LIMIT_PER_MIN = 60  # one a second


def test_a_limited_target_is_paced_and_others_are_not(gateway: str, tenant: TenantKey) -> None:
    limited, free = Receiver(), Receiver()
    try:
        subscribe(gateway, tenant, limited.url, [EVENT], rate_limit_per_min=LIMIT_PER_MIN)
        subscribe(gateway, tenant, free.url, [EVENT])
        jobs = [d["job_id"] for _ in range(EVENTS) for d in publish(gateway, tenant, EVENT)["deliveries"]]
        assert len(jobs) == 2 * EVENTS
        for job_id in jobs:
            job = wait_for_status(gateway, tenant, job_id, timeout=90)
            assert job["status"] == "delivered"
            assert job["attempt_count"] == 1 and len(job["attempts"]) == 1, "held back is not a failed attempt"

        arrived = sorted(r.at for r in limited.requests)
        assert len(arrived) == EVENTS and len(free.requests) == EVENTS
        # At most `limit` per 60 s means, scaled to this test, at most k+1 in any k seconds:
        # the 4th delivery after any delivery comes at least 3 s later (an exact pace puts it
        # 4 s later; the slack absorbs network jitter, never a burst).
        spans = [later - earlier for earlier, later in zip(arrived, arrived[4:], strict=False)]
        assert min(spans) >= 3.0, spans
        # The unlimited target was not made to wait for the limited one.
        assert max(r.at for r in free.requests) < arrived[-1]
        assert httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers).status_code == 200
    finally:
        limited.close()
        free.close()
