"""The faults of the fault test (test_zz_faults_under_load.py): services SIGKILLed and restarted by the
supervisor, the nats-server and PostgreSQL restarted, a receiver stalled past the webhook timeout;
each recorded with its window, then what clients saw in it, and the raw records kept for a look
after the run.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from tests.resilience.audit import GRACE_S
from tests.resilience.conftest import Resilient
from tests.resilience.load import LoadGenerator
from tests.resilience.profile import PROFILE
from tests.resilience.receivers import FlakyReceiver
from tests.resilience.report import Fault

KILL_ORDER = ("gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier")
WEBHOOK_TIMEOUT_S = 3.0  # tests/conftest.py TEST_ENV


class Faults:
    def __init__(self, resilient: Resilient, load_started: float) -> None:
        self.resilient = resilient
        self.t0 = load_started
        self.windows: list[Fault] = []

    def at(self) -> float:
        return time.monotonic() - self.t0

    def record(self, name: str, started: float, note: str = "") -> None:
        self.windows.append(Fault(name, started, self.at(), note))

    def kill(self, names: tuple[str, ...]) -> None:
        started = self.at()
        for name in names:
            self.resilient.stack.kill(name, signal.SIGKILL)
        for name in names:
            self.resilient.stack.wait_healthy(name, timeout=90)
        together = " at once" if len(names) > 1 else ""
        self.record(f"SIGKILL {', '.join(names)}", started, f" (restarted by the supervisor{together})")

    def restart_nats(self) -> None:
        started = self.at()
        self.resilient.infra.restart_nats(down_for_s=1.0)
        self.record("restart nats-server", started, " (same port, same store)")

    def restart_postgres(self) -> None:
        started = self.at()
        failures = len(self.resilient.infra.postgres.stop_failures)
        self.resilient.infra.restart_postgres(down_for_s=1.0)
        how = " (fast shutdown, same port and data)"
        for failure in self.resilient.infra.postgres.stop_failures[failures:]:
            how += f" [fast shutdown failed, signals used: {failure}]"
        self.record("restart PostgreSQL", started, how)

    def stall(self, receiver: FlakyReceiver, for_s: float) -> threading.Thread:
        hold = WEBHOOK_TIMEOUT_S + 1.0
        started = self.at()
        receiver.stall(for_s, hold)

        def end() -> None:
            time.sleep(for_s + hold)
            self.record(
                f"stall receiver {receiver.name}",
                started,
                f" (held {hold:.0f}s > the {WEBHOOK_TIMEOUT_S:.0f}s timeout)",
            )

        thread = threading.Thread(target=end, daemon=True)
        thread.start()
        return thread


def kill_groups() -> list[tuple[str, ...]]:
    """Full: one service at a time. Reduced: several at once, each group mixing the intake path with a
    consumer, so the run stays short and every service is still killed mid-load."""
    if PROFILE.kills_at_once == 1:
        return [(name,) for name in KILL_ORDER]
    return [("gateway", "webhook-sender", "verifier"), ("router", "ledger", "email-sender")]


def keep_records(resilient: Resilient, generator: LoadGenerator, faults: Faults) -> Path:
    """Every response the load generator got and every fault window, for a look after the run."""
    path = resilient.data_dir / "faults-under-load.json"
    t0 = generator.started_at
    path.write_text(
        json.dumps(
            {
                "faults": [asdict(w) for w in faults.windows],
                "exchanges": [
                    {**asdict(e), "started": round(e.started - t0, 3), "ended": round(e.ended - t0, 3)}
                    for e in generator.exchanges
                ],
            },
            indent=1,
        )
    )
    return path


def impact(window: Fault, generator: LoadGenerator) -> Fault:
    """The window with what the load generator saw during it (and its grace period)."""
    seen: Counter[str] = Counter()
    if window.name.startswith("stall"):
        return window  # the receiver side: clients of the gateway do not see it
    for e in generator.exchanges:
        moment = e.ended - generator.started_at
        if window.started - 0.5 <= moment <= window.ended + GRACE_S and (e.status is None or e.status >= 500):
            seen["refused or cut connection" if e.status is None else str(e.status)] += 1
    if seen:
        window.note += f"; clients saw (until {GRACE_S:.0f}s after) " + ", ".join(
            f"{k} x{v}" for k, v in sorted(seen.items())
        )
    return window
