"""A webhook receiver that accepts every connection, reads the request and never answers: the
worst receiver a tenant can aim Herald at. It keeps each connection open until the sender
gives up on it (closes it, at its timeout) or the receiver is closed, and counts both."""

from __future__ import annotations

import socket
import threading
import time


class SilentReceiver:
    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self._lock = threading.Condition()
        # webhook-id of each request read, in order of arrival.
        self.requests: list[str] = []
        self.open = 0  # connections held open now
        self.closed_by_sender = 0  # connections the sender closed (it gave up on the call)
        self._sockets: list[socket.socket] = []
        self._running = True
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}/hook"

    def _accept(self) -> None:
        while self._running:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._sockets.append(connection)
                self.open += 1
                self._lock.notify_all()
            threading.Thread(target=self._hold, args=(connection,), daemon=True).start()

    def _hold(self, connection: socket.socket) -> None:
        """Reads what comes (one request's headers are enough to know its job) and answers
        nothing; returns when the sender closes the connection."""
        seen = b""
        try:
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                seen += chunk
                while b"\r\n\r\n" in seen:
                    head, _, seen = seen.partition(b"\r\n\r\n")
                    job_id = next(
                        (
                            line.split(b":", 1)[1].strip().decode()
                            for line in head.split(b"\r\n")
                            if line.lower().startswith(b"webhook-id:")
                        ),
                        "",
                    )
                    with self._lock:
                        self.requests.append(job_id)
                        self._lock.notify_all()
                    seen = b""  # the body, if any, is of no interest
        except OSError:
            pass
        with self._lock:
            self.open -= 1
            if self._running:
                self.closed_by_sender += 1
            self._lock.notify_all()

    def wait_for_requests(self, count: int, timeout: float) -> int:
        """Waits until `count` requests were read (or `timeout`); returns how many were."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.requests) < count and time.monotonic() < deadline:
                self._lock.wait(timeout=max(deadline - time.monotonic(), 0.01))
            return len(self.requests)

    def close(self) -> None:
        with self._lock:
            self._running = False
            held = list(self._sockets)
        self._server.close()
        for connection in held:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()
