"""What the embedded servers' processes share: how long to wait for them, and how to watch them go."""

from __future__ import annotations

import time
from pathlib import Path

import psutil  # type: ignore[import-untyped]

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            # A zombie has exited; it only waits for a parent that may never reap it.
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def tail(path: Path, offset: int = 0, limit: int = 4000) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(offset, path.stat().st_size - limit))
            return f.read().decode(errors="replace")
    except OSError:
        return ""
