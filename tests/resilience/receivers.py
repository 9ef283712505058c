"""Receivers that fail some of the time, and a SendGrid stand-in that does too.

A webhook's payload says how its receiver treats it (`mode`), so the outcome of every
job is decided by the test, reproducibly, whatever order deliveries arrive in:

- ok: 200 at once;   slow: 200 after `SLOW_S` (well inside the webhook timeout);
- flaky: 503 on the first request, then 200;   flaky2: 503 twice, then 200;
- fail: 500 every time (the job fails after its last attempt);   reject: 400 (fails at once).

`stall(seconds)` makes every request arriving in the next `seconds` wait `hold_s`
(beyond the webhook timeout) before it is answered: a receiver that hangs.
Every request is recorded with what it was answered and when (wall clock, comparable
with the database's timestamps on the same machine).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.standins.sendgrid import SendGridStandIn
from tests.standins.server import Reply, Request

SLOW_S = 1.0
MODES = ("ok", "slow", "flaky", "flaky2", "fail", "reject")


@dataclass
class Hit:
    path: str
    webhook_id: str
    payload: Any
    arrived_at: float  # time.time()
    status: int = 0
    answered_at: float = 0.0
    truncated: bool = False  # the body ended before its Content-Length


class FlakyReceiver:
    def __init__(self, name: str = "") -> None:
        self.name = name
        self.hits: list[Hit] = []
        self.stall_until = 0.0
        self.hold_s = 0.0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw)
                except ValueError:
                    payload = None
                hit = Hit(self.path, self.headers.get("webhook-id", ""), payload, time.time())
                if len(raw) < length:
                    # The sender went away mid-body (it was killed): nothing to answer, nobody to answer to.
                    hit.truncated = True
                    with receiver._lock:
                        receiver.hits.append(hit)
                    self.close_connection = True
                    return
                with receiver._lock:
                    seen = sum(1 for h in receiver.hits if h.webhook_id == hit.webhook_id)
                    receiver.hits.append(hit)
                    stalled = time.monotonic() < receiver.stall_until
                mode = payload.get("mode", "ok") if isinstance(payload, dict) else "ok"
                status = {
                    "ok": 200,
                    "slow": 200,
                    "flaky": 503 if seen < 1 else 200,
                    "flaky2": 503 if seen < 2 else 200,
                    "fail": 500,
                    "reject": 400,
                }.get(mode, 200)
                if stalled:
                    time.sleep(receiver.hold_s)
                elif mode == "slow":
                    time.sleep(SLOW_S)
                try:
                    self.send_response(status)
                    self.send_header("content-length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    status = -status  # the caller had gone (timed out or was killed)
                hit.status, hit.answered_at = status, time.time()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stall(self, for_s: float, hold_s: float) -> None:
        """Requests arriving in the next `for_s` seconds are held `hold_s` before any answer."""
        with self._lock:
            self.hold_s = hold_s
            self.stall_until = time.monotonic() + for_s

    def snapshot(self) -> list[Hit]:
        with self._lock:
            return list(self.hits)

    def duplicates(self) -> int:
        """Requests beyond the first 2xx per webhook id (deliveries of something already delivered)."""
        counts = Counter(h.webhook_id for h in self.snapshot() if 200 <= h.status < 300)
        return sum(n - 1 for n in counts.values() if n > 1)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FlakySendGrid(SendGridStandIn):
    """SendGrid that answers 503 to a share of sends (decided by a seeded random, so a run is repeatable)."""

    def __init__(self, failure_rate: float = 0.05, seed: int = 0) -> None:
        self.failure_rate = failure_rate
        self._random = random.Random(seed)
        self._random_lock = threading.Lock()
        super().__init__()

    def mail_send(self, request: Request) -> Reply:
        with self._random_lock:
            unlucky = self._random.random() < self.failure_rate
        if unlucky:
            return Reply(503, {"errors": [{"field": None, "message": "service unavailable"}]})
        return super().mail_send(request)
