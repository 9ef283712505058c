"""`make bench-fairness`: does one tenant's backlog delay another tenant's messages?

Tenant A enqueues A_JOBS webhooks (10,000 by default); right after, tenant B sends
B_JOBS (50). B's time to delivery (submit -> arrival at the receiver) is printed as
median and p99 beside the same figures measured first with A idle, and the ratio.
The target is a ratio under 2.

Fair queueing is stochastic: tenants are hashed onto HERALD_FAIRNESS_LANES lanes
(16), and two tenants on one lane share its turn. The bench picks a B whose lane
differs from A's and prints both lanes; with 16 lanes, 1 tenant in 16 shares A's.

Runs on the machine's NATS and PostgreSQL when NATS_URL / DATABASE_URL are set (an
isolated database and bus prefix, removed afterwards), else on embedded ones.
"""

# A harness: it starts local processes and talks to 127.0.0.1 by design.
# ruff: noqa: S310

from __future__ import annotations

import concurrent.futures
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.herald_code import StackConfig

from herald.bus.subjects import lane_of
from herald.cli.stack import Stack
from tests.support.infra import isolated_infra

A_JOBS = int(os.environ.get("A_JOBS", "10000"))
B_JOBS = int(os.environ.get("B_JOBS", "50"))
LANES = int(os.environ.get("HERALD_FAIRNESS_LANES", "16"))


class Sink:
    """Records when each job id first arrives."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                job_id = self.headers.get("webhook-id", "")
                with lock:
                    sink.arrived.setdefault(job_id, time.monotonic())
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"


def call(url: str, body: object, headers: dict[str, str], method: str = "POST") -> dict[str, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={**headers, "content-type": "application/json"}, method=method
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        result: dict[str, object] = json.loads(response.read() or b"{}")
        return result


def tenant(gateway: str, operator: dict[str, str], name: str) -> tuple[str, dict[str, str]]:
    created = call(f"{gateway}/admin/v1/tenants", {"name": name, "plan": "startup"}, operator)
    tenant_id = str(created["tenant_id"])
    limits = {"rate_per_min": "unlimited", "webhooks_per_month": "unlimited"}
    call(f"{gateway}/admin/v1/tenants/{tenant_id}/limits", limits, operator, method="PATCH")
    return tenant_id, {"authorization": f"Bearer {created['api_key']}"}


def send(gateway: str, headers: dict[str, str], url: str, count: int, workers: int) -> dict[str, float]:
    """Submits `count` webhooks; returns job id -> submit time."""

    def one(i: int) -> tuple[str, float]:
        started = time.monotonic()
        accepted = call(f"{gateway}/v1/webhooks", {"url": url, "payload": {"n": i}}, headers)
        return str(accepted["id"]), started

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(one, range(count)))


def arrivals(sink: Sink, submitted: dict[str, float], timeout: float) -> tuple[list[float], int]:
    """Each submitted job's submit-to-arrival time (sorted) once all arrived, or at `timeout`; and
    how many had not arrived by then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(j in sink.arrived for j in submitted):
        time.sleep(0.05)
    missing = sum(1 for j in submitted if j not in sink.arrived)
    return sorted(sink.arrived[j] - t for j, t in submitted.items() if j in sink.arrived), missing


def latencies(sink: Sink, submitted: dict[str, float], timeout: float) -> list[float]:
    arrived, missing = arrivals(sink, submitted, timeout)
    if missing:
        raise SystemExit(f"{missing} jobs not delivered within {timeout:.0f}s")
    return arrived


def p99(values: list[float]) -> float:
    return values[min(len(values) - 1, round(0.99 * (len(values) - 1)))]


@contextmanager
def herald_stack(name: str, **env: str) -> Iterator[dict[str, str]]:
    """Herald on isolated infrastructure, with its default settings but `env`; yields its endpoints."""
    with tempfile.TemporaryDirectory(prefix=f"herald-{name}-") as scratch, isolated_infra(Path(scratch)) as infra:
        stack = Stack(
            StackConfig(
                data_dir=Path(scratch) / "stack",
                nats_url=infra["nats_url"],
                database_url=infra["database_url"],
                gateway_http_port=0,
                gateway_grpc_port=0,
                bus_prefix=infra["bus_prefix"],
                env=env,
            )
        )
        endpoints = stack.start()
        try:
            yield endpoints
        finally:
            stack.stop()


def main() -> int:
    cpu = platform.processor() or platform.machine()
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}")
    with herald_stack("fairness") as endpoints:
        gateway = endpoints["gateway_http"]
        operator = {"authorization": f"Bearer {Path(endpoints['operator_token_file']).read_text().strip()}"}
        sink = Sink()
        a_id, a_headers = tenant(gateway, operator, "backlog-a")
        b_id, b_headers = tenant(gateway, operator, "quiet-b")
        attempts = 0
        while lane_of(b_id, LANES) == lane_of(a_id, LANES) and attempts < 20:
            b_id, b_headers = tenant(gateway, operator, f"quiet-b{attempts}")
            attempts += 1
        print(f"tenant A lane {lane_of(a_id, LANES)}, tenant B lane {lane_of(b_id, LANES)} of {LANES}")

        idle = latencies(sink, send(gateway, b_headers, sink.url, B_JOBS, 8), timeout=120)
        started = time.monotonic()
        backlog = send(gateway, a_headers, sink.url, A_JOBS, 32)
        enqueue_s = time.monotonic() - started
        queued = sum(1 for j in backlog if j not in sink.arrived)
        loaded = latencies(sink, send(gateway, b_headers, sink.url, B_JOBS, 8), timeout=600)
        still = sum(1 for j in backlog if j not in sink.arrived)
        latencies(sink, backlog, timeout=900)
    med_idle, med_loaded = statistics.median(idle), statistics.median(loaded)
    print(f"A enqueued {A_JOBS} in {enqueue_s:.1f}s; {queued} of them still queued when B sent")
    print(f"{still} of A's still queued when B's last job was delivered")
    print(f"B, A idle:    median {med_idle * 1000:8.1f} ms   p99 {p99(idle) * 1000:8.1f} ms")
    print(f"B, A backlog: median {med_loaded * 1000:8.1f} ms   p99 {p99(loaded) * 1000:8.1f} ms")
    ratio_median, ratio_p99 = med_loaded / med_idle, p99(loaded) / p99(idle)
    print(f"ratio (backlog / idle): median {ratio_median:.2f}x   p99 {ratio_p99:.2f}x   target < 2")
    return 0 if max(ratio_median, ratio_p99) < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
