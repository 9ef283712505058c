"""Waiting, bounded: for a condition to hold, and for a process the bench started to stop.

Every step of a run has a time bound, so a stuck service ends the run with a message instead of
hanging the invocation; what times out is logged and the run goes on to report what it has.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from harness.config import log


def wait_until(what: str, timeout: float, check: Callable[[], Any], interval: float = 0.1) -> bool:
    """Poll `check` until it is true or `timeout` s have passed; False (and a log line) on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    log(f"timed out waiting for {what}")
    return False


def succeeds(fn: Callable[[], Any]) -> bool:
    """Whether `fn` returns without raising (a server that does not answer yet is not an error)."""
    try:
        fn()
        return True
    except Exception:
        return False


def stop_process(proc: subprocess.Popen[Any] | None, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
    """TERM (or `sig`), wait, then KILL; only ever called on processes this harness started."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
