"""The REV side (REV=<commit>): one Herald run of that commit, beside the work tree's, each round.

The parent starts bench/run.py again as a child with BENCH_BASE_REV set; the child (see
`rev_tree`) re-executes itself onto REV's exported tree and makes one Herald run, driven by
this same harness, so both sides are loaded and sampled alike. The record comes back in a file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.config import ENTRY, Config, env, log
from harness.herald_run import herald_run


def base_run(cfg: Config, index: int, machine: dict[str, Any]) -> dict[str, Any] | None:
    """REV's run: bench/run.py again in a child process that imports Herald from REV's tree (see
    rev_tree.use_revision) and makes one Herald run, driven exactly as the work tree's."""
    out = cfg.tmp / f"base-{cfg.invocation}-{index}.json"
    out.unlink(missing_ok=True)
    child_env = {
        **os.environ,
        "BENCH_BASE_REV": cfg.rev,
        "BENCH_MACHINE": json.dumps(machine),
        "BENCH_INVOCATION": cfg.invocation,
        "BENCH_TENANT_RATE": "unlimited" if env("BASE_RATE", "same") == "unlimited" else "",
        # MODE=steady: this run's size and open-loop rate (the child reads its settings from here).
        "N": str(cfg.n),
        "RATE": str(cfg.rate),
        "VARIANT_ENV": "",
        # BASE_ENV: settings for the base side's services only (an older tree's defaults turned off).
        "SERVICE_ENV": f"{cfg.service_env} {env('BASE_ENV', '')}".strip(),
        # The base side's infrastructure switches (harness/switches.py): BASE_VARIANT, not VARIANT's.
        "VARIANT": cfg.base_variant,
    }
    child_env.pop("BENCH_REV_SHA", None)
    log(f"base REV={cfg.rev}: one Herald run from that commit's tree")
    done = subprocess.run([sys.executable, str(ENTRY), "--one-run", str(index), str(out)], env=child_env, check=False)
    if done.returncode != 0 or not out.exists():
        log(f"base run failed (exit {done.returncode})")
        return None
    record: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return record


def one_run(cfg: Config, index: int, out: Path) -> int:
    """`bench/run.py --one-run INDEX OUT`: the base side of REV=, in the child process."""
    machine = json.loads(os.environ["BENCH_MACHINE"])
    record = herald_run(cfg, index, machine)
    if record is None:
        return 1
    out.write_text(json.dumps(record))
    return 0
