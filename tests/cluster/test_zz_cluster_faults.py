"""Faults under load on the three-node cluster with two of every service (docs/performance.md, "A three-node cluster"),
bounded: it stops by itself after a fixed number of jobs and a fixed deadline. Runs last in
the package: it kills nodes, processes and the database (the package's own PostgreSQL, never
the machine's). In the suite A's backlog is FAULTS_BACKLOG_A=300 jobs; `make bench-cluster-faults`
runs it with the issue's 10,000 (minutes on two cores, too long for the suite).

Tenant A submits a backlog while tenant B submits at a steady pace, some of its jobs under
ordering keys, each tenant to a receiver of its own. Meanwhile, one after the other:
the work stream's leader steps down (a clean handover, as a rolling restart does); the new
leader's node is SIGKILLed (a lost machine) and restarted on its store; later another node;
one replica of every service is SIGKILLed (the supervisor restarts it); PostgreSQL restarts.

Then: every job answered 202 was delivered (lost = 0); no receiver got another tenant's job;
jobs sharing an ordering key first arrived in submission order (one of the two ledgers mints
its ids from a clock 5 s behind: the order is the database's); duplicates are counted per
fault and stay within the in-flight window (what the senders may hold unacknowledged when a
fault hits). Both tenants submit through both gateways, as behind a load balancer (a refused
or cut request goes to the other one; A in batches of 50 items). Reported, never asserted (speed belongs to
`make bench`): how long accepts and deliveries paused around each fault (the services'
reconnect times as a client sees them) and B's accept-to-delivery latency under A's backlog
with two webhook-senders (fairness). The report is printed at the end of the run.
"""

from __future__ import annotations

import itertools
import os
import signal
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import httpx

from herald.cli.stack import SERVICES
from herald.config import Settings
from herald.sender.slots import window_size
from tests.cluster.conftest import REPLICAS, ClusterStack
from tests.conftest import TEST_ENV, report
from tests.support.api import TenantKey
from tests.support.receiver import Receiver

BACKLOG_A = int(os.environ.get("FAULTS_BACKLOG_A", "300"))
# Tenant B goes on until the last fault is over (at least STEADY_B jobs, at most MAX_B).
STEADY_B = 60
MAX_B = 400
B_PACE = 4.0  # jobs per second
ORDERING_KEYS = 3  # every other B job carries one of these keys
# A backlog of 10,000 takes minutes to submit and deliver on two cores.
SUBMIT_DEADLINE_S = 150.0 + BACKLOG_A / 50
DELIVERY_DEADLINE_S = 180.0 + BACKLOG_A / 50
# What the webhook-senders may have delivered and not yet recorded when a fault hits: each
# replica's window of started jobs (`herald.sender.slots.window_size`), the most
# a fault may duplicate. A PostgreSQL restart stops both replicas' records; a small backlog
# never fills the windows, A's 10,000 (`make bench-cluster-faults`) does.
IN_FLIGHT_WINDOW = REPLICAS * window_size(
    int(TEST_ENV.get("HERALD_WEBHOOK_CONCURRENCY", Settings.model_fields["webhook_concurrency"].default))
)


@dataclass
class Accepted:
    job_id: str
    tenant: str
    submitted_at: float
    ordering_key: str = ""
    answered_at: float = 0.0


@dataclass
class Load:
    accepted: list[Accepted] = field(default_factory=list)
    retries: int = 0
    answers: Counter[int] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def submit(
        self,
        client: httpx.Client,
        gateways: list[str],
        tenant: TenantKey,
        label: str,
        body: dict[str, object],
        key: str,
    ) -> None:
        """One job, retried with its Idempotency-Key through refusals and cut connections, each
        time through the next gateway (a load balancer's way); the first try's gateway turns with
        the key, so both gateways carry the load."""
        deadline = time.monotonic() + SUBMIT_DEADLINE_S
        started = time.monotonic()
        turn = hash(key)
        while time.monotonic() < deadline:
            gateway = gateways[turn % len(gateways)]
            turn += 1
            try:
                response = client.post(
                    f"{gateway}/v1/webhooks", json=body, headers={**tenant.headers, "Idempotency-Key": key}
                )
            except httpx.TransportError:
                with self.lock:
                    self.retries += 1
                time.sleep(0.3)
                continue
            with self.lock:
                self.answers[response.status_code] += 1
            if response.status_code == 202:
                with self.lock:
                    self.accepted.append(
                        Accepted(
                            response.json()["id"], label, started, str(body.get("ordering_key", "")), time.monotonic()
                        )
                    )
                return
            assert response.status_code in (429, 503), f"{response.status_code}: {response.text[:300]}"
            with self.lock:
                self.retries += 1
            time.sleep(0.3)
        raise AssertionError(f"job {key} not accepted within {SUBMIT_DEADLINE_S}s")

    def submit_batch(
        self,
        client: httpx.Client,
        gateways: list[str],
        tenant: TenantKey,
        label: str,
        items: dict[str, dict[str, object]],
    ) -> None:
        """Jobs through POST /v1/webhooks/batch (how a backlog arrives), each item with its own
        Idempotency-Key; the items not answered 202 go again, through the next gateway."""
        deadline = time.monotonic() + SUBMIT_DEADLINE_S
        started = time.monotonic()
        waiting = dict(items)
        turn = hash(next(iter(items)))
        while waiting and time.monotonic() < deadline:
            gateway = gateways[turn % len(gateways)]
            turn += 1
            keys = list(waiting)
            try:
                response = client.post(
                    f"{gateway}/v1/webhooks/batch",
                    json={"items": [{**waiting[key], "idempotency_key": key} for key in keys]},
                    headers=tenant.headers,
                )
            except httpx.TransportError:
                with self.lock:
                    self.retries += 1
                time.sleep(0.3)
                continue
            with self.lock:
                self.answers[response.status_code] += 1
            if response.status_code != 200:
                assert response.status_code in (429, 503), f"{response.status_code}: {response.text[:300]}"
                with self.lock:
                    self.retries += 1
                time.sleep(0.3)
                continue
            now = time.monotonic()
            for result in response.json()["results"]:
                key = keys[result["index"]]
                if result["status"] == 202:
                    with self.lock:
                        self.accepted.append(Accepted(result["id"], label, started, "", now))
                    del waiting[key]
                else:
                    assert result["status"] in (429, 503), result
            if waiting:
                with self.lock:
                    self.retries += 1
                time.sleep(0.3)
        assert not waiting, f"{len(waiting)} items not accepted within {SUBMIT_DEADLINE_S}s"


