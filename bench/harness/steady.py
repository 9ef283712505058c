"""MODE=steady: the open loop, rate by rate, for every side in one invocation, and the SLO capacity.

Each rate is one run per side (RUNS: more, medians), the sides interleaved within the rate (run r of
every side before run r + 1) so that drifts in the machine's load spread over all of them: the work
tree as `herald up` runs it; with VARIANT the work tree again per group of infrastructure switches
(harness/switches.py: sync-default, plain-bus, plain-mesh), with VARIANT_ENV's service settings on
every such side (VARIANT_ENV alone: one side with only those); with REV that commit (BASE_VARIANT:
its switches); with PEER the peer's own run.sh at each worker concurrency of PEER_WC (5 and 50: the
peer at its better). A run is the burst mode's run (its own servers, warm-up, quiet wait, sampler,
summarize.py) with the open loop (bench/openloop.js) at the rate for SECONDS, deliveries awaited
DRAIN s after it. Rates rise in steps; a side stops PAST rates after the first it fails (its SLO
capacity is then known), so a run stays short. MODE=fanout with RATES= (or STEP=) runs its events
the same way, the work tree alone (harness/fanout.py), with events/s, deliveries/s and
event-to-last-delivery in the table.

Settings (beside the burst mode's): RATES=200,400 (a list) or STEP=100 MAX_RATE=1000 (STEP, 2·STEP,
... MAX_RATE); SECONDS=20 per rate; DRAIN=30; PAST=1; PEER_WC=5,50; SLO_ACCEPT_P99_MS=100;
SLO_A2D_P99_MS=1000; LIGHT_RATE=200 (the rate whose accept-to-delivery p50 is compared);
SERVICE_ENV='HERALD_X=1 ...' (every Herald side's services); VARIANT='sync-default plain-bus'
(a side per group); VARIANT_ENV='HERALD_Y=2 ...'; BASE_VARIANT=sync-always.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from harness.config import Config, env, log
from harness.cpu import contended
from harness.fanout import FANOUT_FIGURES, OPEN_LOOP_HEADER, open_loop_cells
from harness.machine import describe
from harness.retention import retention_report
from harness.steady_figures import slo_limits, slo_ok
from harness.switches import variant_sides
from harness.tables import num

FIGURES = (
    "accept_p50_ms",
    "accept_p99_ms",
    "accept_p99_after_step_ms",
    "a2d_p50_ms",
    "a2d_p99_ms",
    "a2d_p999_ms",
    "d2d_p50_ms",
    "d2d_p99_ms",
)
COUNTS = ("delivered_jobs", "undelivered_jobs", "sink_duplicates", "accept_errors")


def steady_rates() -> list[int]:
    """RATES, or STEP to MAX_RATE in steps of STEP."""
    if env("RATES", ""):
        return sorted(int(r) for r in env("RATES", "").split(","))
    step, top = int(env("STEP", "100")), int(env("MAX_RATE", "1000"))
    return list(range(step, top + 1, step))


def steady_sides(cfg: Config) -> list[tuple[str, str, Config]]:
    """(kind, label, settings) of every side of the invocation."""
    sides = [("herald", "Herald", dataclasses.replace(cfg, variant_env="", variant=""))]
    for switches in variant_sides(cfg.variant) or ([""] if cfg.variant_env else []):
        variant = dataclasses.replace(cfg, service_env=f"{cfg.service_env} {cfg.variant_env}".strip(), variant=switches)
        label = "Herald" + (f" [{switches}]" if switches else "") + (f" + {cfg.variant_env}" if cfg.variant_env else "")
        sides.append(("herald", label, variant))
    if cfg.rev:
        label = f"REV {cfg.rev}" + (f" [{cfg.base_variant}]" if cfg.base_variant else "")
        sides.append(("base", label, dataclasses.replace(cfg, variant_env="", variant="")))
    if cfg.peer:
        for wc in (int(w) for w in env("PEER_WC", "5,50").split(",")):
            sides.append(("peer", f"{cfg.peer} c{wc}", dataclasses.replace(cfg, wc=wc, wc_given=True)))
    return sides


def steady_main(cfg: Config, machine: dict[str, Any], run_of: dict[str, Callable[..., Any]]) -> int:
    """Every rate for every side still within its SLO (and PAST rates beyond), then the report."""
    seconds, past = float(env("SECONDS", "20")), int(env("PAST", "1"))
    sides = steady_sides(cfg)
    failed = {label: 0 for _, label, _ in sides}
    records: list[dict[str, Any]] = []
    index = 0
    for rate in steady_rates():
        at_rate = [(kind, label, side) for kind, label, side in sides if failed[label] <= past]
        runs: dict[str, list[dict[str, Any]]] = {label: [] for _, label, _ in at_rate}
        # Run r of every side, then run r + 1: a drift in the machine's speed spreads over all sides.
        for _ in range(cfg.runs):
            for kind, label, side in at_rate:
                index += 1
                run_cfg = dataclasses.replace(side, rate=rate, n=max(int(rate * seconds), 1))
                started = time.monotonic()
                try:
                    record = run_of[kind](run_cfg, index, machine)
                except Exception as error:  # a failed run is reported; the others still count
                    log(f"{label} at {rate}/s failed: {error!r}")
                    record = None
                log(f"{label} at {rate}/s took {time.monotonic() - started:.0f}s")
                if record is None:
                    continue
                record.update(steady_side=label, role={"base": "base", "herald": "work"}.get(kind, "peer"))
                with cfg.results.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                runs[label].append(record)
        for _, label, _ in at_rate:
            records += runs[label]
            kept = slo_ok(merged(runs[label])) if runs[label] else False
            if not kept or failed[label]:
                failed[label] += 1
    steady_report(cfg, machine, records)
    return 0


def merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One rate's figures of a side: medians over its clean runs (all when none is clean)."""
    used = [r for r in runs if not contended(r)] or runs
    out = dict(used[len(used) // 2])
    for key in (*FIGURES, *FANOUT_FIGURES, *COUNTS):
        values = [r[key] for r in used if r.get(key) is not None]
        out[key] = statistics.median(values) if values else None
    out["runs_used"] = f"{len(used)}/{len(runs)}"
    return out


def cpu_per_job(r: dict[str, Any]) -> float | None:
    """CPU ms per delivered job, all processes (Herald's with the PostgreSQL backends the sampler missed)."""
    value = r.get("cpu_s_per_1000_delivered_total_incl_exited") or r.get("cpu_s_per_1000_delivered_total")
    return float(value) if value is not None else None


def other_cores(r: dict[str, Any]) -> float | None:
    """Other load on the machine during the window, in cores (summarize.py's foreign CPU, without
    the PostgreSQL CPU the sampler missed where known): above 0.3 the run counts as contended."""
    foreign = r.get("foreign_cpu_s_excl_missed_postgres", r.get("foreign_cpu_s"))
    return foreign / max(r["window_s"], 0.001) if foreign is not None and r.get("window_s") else None


def capacity(rows: dict[int, dict[str, Any]]) -> int:
    """The highest rate at which it and every lower rate measured kept the SLO (0: none)."""
    best = 0
    for rate in sorted(rows):
        if not slo_ok(rows[rate]):
            break
        best = rate
    return best


def steady_report(cfg: Config, machine: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Per side, per rate: the open loop's figures and CPU per delivered job per process; then each
    side's SLO capacity, and Herald beside REV and the peer at its better worker concurrency."""
    accept_max, a2d_max = slo_limits()
    print()
    print("== " + describe(machine))
    herald = [r for r in records if r.get("system") == "herald"]
    if herald:
        print(f"== Herald {herald[0]['herald_commit'][:12]} ({herald[0]['herald_source']})")
    fanout = cfg.mode == "fanout"
    print(
        f"== MODE={cfg.mode} (open loop: request i due at t0 + i/rate, latencies from when due) C={cfg.conns} "
        f"SECONDS={env('SECONDS', '20')} DRAIN={cfg.drain_s} runs per rate={cfg.runs} invocation={cfg.invocation}"
    )
    if fanout:
        print(
            f"== each event fanned out to {records[0].get('fanout') if records else cfg.fanout} subscriptions: "
            "rate = events/s offered; a2d per delivery; e2l = event's 202 to its last delivery; delivered, "
            "undelivered, CPU per delivery"
        )
    print(f"== SERVICE_ENV={cfg.service_env or '(none)'}; SLO: accept p99 <= {accept_max:g} ms, "
          f"accept-to-delivery p99 <= {a2d_max:g} ms, nothing refused or undelivered; 'other': other load "
          "on the machine, cores (over 0.3: contended)")  # fmt: skip
    sides: dict[str, dict[int, dict[str, Any]]] = {}
    for label in dict.fromkeys(r["steady_side"] for r in records):
        by_rate: dict[int, list[dict[str, Any]]] = {}
        for r in records:
            if r["steady_side"] == label:
                by_rate.setdefault(int(r["rate"]), []).append(r)
        sides[label] = {rate: merged(runs) for rate, runs in sorted(by_rate.items())}
    for label, rows in sides.items():
        first = next(iter(rows.values()))
        print(f"\n-- {label}: SLO capacity {num(capacity(rows))}/s{infra_line(first)}")
        if first.get("system") == "herald" and first.get("service_env", "") != cfg.service_env:
            print(f"   its services' settings: {first.get('service_env') or '(none)'}")
        print(
            f"{'rate/s':>7} {'acc p50':>8} {'acc p99':>8} {'5 s on':>7} {OPEN_LOOP_HEADER if fanout else ''}"
            f"{'a2d p50':>8} {'a2d p99':>8} {'a2d p99.9':>9} {'d2d p50':>8} {'d2d p99':>8} "
            f"{'delivered':>9} {'undeliv':>7} {'dups':>5} {'CPU ms/job':>10}  SLO  {'other':>5}  "
            "per process (CPU ms per delivered job)"
        )
        for rate, r in rows.items():
            procs = " ".join(
                f"{name}={value:.2f}" for name, value in sorted((r.get("cpu_s_per_1000_delivered") or {}).items())
            )
            print(
                f"{rate:>7} {num(r['accept_p50_ms'], 1):>8} {num(r['accept_p99_ms'], 1):>8} "
                f"{num(r.get('accept_p99_after_step_ms'), 1):>7} "
                f"{open_loop_cells(r) if fanout else ''}"
                f"{num(r['a2d_p50_ms'], 1):>8} {num(r['a2d_p99_ms'], 1):>8} {num(r['a2d_p999_ms'], 1):>9} "
                f"{num(r.get('d2d_p50_ms'), 1):>8} {num(r.get('d2d_p99_ms'), 1):>8} "
                f"{num(r['delivered_jobs']):>9} {num(r['undelivered_jobs']):>7} {num(r['sink_duplicates']):>5} "
                f"{num(cpu_per_job(r), 2):>10}  {'ok ' if slo_ok(r) else 'NO '}  {num(other_cores(r), 2):>5}  {procs}"
            )
    compare(sides)
    retention_report(sides)


def infra_line(r: dict[str, Any]) -> str:
    """What a Herald side's infrastructure ran with (harness/switches.py), as its records say."""
    if r.get("system") != "herald" or "bus_users" not in r:
        return ""
    sync = r.get("nats_sync_interval")
    users = "users per service" if r["bus_users"] else "no users"
    mesh = "mTLS" if r["mesh_tls"] else "plaintext"
    header = "; each webhook with a custom header" if r.get("webhook_header") else ""
    return (
        f" (NATS sync_interval {'machine' if sync is None else sync or 'default'}, {users}; gRPC mesh {mesh}{header})"
    )


def compare(sides: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Herald's capacity, lightest-rate accept-to-delivery p50 and CPU per job beside each other side's,
    and beside the peer at its better worker concurrency (higher capacity; then lower p50)."""
    if "Herald" not in sides or len(sides) < 2:
        return
    herald = sides["Herald"]
    peers = [label for label, rows in sides.items() if any(r.get("system") != "herald" for r in rows.values())]
    # The light load whose latency is compared (LIGHT_RATE, 200/s), else the lowest measured.
    light = int(env("LIGHT_RATE", "200")) if int(env("LIGHT_RATE", "200")) in herald else min(herald)

    def rank(label: str) -> tuple[int, float]:
        p50 = sides[label].get(light, {}).get("a2d_p50_ms")
        return (-capacity(sides[label]), p50 if p50 is not None else float("inf"))

    best_peer = min(peers, key=rank) if peers else None
    print("\n-- Herald beside the others (Herald / other)")
    for label, rows in sides.items():
        if label == "Herald":
            continue
        mark = " (the peer at its better)" if label == best_peer else ""
        cap_h, cap_o = capacity(herald), capacity(rows)
        line = f"{label}{mark}: SLO capacity {num(cap_h)} / {num(cap_o)}/s" + (
            f" = {cap_h / cap_o:.2f}x" if cap_o else ""
        )
        if light in rows:
            h, o = herald[light].get("a2d_p50_ms"), rows[light].get("a2d_p50_ms")
            line += f"; accept-to-delivery p50 at {light}/s {num(h, 1)} / {num(o, 1)} ms" + (
                f" = {h / o:.2f}x" if h is not None and o else ""
            )
            h, o = herald[light].get("d2d_p50_ms"), rows[light].get("d2d_p50_ms")
            line += f", due-to-delivery p50 {num(h, 1)} / {num(o, 1)} ms" + (
                f" = {h / o:.2f}x" if h is not None and o else ""
            )
        both = [rate for rate in herald if rate in rows]
        ratios = [
            cpu_per_job(herald[rate]) / cpu_per_job(rows[rate])  # type: ignore[operator]
            for rate in both
            if cpu_per_job(herald[rate]) and cpu_per_job(rows[rate])
        ]
        if ratios:
            line += (
                f"; CPU per delivered job (all processes) {statistics.median(ratios):.2f}x "
                f"(median over {len(ratios)} rates)"
            )
        print(line)


def steady_report_again(cfg: Config, records: list[dict[str, Any]]) -> int:
    """`--report INVOCATION` of a MODE=steady invocation."""
    first = records[0]
    cfg.conns, cfg.drain_s, cfg.mode = first["conns"], int(first.get("drain_s", cfg.drain_s)), first["mode"]
    cfg.service_env = first.get("service_env", "")
    steady_report(cfg, first["machine"], records)
    return 0
