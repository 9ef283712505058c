"""`make bench-isolation`: does one tenant's bad receiver delay another tenant's deliveries?

Tenant X sends X_JOBS webhooks (150) to a bad receiver; right after, tenant Y sends Y_JOBS (20)
to a receiver that answers at once. Three bad receivers, one case each: one that accepts the
connection and never answers (tests/support/silent_receiver.py), one that answers after
SLOW_S (10 s), and one that refuses connections (a closed port). Y's accept-to-delivery (its
submission to its arrival at the receiver) is printed per case as median and p99
beside Y's idle figures (measured first, X quiet), with the target: Y's p99 behind X at most
1.2 x Y's idle p99 + 100 ms. RUNS rounds (3) of every case, X a new tenant each time; the
figures are the medians over the rounds.

A fourth case, "backlog beyond the lane's limit", on a stack of its own: a work consumer (one
fairness lane) delivers nothing new while LANE_LIMIT messages (HERALD_CONSUMER_MAX_ACK_PENDING,
50,000 in production, 200 here) are unacknowledged, and a message waiting on the bus out of a
delay counts (what waits long, a retry or a delivery behind an open circuit, is parked in the
ledger instead). X sends 2 x LANE_LIMIT webhooks to the refusing receiver, then a Y on X's lane
sends Y_JOBS; Y's figures are beside its idle ones on that stack, and what has not arrived
after LANE_WAIT_S (120 s) is counted.

Herald runs with its default settings (the webhook timeout 15 s, 128 slots, 16 calls in
flight per target). Runs on the machine's NATS and PostgreSQL when NATS_URL / DATABASE_URL
are set (an isolated database and bus prefix, removed afterwards), else on embedded ones.
"""

from __future__ import annotations

import os
import platform
import socket
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from fairness import Sink, arrivals, herald_stack, latencies, p99, send, tenant

from herald.bus.subjects import lane_of
from tests.support.receiver import Receiver
from tests.support.silent_receiver import SilentReceiver

X_JOBS = int(os.environ.get("X_JOBS", "150"))
Y_JOBS = int(os.environ.get("Y_JOBS", "20"))
RUNS = int(os.environ.get("RUNS", "3"))
SLOW_S = float(os.environ.get("SLOW_S", "10"))
LANE_LIMIT = int(os.environ.get("LANE_LIMIT", "200"))
LANE_WAIT_S = float(os.environ.get("LANE_WAIT_S", "120"))
LANES = 16


