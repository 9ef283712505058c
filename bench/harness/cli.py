"""The command line of bench/run.py: the checks, the lock, the interleaved rounds, the records.

Each round runs every side once (the work tree per SENDERS count, then REV, then the peer), so
drifts in the machine's load spread over all of them; each record is appended to RESULTS as soon
as its run ends, so an interrupted invocation keeps what it measured.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from harness.config import Config, env, log
from harness.herald_run import herald_run
from harness.machine import describe, machine_description
from harness.peer_run import ensure_peer_setup, peer_run
from harness.report import report, report_again, report_senders
from harness.rev_run import base_run, one_run
from harness.steady import steady_main
from harness.switches import check as check_switches


def main() -> int:
    """bench/run.py: `--report INVOCATION`, `--one-run INDEX OUT` (REV's child), or an invocation."""
    cfg = Config.from_env()
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        return report_again(cfg, sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "--one-run":
        return one_run(cfg, int(sys.argv[2]), Path(sys.argv[3]))
    if cfg.peer not in ("", "bullmq", "celery"):
        log(f"unknown PEER={cfg.peer} (bullmq|celery)")
        return 2
    if cfg.mode not in ("http", "grpc", "batch", "stream", "email", "steady", "fanout"):
        log(f"unknown MODE={cfg.mode} (http|grpc|batch|stream|email|steady|fanout)")
        return 2
    if cfg.mode == "fanout" and (cfg.peer or cfg.rev or len(cfg.senders_list) > 1):
        log("MODE=fanout measures the work tree alone (no PEER, REV or SENDERS list): the peers have no fan-out")
        return 2
    problem = check_switches(cfg.variant, cfg.base_variant)
    if problem is not None:
        log(f"VARIANT/BASE_VARIANT: {problem}")
        return 2
    if (cfg.variant or cfg.variant_env) and cfg.mode != "steady":
        log("VARIANT= and VARIANT_ENV= add sides to MODE=steady only")
        return 2
    if cfg.webhook_header and cfg.mode not in ("http", "steady"):
        log("WEBHOOK_HEADER=1 needs MODE=http or MODE=steady (the preloaded HTTP clients add the header)")
        return 2
    if cfg.mode == "email" and cfg.peer:
        log("MODE=email measures Herald alone (the peers deliver webhooks only)")
        return 2
    if not (cfg.peers / "tools" / "loadgen.js").exists():
        log(f"the peers' folder is not at {cfg.peers}; set PEERS=")
        return 2
    # The services read HERALD_* from the environment; a developer's shell settings must not leak in.
    for name in list(os.environ):
        if name.startswith("HERALD_"):
            del os.environ[name]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cfg.tmp.mkdir(parents=True, exist_ok=True)
    # One bench at a time: two would load the machine for each other, and they share the private
    # PostgreSQL cluster under BENCH_TMP (a second start would take it for a leftover and stop it).
    lock = (cfg.tmp / "bench.lock").open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log(f"another `make bench` is running (lock {cfg.tmp / 'bench.lock'}); try again when it has finished")
        return 2
    cfg.results.parent.mkdir(parents=True, exist_ok=True)
    machine = machine_description(cfg)
    print("== " + describe(machine), flush=True)
    if cfg.peer:
        ensure_peer_setup(cfg)
    # The open loop, rate by rate (harness/steady.py); MODE=fanout's too when given rates.
    if cfg.mode == "steady" or (cfg.mode == "fanout" and any(env(v, "") for v in ("RATES", "STEP", "MAX_RATE"))):
        return steady_main(cfg, machine, {"herald": herald_run, "base": base_run, "peer": peer_run})
    runs: dict[str, list[dict[str, Any]]] = {"herald": [], "base": [], "peer": []}
    # SENDERS=1,2: one Herald run per sender count in every round.
    sides = [("herald", dataclasses.replace(cfg, senders=n)) for n in cfg.senders_list]
    sides += [("base", cfg)] if cfg.rev else []
    sides += [("peer", cfg)] if cfg.peer else []
    run_of = {"herald": herald_run, "base": base_run, "peer": peer_run}
    for i in range(1, cfg.runs + 1):
        # Interleaved, so drifts in the machine's load spread over every side.
        for kind, side in sides:
            for attempt in range(1 + cfg.retry_contended):
                started = time.monotonic()
                try:
                    record = run_of[kind](side, i, machine)
                except Exception as error:  # a failed run is reported; the others still count
                    log(f"{kind} run {i} failed: {error!r}")
                    record = None
                log(f"{kind} run {i} took {time.monotonic() - started:.0f}s")
                if record is None:
                    break
                if kind != "peer":
                    record["role"] = "base" if kind == "base" else "work"
                with cfg.results.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                runs[kind].append(record)
                if not record.get("contended"):
                    break
                if attempt < cfg.retry_contended:
                    log(f"{kind} run {i} was contended (other load on the machine); trying again")
    if not runs["herald"]:
        log("no Herald run completed")
        return 1
    if len(cfg.senders_list) > 1:
        for n in cfg.senders_list:
            print(f"\n==== SENDERS={n}", flush=True)
            group = [r for r in runs["herald"] if r.get("webhook_senders", 1) == n]
            if group:
                report(dataclasses.replace(cfg, senders=n), machine, group, runs["peer"], runs["base"])
        report_senders(runs["herald"])
    else:
        report(cfg, machine, runs["herald"], runs["peer"], runs["base"])
    return 0
