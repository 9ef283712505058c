"""`python bench/capacity.py INVOCATION [SENDERS]`: the capacity model of docs/operations.md,
computed from one `make bench` invocation's records (bench/results/runs.jsonl, or bench/records/
for those the docs cite), so every
figure of the model is traced to a measured one.

From the Herald run(s) of the invocation with SENDERS webhook-senders (default: the most):
CPU ms per delivered job per service (the processes of a service summed: gateway + gateway-1,
the nodes of a JetStream cluster, the exact PostgreSQL CPU), and per job what PostgreSQL did
(commits, rows inserted and updated, WAL bytes; `db_per_job`, from pg_stat_database). Then for
1,000, 10,000 and 100,000 deliveries/s: the cores each service needs at the autoscalers'
target utilisation (70 % of requested CPU, the HPAs' setting), and the commits, row writes and
WAL per second the one PostgreSQL primary must take. Medians over the runs when there are
several; the model is linear in the rate (per-job costs measured at a few hundred jobs/s on
two cores: batching grows with load, so it errs on the high side).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "runs.jsonl"
# Records the docs cite, kept in the repository (bench/results is this machine's own).
KEPT = sorted((Path(__file__).resolve().parent / "records").glob("*.jsonl"))
RATES = (1_000, 10_000, 100_000)
TARGET_UTILISATION = 0.70  # the HPAs' and KEDA's CPU target (deploy/k8s: averageUtilization 70)
SERVICES = ("gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier")


def service_of(label: str) -> str:
    """`gateway-1` -> gateway, `nats-n2` -> nats; PostgreSQL's sampled figure is replaced by the exact one."""
    if label.startswith("nats"):
        return "nats"
    base = label.rsplit("-", 1)[0] if label.rsplit("-", 1)[-1].isdigit() else label
    return base if base in SERVICES else label


def per_job_ms(record: dict[str, Any]) -> dict[str, float]:
    """CPU ms per delivered job for each service (all its processes)."""
    found: dict[str, float] = {}
    for label, cpu_s_per_1000 in record["cpu_s_per_1000_delivered"].items():
        if label.startswith("_") or label == "postgres":
            continue
        found[service_of(label)] = found.get(service_of(label), 0.0) + cpu_s_per_1000
    exact = record.get("postgres_cpu_s_exact")
    found["postgres"] = (
        exact * 1000 / max(record["sink_unique"], 1)
        if exact is not None
        else record["cpu_s_per_1000_delivered"].get("postgres", 0.0)
    )
    return found


def median_of(records: list[dict[str, Any]], pick: Any) -> dict[str, float]:
    keys = {k for r in records for k in pick(r)}
    return {k: statistics.median(pick(r).get(k, 0.0) for r in records) for k in sorted(keys)}


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    invocation = sys.argv[1]
    sources = [path for path in (RESULTS, *KEPT) if path.exists()]
    rows = [json.loads(line) for path in sources for line in path.read_text().splitlines() if line.strip()]
    runs = [r for r in rows if r.get("invocation") == invocation and r.get("system") == "herald"]
    if not runs:
        print(f"no Herald record of {invocation} in {', '.join(map(str, sources))}")
        return 1
    senders = int(sys.argv[2]) if len(sys.argv) > 2 else max(r.get("webhook_senders", 1) for r in runs)
    runs = [r for r in runs if r.get("webhook_senders", 1) == senders]
    cpu = median_of(runs, per_job_ms)
    db = median_of(runs, lambda r: r.get("db_per_job") or {})
    nodes = median_of(runs, lambda r: {k: v for k, v in r["cpu_s_per_1000_delivered"].items() if k.startswith("nats")})
    print(
        f"invocation {invocation}: {len(runs)} run(s), {senders} webhook-sender(s), "
        f"{runs[0].get('cluster_nodes', 1)} NATS node(s), N={runs[0]['n']}, "
        f"contended: {[bool(r.get('contended')) for r in runs]}"
    )
    print("\nCPU ms per delivered job (measured)  and  cores needed at 70 % utilisation")
    print(f"{'service':16} {'ms/job':>8} " + " ".join(f"{rate:>10,}/s" for rate in RATES))
    for service, ms in sorted(cpu.items(), key=lambda item: -item[1]):
        cores = [rate * ms / 1000 / TARGET_UTILISATION for rate in RATES]
        print(f"{service:16} {ms:8.3f} " + " ".join(f"{c:12.1f}" for c in cores))
    total = sum(cpu.values())
    print(f"{'all':16} {total:8.3f} " + " ".join(f"{rate * total / 1000 / 0.7:12.1f}" for rate in RATES))
    if nodes:
        leader = runs[0].get("work_stream_leader")
        print(f"\nNATS per node (ms/job; the work stream's leader at the end: {leader}): {nodes}")
    if db:
        print("\nPostgreSQL per delivered job (measured)  and  per second at each rate")
        print(f"{'counter':16} {'per job':>10} " + " ".join(f"{rate:>12,}/s" for rate in RATES))
        for key, value in db.items():
            print(f"{key:16} {value:10.2f} " + " ".join(f"{rate * value:14,.0f}" for rate in RATES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
