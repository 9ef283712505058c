"""MODE=steady's figures of one run, the same for Herald and a peer: from the open loop's accepts
(job id, when its 202 arrived, when the request was due) and the sink's first arrival per job id.

Standard library only beside `config` and `tables`, so a peer's run (which imports no Herald) and
the report read them alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.config import env
from harness.tables import percentile, rounded


def slo_limits() -> tuple[float, float]:
    """The SLO a rate must keep: accept p99 (SLO_ACCEPT_P99_MS, 100) and accept-to-delivery p99
    (SLO_A2D_P99_MS, 1,000) in ms, with nothing undelivered and no request refused."""
    return float(env("SLO_ACCEPT_P99_MS", "100")), float(env("SLO_A2D_P99_MS", "1000"))


# The accept p99 beside the run's is also given without the requests due in the first STEP_S of
# the load (`accept_p99_after_step_ms`): how much of a run's p99 is the step from idle to the
# rate, whose queues take seconds to drain on a machine the stack keeps near full. A diagnostic:
# the SLO stays on every request.
STEP_S = 5.0


def open_loop_fields(
    cfg: Any, spans: dict[str, tuple[float, float | None]], arrivals: dict[str, float], record: dict[str, Any]
) -> dict[str, Any]:
    """The rate, the accepted jobs delivered and not (by DRAIN s after the load), accept-to-delivery
    p50/p99/p99.9 over the delivered (from each job's 202 to its first arrival), due-to-delivery
    p50/p99 (from when each request was due to its first arrival) and whether the run
    kept the SLO. The accept p50/p99 are the client's own, counted from when each request was due;
    beside them, the accepts' p99 after the first STEP_S of the load."""
    latencies = sorted(arrivals[i] - accepted for i, (accepted, _) in spans.items() if i in arrivals)
    # From when the request was due to the delivery: what the submitter waits in all. A side whose
    # 202 is slow to come back shows a short accept-to-delivery while delivering no sooner.
    waits = sorted(arrivals[i] - due for i, (_, due) in spans.items() if i in arrivals and due is not None)
    delivered = len(latencies)
    dues = [due for _, due in spans.values() if due is not None]
    step_end = min(dues) + STEP_S * 1000 if dues else 0.0
    after_step = sorted(accepted - due for accepted, due in spans.values() if due is not None and due >= step_end)
    fields: dict[str, Any] = {
        "rate": cfg.rate,
        "seconds": round(cfg.n / cfg.rate, 1) if cfg.rate else None,
        "accepted_jobs": len(spans),
        "delivered_jobs": delivered,
        "undelivered_jobs": len(spans) - delivered,
        "accept_p99_after_step_ms": rounded(percentile(after_step, 99)),
        "a2d_p50_ms": rounded(percentile(latencies, 50)),
        "a2d_p99_ms": rounded(percentile(latencies, 99)),
        "a2d_p999_ms": rounded(percentile(latencies, 99.9)),
        "a2d_max_ms": rounded(latencies[-1] if latencies else None),
        "a2d_jobs": delivered,
        "d2d_p50_ms": rounded(percentile(waits, 50)),
        "d2d_p99_ms": rounded(percentile(waits, 99)),
        "drain_s": cfg.drain_s,
    }
    fields["slo_ok"] = slo_ok({**record, **fields})
    return fields


def slo_ok(r: dict[str, Any]) -> bool:
    """Whether one rate's run kept the SLO: every request accepted (2xx), accept p99 and
    accept-to-delivery p99 within the limits, and every accepted job delivered."""
    accept_max, a2d_max = slo_limits()
    return bool(
        r.get("accept_errors", 1) == 0
        and r.get("accepted_jobs", 0) == r.get("n")
        and r.get("undelivered_jobs", 1) == 0
        and r.get("accept_p99_ms") is not None
        and r["accept_p99_ms"] <= accept_max
        and r.get("a2d_p99_ms") is not None
        and r["a2d_p99_ms"] <= a2d_max
    )


def read_arrivals(path: Path) -> dict[str, float]:
    """The sink's {job id: first arrival epoch ms} as run.sh copied it (ARRIVALS_OUT); none: empty."""
    return {str(k): float(v) for k, v in json.loads(path.read_text()).items()} if path.exists() else {}
