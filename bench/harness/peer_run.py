"""One run of a peer (PEER=bullmq|celery): the peer's own run.sh, with this invocation's settings.

Nothing of the peers' code is copied: run.sh runs as it would alone, with the same N, C, worker
concurrency, warm-up and quiet rules, and its record gets the same per-1,000 figures as Herald's.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from harness.config import BENCH, Config, log
from harness.cpu import per_1000_delivered
from harness.load import read_accept_spans
from harness.steady_figures import open_loop_fields, read_arrivals


def ensure_peer_setup(cfg: Config) -> None:
    """The peers' setup.sh once, when the chosen peer's dependencies are not installed."""
    needed = {
        "bullmq": cfg.peers / "bullmq" / "node_modules" / "bullmq",
        "celery": cfg.peers / "celery" / ".venv" / "bin" / "celery",
    }[cfg.peer]
    if needed.exists():
        return
    log(f"{needed} missing: running the peers' setup.sh once (apt redis/postgresql if missing, npm ci, celery venv)")
    subprocess.run([str(cfg.peers / "setup.sh")], check=True)


def peer_run(cfg: Config, index: int, machine: dict[str, Any]) -> dict[str, Any] | None:
    """run.sh's record of one run, or None (logged) when it failed."""
    results = cfg.tmp / f"peer-{cfg.invocation}-{index}.jsonl"
    child_env = {
        **os.environ,
        "RESULTS": str(results),
        "C": str(cfg.conns),
        "WORKER_CONCURRENCY": str(cfg.wc),
        "WARMUP": str(cfg.warmup),
        "QUIET_BUSY_PCT": str(cfg.quiet_busy_pct),
        "QUIET_MAX_WAIT": str(cfg.quiet_max_wait),
        "E2E_TIMEOUT": str(cfg.e2e_timeout),
        "SAMPLE_INTERVAL": cfg.sample_interval,
    }
    steady = cfg.mode == "steady"
    accepts = cfg.tmp / f"peer-{cfg.invocation}-{index}-accepts.txt"
    arrivals = cfg.tmp / f"peer-{cfg.invocation}-{index}-arrivals.json"
    if steady:
        # The open loop in run.sh's LOADGEN_JS (its warm-up too), each job's accept and due times from
        # it, and the sink's first arrival per job id (ARRIVALS_OUT); DRAIN s for the deliveries.
        child_env.update(
            LOADGEN_JS=str(BENCH / "openloop.js"),
            LOADGEN_RATE=str(cfg.rate),
            LOADGEN_ACCEPTS=str(accepts),
            ARRIVALS_OUT=str(arrivals),
            E2E_TIMEOUT=str(cfg.drain_s),
        )
    log(f"peer {cfg.peer}: {cfg.peers / 'run.sh'} {cfg.peer} {cfg.n}" + (f" at {cfg.rate}/s" if steady else ""))
    done = subprocess.run(
        [str(cfg.peers / "run.sh"), cfg.peer, str(cfg.n)], env=child_env, stdout=subprocess.PIPE, text=True,
        timeout=cfg.e2e_timeout + cfg.quiet_max_wait + 300,
    )  # fmt: skip
    if done.returncode != 0 or not results.exists():
        log(f"peer run failed (exit {done.returncode})")
        return None
    record: dict[str, Any] = json.loads(results.read_text().splitlines()[-1])
    results.unlink()
    delivered = max(int(record["sink_unique"]), 1)
    record.update(
        # The peer's pools keep their PostgreSQL connections for the whole run (its process count stays
        # flat), so the sampler misses no backend; run.sh gives no other figure.
        cpu_s_per_1000_delivered_total_incl_exited=round(record["cpu_s_peer_total"] * 1000 / delivered, 3),
        system=cfg.peer,
        cpu_s_per_1000_delivered=per_1000_delivered(record["cpu_s"], delivered),
        cpu_s_per_1000_delivered_total=round(record["cpu_s_peer_total"] * 1000 / delivered, 3),
        invocation=cfg.invocation,
        machine=machine,
    )
    if steady:
        record.update(open_loop_fields(cfg, read_accept_spans(accepts), read_arrivals(arrivals), record))
        accepts.unlink(missing_ok=True)
        arrivals.unlink(missing_ok=True)
    print(done.stdout.strip().splitlines()[-1], flush=True)
    return record
