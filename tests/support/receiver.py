"""A real HTTP receiver for webhooks: records every request, and can be told to
answer slowly or with an error for chosen jobs."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    # Every header line as sent (repeats kept), and the wall-clock time of arrival.
    raw_headers: list[tuple[str, str]] = field(default_factory=list)
    wall_at: float = 0.0
    # The status answered (0 until the answer is written).
    status: int = 0

    @property
    def answered_ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass
class Behaviour:
    status: int = 200
    # Seconds to wait before answering, per webhook-id; applied to the first request only.
    first_delay: dict[str, float] = field(default_factory=dict)
    # (path suffix, seconds): every request whose path ends so waits that long.
    delay_path: tuple[str, float] | None = None
    # What every answer carries besides the status.
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.behaviour = Behaviour()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                job_id = headers.get("webhook-id", "")
                received = Received(self.path, headers, body, time.monotonic(), list(self.headers.items()), time.time())
                with receiver._arrived:
                    first = all(r.headers.get("webhook-id") != job_id for r in receiver.requests)
                    receiver.requests.append(received)
                    receiver._arrived.notify_all()
                delay = receiver.behaviour.first_delay.get(job_id, 0.0) if first else 0.0
                slow = receiver.behaviour.delay_path
                if slow is not None and self.path.endswith(slow[0]):
                    delay += slow[1]
                if delay:
                    time.sleep(delay)
                status = receiver.behaviour.status
                answer = receiver.behaviour.body
                received.status = status
                try:
                    self.send_response(status)
                    for name, value in receiver.behaviour.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass  # the sender went away mid-answer (the SIGKILL test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def for_job(self, job_id: str) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if r.headers.get("webhook-id") == job_id]

    def wait_for(self, job_id: str, count: int = 1, timeout: float = 30.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                got = [r for r in self.requests if r.headers.get("webhook-id") == job_id]
                if len(got) >= count or time.monotonic() >= deadline:
                    return got
                self._arrived.wait(timeout=max(deadline - time.monotonic(), 0.01))

    def duplicates(self) -> int:
        with self._lock:
            counts = Counter(r.headers.get("webhook-id") for r in self.requests)
        return sum(n - 1 for n in counts.values() if n > 1)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
