"""The load driver: which client sends the N requests for each MODE, and what it leaves behind.

HTTP uses the peers' own loadgen.js (preloaded to reshape each request for Herald's API), so
the client side is the peers' method; the gRPC, batch and stream modes have Python clients in
bench/. Every client writes one JSON summary and, in the measured window, each job's accept time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.config import BENCH, ROOT, Config
from harness.fanout import EVENT_TYPE
from harness.tables import percentile, rounded

# WEBHOOK_HEADER=1: the value of the custom `Authorization: Bearer ...` header every webhook carries.
BENCH_HEADER = "bench-receiver-credential-0123456789abcdef"


def loadgen_command(
    cfg: Config, endpoints: Mapping[str, Any], sink_port: int, keys_file: Path, n: int, run_id: str
) -> list[str]:
    """The client's command line for `n` requests of this MODE, delivering to the sink."""
    hook = f"http://127.0.0.1:{sink_port}/hook"
    if cfg.mode in ("batch", "stream"):
        return [
            sys.executable, str(BENCH / "batch_loadgen.py"), "--url", endpoints["gateway_http"],
            "--n", str(n), "--c", str(cfg.conns), "--batch", str(cfg.batch), "--hook", hook, "--keys", str(keys_file),
            "--run-id", run_id,
        ] + (["--grpc", endpoints["gateway_grpc"]] if cfg.mode == "stream" else [])  # fmt: skip
    if cfg.mode == "grpc":
        return [
            sys.executable, str(BENCH / "grpc_loadgen.py"), "--target", endpoints["gateway_grpc"],
            "--n", str(n), "--c", str(cfg.conns), "--hook", hook, "--keys", str(keys_file), "--run-id", run_id,
        ]  # fmt: skip
    # MODE=steady: the open loop (bench/openloop.js, loadgen.js's arguments) at RATE requests/s;
    # MODE=fanout: events (the preload reshapes each request) in either loop.
    client = BENCH / "openloop.js" if cfg.open_loop else cfg.peers / "tools" / "loadgen.js"
    route = "/v1/events" if cfg.mode == "fanout" else "/v1/webhooks"
    return [
        "node", "--require", str(BENCH / "shims" / "herald_loadgen.js"), str(client),
        "--url", f"{endpoints['gateway_http']}{route}", "--n", str(n), "--c", str(cfg.conns),
        "--hook", hook, "--run-id", run_id,
    ]  # fmt: skip


def run_load(cmd: list[str], out: Path, keys_file: Path, accepts: Path | None, cfg: Config) -> dict[str, Any]:
    """Run the client to its end (bounded by E2E_TIMEOUT), its summary into `out`; with `accepts`,
    each job's accept time goes there (the preload reads the path from the environment, the
    Python clients from --accepts)."""
    child_env = {**os.environ, "HERALD_BENCH_KEYS": str(keys_file)}
    if cfg.webhook_header:
        # Not a secret: a credential-shaped value for the preload's custom header (WEBHOOK_HEADER).
        child_env["HERALD_BENCH_HEADER"] = BENCH_HEADER
    if cfg.open_loop:
        child_env["LOADGEN_RATE"] = str(cfg.rate)
    if cfg.mode == "fanout":
        # The preload sends events, and names each accepted event's jobs (the open loop starts each
        # request when it is due, so the preload's start time is the due time).
        child_env["HERALD_BENCH_EVENT_TYPE"] = EVENT_TYPE
        if accepts is not None:
            child_env["HERALD_BENCH_ACCEPTS"] = str(accepts)
    elif cfg.mode == "steady":
        # The open loop writes each job's accept and due times itself (its latencies count from due).
        if accepts is not None:
            child_env["LOADGEN_ACCEPTS"] = str(accepts)
    elif accepts is not None:
        child_env["HERALD_BENCH_ACCEPTS"] = str(accepts)
        if cfg.mode in ("grpc", "batch", "stream"):
            cmd = [*cmd, "--accepts", str(accepts)]
    with out.open("w") as f:
        subprocess.run(
            cmd, stdout=f, stderr=subprocess.PIPE, env=child_env, check=True, cwd=ROOT, timeout=cfg.e2e_timeout + 120
        )
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def read_accept_spans(path: Path) -> dict[str, tuple[float, float | None]]:
    """The client's `job_id ms [start_ms]` lines, per job: when its 202 arrived and, from clients
    that say so (the HTTP load generator's preload), when its request was started (missing file: none)."""
    spans: dict[str, tuple[float, float | None]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 2:
                spans[fields[0]] = (float(fields[1]), float(fields[2]) if len(fields) >= 3 else None)
    return spans


def first_wave_of_slowest(spans: dict[str, tuple[float, float | None]], conns: int) -> dict[str, float | int | None]:
    """Where the slowest 1% of accepted requests were: how many of them were in the first wave (the
    first `conns` requests, which a closed-loop client sends at once on new connections), and the
    client's p99 over the requests after it. Empty when the client did not say when it started each
    request. A diagnostic beside the accept p99, which stays over every request."""
    started = sorted((start, end - start) for end, start in spans.values() if start is not None)
    if len(started) <= conns:
        return {}
    slowest = max(len(started) // 100, 1)
    ranked = sorted(range(len(started)), key=lambda i: started[i][1], reverse=True)[:slowest]
    after_wave = sorted(latency for _, latency in started[conns:])
    return {
        "slowest_1pct": slowest,
        "slowest_1pct_in_first_wave": sum(1 for i in ranked if i < conns),
        "accept_p99_after_first_wave_ms": rounded(percentile(after_wave, 99), 2),
    }
