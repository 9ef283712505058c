"""PROFILE=1 (`make bench-profile`): py-spy on the hot services during the measured window.

A profiled run is marked in its record and the report: py-spy takes CPU of its own, so its
figures are not a baseline. The profiles are kept beside the records, with their top frames.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from harness.config import BENCH, Config, env
from harness.waiting import stop_process

PROFILED_SERVICES = ("gateway", "router", "ledger", "webhook-sender")


def start_profilers(run_dir: Path, pids: dict[str, int]) -> dict[str, subprocess.Popen[bytes]]:
    """py-spy record on the hot services for the whole measured window (stopped with SIGINT).
    --nonblocking: the target is not paused per sample, so the profile disturbs the run less."""
    py_spy = Path(sys.executable).parent / "py-spy"
    if not py_spy.exists():
        raise RuntimeError("PROFILE=1 needs py-spy in the venv (see docs/performance.md)")
    procs = {}
    # PROFILE_NATIVE=1 adds C frames (uvloop, grpc core, asyncpg's protocol...); py-spy then has to pause
    # the target for each sample.
    native = ["--native"] if env("PROFILE_NATIVE", "0") not in ("0", "") else ["--nonblocking"]
    for name in PROFILED_SERVICES:
        out = run_dir / f"profile-{name}.txt"
        procs[name] = subprocess.Popen(
            [str(py_spy), "record", "--pid", str(pids[name]), "--rate", "100", *native,
             "--format", "raw", "--output", str(out)],
            stdout=subprocess.DEVNULL, stderr=(run_dir / f"profile-{name}.log").open("wb"),
        )  # fmt: skip
    return procs


def attach_profilers(
    cleanup: contextlib.ExitStack, run_dir: Path, pids: dict[str, int]
) -> dict[str, subprocess.Popen[bytes]]:
    """The profilers, a stack dump 3 s into the load, and their stops if the run ends early."""
    profilers = start_profilers(run_dir, pids)
    dumper = threading.Timer(3.0, dump_stacks, (run_dir, pids))
    dumper.start()
    cleanup.callback(dumper.cancel)
    for proc in profilers.values():
        cleanup.callback(stop_process, proc, signal.SIGINT, 60)
    return profilers


def dump_stacks(run_dir: Path, pids: dict[str, int]) -> None:
    """One `py-spy dump` of each hot service a few seconds into the load: what every thread is doing."""
    py_spy = Path(sys.executable).parent / "py-spy"
    for name in PROFILED_SERVICES:
        with (run_dir / f"dump-{name}.txt").open("wb") as out:
            subprocess.run(
                [str(py_spy), "dump", "--pid", str(pids[name]), "--nonblocking"],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
                timeout=30,
            )


def save_profiles(cfg: Config, run_dir: Path, procs: dict[str, subprocess.Popen[bytes]]) -> Path:
    """Copy the profiles and dumps beside the records (the run directory is temporary) and print
    their top frames (bench/profile_top.py)."""
    target = cfg.results.parent / "profiles" / run_dir.name
    target.mkdir(parents=True, exist_ok=True)
    for name in procs:
        for src in (run_dir / f"profile-{name}.txt", run_dir / f"dump-{name}.txt"):
            if src.exists():
                shutil.copy(src, target / src.name)
    subprocess.run([sys.executable, str(BENCH / "profile_top.py"), str(target)], check=False)
    return target
