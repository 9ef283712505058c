"""MODE=fanout: events fanned out to FANOUT (10) subscriptions, what the event path sustains.

One tenant with FANOUT webhook targets, all pointed at the bench sink (each with the signing secret
Herald makes it, so every delivery is signed with its own target's key), one filter on the bench's
event type and one subscription per target. The load is N events (`POST /v1/events`, the same
payload bytes as the webhook modes' requests): closed loop over C connections (the peers' loadgen.js),
or with RATES= the open loop (bench/openloop.js) rate by rate as MODE=steady runs it. The load
generator's preload (bench/shims/herald_loadgen.js) writes, per accepted event, its event id, when its
202 arrived, when its request was started (open loop: when it was due) and its job ids; the sink
counts each job id once, so every (event, target) delivery is counted on its own.

The figures: accepted events/s (the client's accepted events over its duration), deliveries/s (unique
arrivals at the sink over the wall time from the first 202 to the last arrival), accept-to-delivery
p50/p99 over the deliveries (each job's 202 to its first arrival) and event-to-last-delivery p50/p99
over the events all of whose deliveries arrived; CPU per delivery per process as the other modes
report CPU per delivered job. All FANOUT targets share the sink's origin, so the webhook-sender's
per-origin bound of calls in flight (HERALD_WEBHOOK_TARGET_IN_FLIGHT) applies to them together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from harness.tables import num, percentile, rounded

# The event type the bench sends and the filter matches (`herald.` types are Herald's own).
EVENT_TYPE = "bench.fanout"
# The open loop's per-rate medians of these too (harness/steady.py's `merged`).
FANOUT_FIGURES = ("accepted_events_per_s", "deliveries_per_s", "e2l_p50_ms", "e2l_p99_ms")


def warmup_events(cfg: Any) -> int:
    """The warm-up's events: about WARMUP deliveries, as the other modes warm up with WARMUP jobs."""
    return max(1, cfg.warmup // cfg.fanout) if cfg.warmup > 0 else 0


def deliveries_of(cfg: Any, events: int) -> int:
    """The deliveries `events` make in this mode (one per event in the others)."""
    return events * cfg.fanout if cfg.mode == "fanout" else events


def subscribe_targets(gateway: str, api_key: str, hook: str, width: int) -> list[str]:
    """The tenant's `width` targets at the sink, a filter on EVENT_TYPE and a subscription per target;
    the target ids. Each target keeps the secret Herald made it: checked to be its own."""
    headers = {"authorization": f"Bearer {api_key}"}
    with httpx.Client(base_url=gateway, headers=headers, timeout=30) as client:

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            answer = client.post(path, json=body)
            answer.raise_for_status()
            result: dict[str, Any] = answer.json()
            return result

        targets = [post("/v1/webhooks/targets", {"url": f"{hook}?target={i}"})["id"] for i in range(width)]
        event_filter = post("/v1/webhooks/filters", {"event_types": [EVENT_TYPE]})["id"]
        for target in targets:
            post("/v1/webhooks/subscriptions", {"target_id": target, "filter_id": event_filter})
        secrets = {client.get(f"/v1/webhooks/targets/{t}/secret").json()["key"] for t in targets}
        if len(secrets) != width:
            raise RuntimeError(f"the {width} targets share signing secrets ({len(secrets)} distinct)")
    return targets


def read_event_accepts(path: Path) -> dict[str, tuple[float, float | None, list[str]]]:
    """The preload's `event_id accept_ms start_ms job,job,...` lines, per event (missing file: none)."""
    events: dict[str, tuple[float, float | None, list[str]]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 4:
                events[fields[0]] = (float(fields[1]), float(fields[2]), fields[3].split(","))
    return events


def job_spans(events: dict[str, tuple[float, float | None, list[str]]]) -> dict[str, tuple[float, float | None]]:
    """Each delivery's job with its event's accept (and start) time, as the other modes' spans per job."""
    return {job: (accepted, started) for accepted, started, jobs in events.values() for job in jobs}


def fanout_fields(
    cfg: Any,
    events: dict[str, tuple[float, float | None, list[str]]],
    arrivals: dict[str, float],
    load: dict[str, Any],
    sink_stats: dict[str, Any],
) -> dict[str, Any]:
    """The run's fan-out figures: events accepted and their rate, deliveries and their rate, and
    event-to-last-delivery percentiles (over the events whose every delivery arrived)."""
    last_deliveries = sorted(
        max(arrivals[j] for j in jobs) - accepted
        for accepted, _, jobs in events.values()
        if jobs and all(j in arrivals for j in jobs)
    )
    first_accept, last_arrival = load.get("first_accept_ms"), sink_stats.get("last_ts_ms")
    window_s = (last_arrival - first_accept) / 1000 if first_accept and last_arrival else None
    widths = sorted({len(jobs) for _, _, jobs in events.values()})
    return {
        "fanout": cfg.fanout,
        "events": cfg.n,
        "accepted_events": len(events),
        # Events whose answer named another number of deliveries than FANOUT (should be none).
        "fanout_widths_seen": widths,
        "accepted_events_per_s": rounded(load["ok"] / load["duration_s"] if load.get("duration_s") else None),
        "deliveries": int(sink_stats["unique"]),
        "deliveries_per_s": rounded(int(sink_stats["unique"]) / window_s if window_s else None),
        "events_all_delivered": len(last_deliveries),
        "e2l_p50_ms": rounded(percentile(last_deliveries, 50)),
        "e2l_p99_ms": rounded(percentile(last_deliveries, 99)),
        "e2l_max_ms": rounded(last_deliveries[-1] if last_deliveries else None),
    }


def fanout_summary(name: str, records: list[dict[str, Any]], median: Any) -> str:
    """The burst report's line for MODE=fanout (medians of the used runs)."""
    width = records[0].get("fanout", "?")
    return (
        f"\n-- {name}: events fanned out to {width} subscriptions: accepted "
        f"{num(median(records, 'accepted_events_per_s'))} events/s, {num(median(records, 'deliveries_per_s'))} "
        "deliveries/s (unique arrivals / first 202 to last arrival); accept-to-delivery p50 "
        f"{num(median(records, 'a2d_p50_ms'))} ms, p99 {num(median(records, 'a2d_p99_ms'))} ms (per delivery); "
        f"event-to-last-delivery p50 {num(median(records, 'e2l_p50_ms'))} ms, p99 "
        f'{num(median(records, "e2l_p99_ms"))} ms. CPU figures below are per delivery ("delivered jobs").'
    )


# The open loop's extra columns (harness/steady.py's table) and their cells.
OPEN_LOOP_HEADER = f"{'ev/s':>7} {'deliv/s':>8} {'e2l p50':>8} {'e2l p99':>8} "


def open_loop_cells(r: dict[str, Any]) -> str:
    """One rate's accepted events/s, deliveries/s and event-to-last-delivery p50/p99."""
    return (
        f"{num(r.get('accepted_events_per_s'), 0):>7} {num(r.get('deliveries_per_s'), 0):>8} "
        f"{num(r.get('e2l_p50_ms'), 1):>8} {num(r.get('e2l_p99_ms'), 1):>8} "
    )