def refusing_url() -> str:
    """A loopback port nothing listens on (bound, then closed): connections are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


def slow_receiver() -> Receiver:
    slow = Receiver()
    slow.behaviour.delay_path = ("/hook", SLOW_S)
    return slow


def lane_limit_case() -> tuple[list[tuple[float, float]], list[tuple[float, float, int]]]:
    """Y's (p50, p99) idle and (p50, p99, not arrived) behind X's backlog, per round, on a stack
    whose work consumers may hold LANE_LIMIT unacknowledged messages."""
    idle: list[tuple[float, float]] = []
    behind: list[tuple[float, float, int]] = []
    with herald_stack("lane-limit", HERALD_CONSUMER_MAX_ACK_PENDING=str(LANE_LIMIT)) as endpoints:
        gateway = endpoints["gateway_http"]
        operator = {"authorization": f"Bearer {Path(endpoints['operator_token_file']).read_text().strip()}"}
        sink = Sink()
        for round_ in range(RUNS):
            x_id, x_headers = tenant(gateway, operator, f"dead-target-x-{round_}")
            # A Y on X's lane: one tenant in LANES shares it.
            y_headers: dict[str, str] = {}
            for candidate in range(20 * LANES):
                y_id, y_headers = tenant(gateway, operator, f"lane-y-{round_}-{candidate}")
                if lane_of(y_id, LANES) == lane_of(x_id, LANES):
                    break
            got = latencies(sink, send(gateway, y_headers, sink.url, Y_JOBS, 4), timeout=120)
            idle.append((statistics.median(got), p99(got)))
            send(gateway, x_headers, refusing_url(), 2 * LANE_LIMIT, 16)
            got, missing = arrivals(sink, send(gateway, y_headers, sink.url, Y_JOBS, 4), LANE_WAIT_S)
            behind.append((statistics.median(got) if got else LANE_WAIT_S, p99(got) if got else LANE_WAIT_S, missing))
            print(
                f"round {round_ + 1}, lane limit: Y arrived {len(got)} of {Y_JOBS} in {LANE_WAIT_S:.0f} s", flush=True
            )
    return idle, behind


def main() -> int:
    cpu = platform.processor() or platform.machine()
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, load {os.getloadavg()}")
    silent, slow = SilentReceiver(), slow_receiver()
    cases: dict[str, Callable[[], str]] = {
        "silent (never answers)": lambda: silent.url,
        f"slow (answers after {SLOW_S:.0f} s)": lambda: slow.url,
        "refusing connections": refusing_url,
    }
    figures: dict[str, list[tuple[float, float]]] = {"idle": [], **{name: [] for name in cases}}
    with herald_stack("isolation") as endpoints:
        try:
            gateway = endpoints["gateway_http"]
            operator = {"authorization": f"Bearer {Path(endpoints['operator_token_file']).read_text().strip()}"}
            sink = Sink()
            _, y_headers = tenant(gateway, operator, "fast-y")
            # Warm the path (connections, caches) before anything is measured.
            latencies(sink, send(gateway, y_headers, sink.url, Y_JOBS, 4), timeout=120)
            for round_ in range(RUNS):
                idle = latencies(sink, send(gateway, y_headers, sink.url, Y_JOBS, 4), timeout=120)
                figures["idle"].append((statistics.median(idle), p99(idle)))
                for case, (name, url) in enumerate(cases.items()):
                    # A new X each round and case (tenant names are unique).
                    _, x_headers = tenant(gateway, operator, f"bad-x-{round_}-{case}")
                    send(gateway, x_headers, url(), X_JOBS, 16)
                    loaded = latencies(sink, send(gateway, y_headers, sink.url, Y_JOBS, 4), timeout=600)
                    figures[name].append((statistics.median(loaded), p99(loaded)))
                    print(f"round {round_ + 1}, {name}: Y p99 {p99(loaded) * 1000:.1f} ms", flush=True)
        finally:
            silent.close()
            slow.close()
    idle_p50 = statistics.median(f[0] for f in figures["idle"])
    idle_p99 = statistics.median(f[1] for f in figures["idle"])
    bound = 1.2 * idle_p99 + 0.1
    print(f"\nY's accept-to-delivery, {Y_JOBS} webhooks behind X's {X_JOBS}; medians of {RUNS} rounds")
    header = f"{'case':32} {'Y p50 ms':>10} {'Y p99 ms':>10} {'idle p99 ms':>12} {'p99/idle':>9}"
    print(f"{header}  target <= {bound * 1000:.0f} ms")
    print(f"{'idle (X quiet)':32} {idle_p50 * 1000:10.1f} {idle_p99 * 1000:10.1f} {idle_p99 * 1000:12.1f} {1:9.2f}")
    met = True
    for name in cases:
        p50 = statistics.median(f[0] for f in figures[name])
        p99_ = statistics.median(f[1] for f in figures[name])
        met = met and p99_ <= bound
        verdict = "met" if p99_ <= bound else "MISSED"
        ratio = p99_ / idle_p99
        print(f"{name:32} {p50 * 1000:10.1f} {p99_ * 1000:10.1f} {idle_p99 * 1000:12.1f} {ratio:9.2f}  {verdict}")
    lane_idle, lane_behind = lane_limit_case()
    idle_p99 = statistics.median(f[1] for f in lane_idle)
    bound = 1.2 * idle_p99 + 0.1
    p50 = statistics.median(f[0] for f in lane_behind)
    p99_ = statistics.median(f[1] for f in lane_behind)
    missing = statistics.median(f[2] for f in lane_behind)
    lane_met = p99_ <= bound and missing == 0
    name = f"backlog beyond the lane's limit ({LANE_LIMIT})"
    print(f"\n{name}: Y's idle p99 {idle_p99 * 1000:.1f} ms on that stack, target <= {bound * 1000:.0f} ms")
    print(
        f"{name:32} {p50 * 1000:10.1f} {p99_ * 1000:10.1f} {idle_p99 * 1000:12.1f} {p99_ / idle_p99:9.2f}  "
        f"{'met' if lane_met else 'MISSED'}; not arrived after {LANE_WAIT_S:.0f} s: {missing:.0f} of {Y_JOBS}"
    )
    return 0 if met and lane_met else 1


if __name__ == "__main__":
    sys.exit(main())
