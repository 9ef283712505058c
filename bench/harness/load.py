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
    return [
        "node", "--require", str(BENCH / "shims" / "herald_loadgen.js"), str(cfg.peers / "tools" / "loadgen.js"),
        "--url", f"{endpoints['gateway_http']}/v1/webhooks", "--n", str(n), "--c", str(cfg.conns),
        "--hook", hook, "--run-id", run_id,
    ]  # fmt: skip


def run_load(cmd: list[str], out: Path, keys_file: Path, accepts: Path | None, cfg: Config) -> dict[str, Any]:
    """Run the client to its end (bounded by E2E_TIMEOUT), its summary into `out`; with `accepts`,
    each job's accept time goes there (the preload reads the path from the environment, the
    Python clients from --accepts)."""
    child_env = {**os.environ, "HERALD_BENCH_KEYS": str(keys_file)}
    if accepts is not None:
        child_env["HERALD_BENCH_ACCEPTS"] = str(accepts)
        if cfg.mode in ("grpc", "batch", "stream"):
            cmd = [*cmd, "--accepts", str(accepts)]
    with out.open("w") as f:
        subprocess.run(
            cmd, stdout=f, stderr=subprocess.PIPE, env=child_env, check=True, cwd=ROOT, timeout=cfg.e2e_timeout + 120
        )
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def read_accepts(path: Path) -> dict[str, float]:
    """The client's `job_id ms` lines: when each job's 202 arrived (missing file: none)."""
    accepts = {}
    if path.exists():
        for line in path.read_text().splitlines():
            job_id, _, ms = line.partition(" ")
            if ms:
                accepts[job_id] = float(ms)
    return accepts
