"""Every call is an attempt: a request the sender wrote to the receiver is recorded, whatever
happened next. The receiver here answers 503 to the first request of each connection and closes
the connection without a word on the second, so half the calls end with no answer on a
kept-alive connection; the receiver's count of requests equals the attempts recorded."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter

import httpx

from tests.conftest import report
from tests.support.api import TenantKey, wait_for_status

UNAVAILABLE = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\n\r\nbusy"


class SilentCloser:
    """A raw HTTP/1.1 receiver: per connection, 503 to the first request, then silence and a close."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            buffered = b""
            for turn in range(2):
                while b"\r\n\r\n" not in buffered:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    buffered += chunk
                head, buffered = buffered.split(b"\r\n\r\n", 1)
                fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
                named = {k.strip().lower(): v.strip() for k, v in fields.items()}
                length = int(named.get(b"content-length", b"0"))
                while len(buffered) < length:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    buffered += chunk
                buffered = buffered[length:]
                with self._lock:
                    self.requests[named.get(b"webhook-id", b"").decode()] += 1
                if turn == 0:
                    connection.sendall(UNAVAILABLE)
            # The second request was read in full: close without answering.

    def close(self) -> None:
        self._listener.close()


def test_a_receiver_that_closes_without_answering_gets_no_request_unrecorded(gateway: str, tenant: TenantKey) -> None:
    receiver = SilentCloser()
    # The first failures open the target's breaker, which then lets one call through a second:
    # a retry window of 21 s gives most jobs their second attempt, and some a third.
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": [1, 20]}, headers=tenant.headers)
    assert schedule.status_code == 200, schedule.text
    try:
        ids = []
        for n in range(10):
            answer = httpx.post(
                f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=tenant.headers
            )
            assert answer.status_code == 202, answer.text
            ids.append(answer.json()["id"])
        jobs = [wait_for_status(gateway, tenant, job_id, timeout=60) for job_id in ids]
        assert [job["status"] for job in jobs] == ["failed"] * len(ids)
        time.sleep(0.5)  # a request still on its way would show here
        # A skipped attempt is no call: the breaker held the delivery past its retry window.
        recorded = {job["id"]: sum(a["outcome"] != "skipped" for a in job["attempts"]) for job in jobs}
        received = {job_id: receiver.requests[job_id] for job_id in ids}
        assert received == recorded, "every request the receiver read is a recorded attempt"
        closed = sum(
            1
            for job in jobs
            for a in job["attempts"]
            if a.get("status_code") in (None, 0) and a["outcome"] != "skipped"
        )
        report(
            f"receiver closing without an answer: {sum(received.values())} requests received, "
            f"{sum(recorded.values())} attempts recorded ({closed} of them without an answer)"
        )
    finally:
        receiver.close()
