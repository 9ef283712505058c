"""The bench's settings, read once from the environment (bench/bench.mk passes make's variables).

Standard library only: bench/run.py imports this (through `rev_tree`) before Herald is importable
from the tree to be measured.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TMP = "/tmp/herald-bench"  # noqa: S108  (the documented BENCH_TMP default)
ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# The entry the REV side's child runs again (so both sides are driven by the same code).
ENTRY = BENCH / "run.py"


def env(name: str, default: str) -> str:
    """An environment setting; an empty value (make passes unset variables as none) means the default."""
    value = os.environ.get(name, "")
    return value if value != "" else default


def log(message: str) -> None:
    """Progress on stderr, so stdout carries only the summary lines and the report."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Config:
    """One invocation's settings; the REV side's child reads the same environment, so both sides agree."""

    n: int
    runs: int
    peer: str
    mode: str
    conns: int
    batch: int
    wc: int
    warmup: int
    infra: str
    pg: str
    profile: bool
    # HOLD_SENDERS=1: the senders stopped (SIGSTOP) from the load's first request to its last answer and
    # resumed after it, so the load shares the machine with no deliveries: what the deliveries running
    # beside a burst cost its accept rate. A diagnostic, not a baseline.
    hold_senders: bool
    quiet_busy_pct: int
    quiet_max_wait: int
    e2e_timeout: int
    sample_interval: str
    # A run during which other processes used > 0.3 core (summarize.py's `contended`) is run again,
    # at most this many times; all runs are kept, and the medians leave contended ones out (as medians.py).
    retry_contended: int
    # WEBHOOK_HEADER=1 (MODE=http, steady): every Herald webhook carries a custom header for its receiver,
    # which Herald seals at rest and opens for the call (what that costs); the peers' requests carry none.
    webhook_header: bool
    # REV=<commit>: a base commit measured beside the work tree, interleaved round by round.
    rev: str
    peers: Path
    tmp: Path
    results: Path
    invocation: str
    # CLUSTER=3: a JetStream cluster of that many private nodes, streams at R3 (docs/performance.md, "A three-node cluster").
    cluster: int = 1
    # SENDERS=2 (or 1,2: each round runs one of each): webhook-sender processes sharing the consumers.
    senders_list: tuple[int, ...] = (1,)
    senders: int = 1
    # MODE=steady (harness/steady.py): the open loop's rate of this run (requests/s), the services'
    # extra settings (SERVICE_ENV, every Herald side), more work-tree sides (VARIANT: their
    # infrastructure switches, harness/switches.py; VARIANT_ENV: their services' extra settings),
    # and whether WORKER_CONCURRENCY was given (otherwise Herald runs its default).
    rate: int = 0
    service_env: str = ""
    variant_env: str = ""
    # In one run: that side's switches (`plain-bus+sync-default`); in the invocation: VARIANT's sides.
    variant: str = ""
    # The REV side's switches (BASE_VARIANT), e.g. sync-always for a tree from before sync_interval.
    base_variant: str = ""
    wc_given: bool = False
    drain_s: int = 30
    # MODE=fanout (harness/fanout.py): the subscriptions (and targets) each event is fanned out to.
    fanout: int = 10

    @property
    def open_loop(self) -> bool:
        """Whether the load is the open loop at `rate` (MODE=steady; MODE=fanout with RATES= or STEP=)."""
        return self.mode == "steady" or (self.mode == "fanout" and self.rate > 0)

    @classmethod
    def from_env(cls) -> Config:
        """The settings with their documented defaults (bench/run.py's docstring)."""
        return cls(
            n=int(env("N", "2000")),
            runs=int(env("RUNS", "1")),
            peer=env("PEER", ""),
            mode=env("MODE", "http"),
            conns=int(env("C", "4" if env("MODE", "http") in ("batch", "stream") else "64")),
            batch=int(env("BATCH", "1000")),
            wc=int(env("WORKER_CONCURRENCY", "5")),
            warmup=int(env("WARMUP", "200")),
            infra=env("INFRA", "private"),
            pg=env("PG", "system"),
            profile=env("PROFILE", "0") not in ("0", "false", "no"),
            hold_senders=env("HOLD_SENDERS", "0") not in ("0", "false", "no"),
            quiet_busy_pct=int(env("QUIET_BUSY_PCT", "25")),
            quiet_max_wait=int(env("QUIET_MAX_WAIT", "60")),
            e2e_timeout=int(env("E2E_TIMEOUT", "240")),
            sample_interval=env("SAMPLE_INTERVAL", "0.5"),
            retry_contended=int(env("RETRY_CONTENDED", "0")),
            webhook_header=env("WEBHOOK_HEADER", "0") not in ("0", "false", "no"),
            rev=env("REV", ""),
            peers=Path(env("PEERS", str(ROOT.parent / "shared" / "bench" / "peers"))).resolve(),
            tmp=Path(env("BENCH_TMP", DEFAULT_TMP)),
            results=Path(env("RESULTS", str(BENCH / "results" / "runs.jsonl"))).resolve(),
            invocation=env("BENCH_INVOCATION", time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"),
            cluster=int(env("CLUSTER", "1")),
            senders_list=tuple(int(n) for n in env("SENDERS", "1").split(",")),
            senders=int(env("SENDERS", "1").split(",")[0]),
            rate=int(env("RATE", "0")),
            service_env=env("SERVICE_ENV", ""),
            variant_env=env("VARIANT_ENV", ""),
            variant=env("VARIANT", ""),
            base_variant=env("BASE_VARIANT", ""),
            wc_given=env("WORKER_CONCURRENCY", "") != "",
            drain_s=int(env("DRAIN", "30")),
            fanout=int(env("FANOUT", "10")),
        )

    def service_settings(self) -> dict[str, str]:
        """SERVICE_ENV's `NAME=value` words (HERALD_* settings for every Herald side's services)."""
        pairs = (word.split("=", 1) for word in self.service_env.split())
        return {name: value for name, value in pairs}