# A's backlog goes in batches of this many items, four batches at a time.
BATCH_ITEMS = 50


@dataclass
class Fault:
    name: str
    started: float
    ended: float = 0.0
    recovered_in_s: float = 0.0


def _timed(faults: list[Fault], name: str, action: Callable[[], float]) -> None:
    fault = Fault(name, time.monotonic())
    fault.recovered_in_s = action()
    fault.ended = time.monotonic()
    faults.append(fault)


def longest_pause(times: list[float], start: float, end: float) -> float:
    """The longest stretch of [start, end] without one of `times` (sorted)."""
    inside = [t for t in times if start <= t <= end]
    edges = [start, *inside, end]
    return max(b - a for a, b in itertools.pairwise(edges))


def test_faults_under_load_on_the_cluster_lose_nothing(cluster_stack: ClusterStack) -> None:
    a, b = cluster_stack.tenant("faults-a"), cluster_stack.tenant("faults-b")
    receivers = {"a": Receiver(), "b": Receiver()}
    load = Load()
    faults: list[Fault] = []
    gateways = cluster_stack.gateways
    faults_over = threading.Event()
    try:

        def backlog() -> None:
            with httpx.Client(timeout=30) as client, ThreadPoolExecutor(4) as pool:
                done = [
                    pool.submit(
                        load.submit_batch,
                        client,
                        gateways,
                        a,
                        "a",
                        {
                            f"a-{i}": {"url": receivers["a"].url, "payload": {"n": i}}
                            for i in range(first, min(first + BATCH_ITEMS, BACKLOG_A))
                        },
                    )
                    for first in range(0, BACKLOG_A, BATCH_ITEMS)
                ]
                for future in done:
                    future.result()

        def steady() -> None:
            with httpx.Client(timeout=10) as client:
                for i in range(MAX_B):
                    if i >= STEADY_B and faults_over.is_set():
                        break
                    body: dict[str, object] = {"url": receivers["b"].url, "payload": {"n": i}}
                    if i % 2 == 0:
                        body["ordering_key"] = f"key-{i // 2 % ORDERING_KEYS}"
                    load.submit(client, gateways, b, "b", body, f"b-{i}")
                    time.sleep(1 / B_PACE)

        errors: list[BaseException] = []

        def run(target: Callable[[], None]) -> threading.Thread:
            def guarded() -> None:
                try:
                    target()
                except BaseException as error:
                    errors.append(error)

            thread = threading.Thread(target=guarded)
            thread.start()
            return thread

        submitters = [run(backlog), run(steady)]
        cluster = cluster_stack.cluster

        def kill_node(name: str) -> float:
            node = cluster.node_named(name)
            node.kill()
            if name == killed_leader:
                _new, took = cluster_stack.leader(changed_from=name)
            else:
                took = 0.0
            time.sleep(1.0)
            started = time.monotonic()
            cluster.restart(cluster.nodes.index(node))
            return took or (time.monotonic() - started)

        time.sleep(2.0)
        first_leader, _ = cluster_stack.leader()

        def step_down() -> float:
            cluster_stack.step_down()
            return cluster_stack.leader(changed_from=first_leader)[1]

        _timed(faults, f"work stream leader {first_leader} steps down", step_down)
        time.sleep(2.0)
        killed_leader, _ = cluster_stack.leader()
        _timed(faults, f"SIGKILL leader node {killed_leader}, restart", lambda: kill_node(killed_leader))
        time.sleep(2.0)
        current, _ = cluster_stack.leader()
        other = next(f"n{i}" for i in range(len(cluster.nodes)) if f"n{i}" not in (current, killed_leader))
        _timed(faults, f"SIGKILL node {other} (not leading), restart", lambda: kill_node(other))
        time.sleep(2.0)

        def kill_replicas() -> float:
            started = time.monotonic()
            replicas = [f"{name}-1" for name in SERVICES]
            for name in replicas:
                cluster_stack.stack.kill(name, signal.SIGKILL)
            for name in replicas:
                cluster_stack.stack.wait_healthy(name, timeout=120)
            return time.monotonic() - started

        _timed(faults, "SIGKILL one replica of each service", kill_replicas)
        time.sleep(2.0)

        def restart_postgres() -> float:
            started = time.monotonic()
            cluster_stack.postgres.stop()
            time.sleep(1.0)
            assert cluster_stack.postgres.start() == cluster_stack.database_url
            return time.monotonic() - started

        _timed(faults, "restart PostgreSQL", restart_postgres)
        faults_over.set()
        for thread in submitters:
            thread.join(timeout=SUBMIT_DEADLINE_S + 60)
        assert not errors, errors
        steady_b = sum(1 for j in load.accepted if j.tenant == "b")
        assert sum(1 for j in load.accepted if j.tenant == "a") == BACKLOG_A and steady_b >= STEADY_B

        deadline = time.monotonic() + DELIVERY_DEADLINE_S
        missing = list(load.accepted)
        while missing and time.monotonic() < deadline:
            missing = [job for job in missing if not receivers[job.tenant].for_job(job.job_id)]
            time.sleep(0.3)

        ids = {label: {j.job_id for j in load.accepted if j.tenant == label} for label in receivers}
        foreign = {
            label: [r for r in receiver.requests if r.headers.get("webhook-id") not in ids[label]]
            for label, receiver in receivers.items()
        }
        out_of_order = 0
        for key in {j.ordering_key for j in load.accepted if j.ordering_key}:
            # B submits one job after the other: submission order is the order of the 202s.
            keyed = sorted((j for j in load.accepted if j.ordering_key == key), key=lambda j: j.submitted_at)
            firsts = [
                min(r.at for r in receivers["b"].for_job(j.job_id)) for j in keyed if receivers["b"].for_job(j.job_id)
            ]
            out_of_order += firsts != sorted(firsts)

        # A duplicate belongs to the fault during or after which its second arrival came.
        per_fault: Counter[str] = Counter()
        for receiver in receivers.values():
            arrivals: dict[str, list[float]] = {}
            for request in receiver.requests:
                arrivals.setdefault(request.headers.get("webhook-id", ""), []).append(request.at)
            for times in arrivals.values():
                for again in sorted(times)[1:]:
                    owner = [f.name for f in faults if f.started <= again]
                    per_fault[owner[-1] if owner else "before any fault"] += 1

        # Reconnect times as a client sees them: the longest pause in accepts, and in deliveries,
        # from a fault's start until a few seconds after it ended.
        accepted_at = sorted(j.answered_at for j in load.accepted)
        delivered_at = sorted(r.at for receiver in receivers.values() for r in receiver.requests)
        pauses = {
            f.name: (
                longest_pause(accepted_at, f.started, f.ended + 5),
                longest_pause(delivered_at, f.started, f.ended + 5),
            )
            for f in faults
        }
        split = cluster_stack.counted("webhook-sender", "herald_deliveries_total")
        latencies = sorted(
            min(r.at for r in receivers["b"].for_job(j.job_id)) - j.submitted_at
            for j in load.accepted
            if j.tenant == "b" and receivers["b"].for_job(j.job_id)
        )
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan")
        lines = [
            f"cluster faults: {len(load.accepted)} jobs accepted (A backlog {BACKLOG_A}, B steady {steady_b}), "
            f"{load.retries} client retries, answers {dict(load.answers)}",
            *(
                f"  fault: {f.name}: {f.ended - f.started:.1f}s, recovered in {f.recovered_in_s:.1f}s; "
                f"accepts paused at most {pauses[f.name][0]:.1f}s, deliveries {pauses[f.name][1]:.1f}s"
                for f in faults
            ),
            f"  lost {len(missing)}, cross-tenant {sum(len(v) for v in foreign.values())}, "
            f"ordering keys out of order {out_of_order} of {ORDERING_KEYS}",
            f"  duplicates per fault {dict(per_fault) or 0} (window {IN_FLIGHT_WINDOW} per fault); delivery "
            f"attempts per webhook-sender process since its last start {split}",
            f"  tenant B accept-to-first-delivery with A's backlog: median "
            f"{statistics.median(latencies) if latencies else float('nan'):.2f}s, p99 {p99:.2f}s "
            f"(two webhook-senders; reduced run, a noisy machine: not a benchmark)",
        ]
        for line in lines:
            report(line)
        assert not missing, f"{len(missing)} accepted jobs never delivered, e.g. {[j.job_id for j in missing[:5]]}"
        assert not any(foreign.values()), foreign
        assert out_of_order == 0
        assert all(count <= IN_FLIGHT_WINDOW for count in per_fault.values()), per_fault
    finally:
        for receiver in receivers.values():
            receiver.close()
