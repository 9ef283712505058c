"""Hostile input (tests/resilience/README.md): malformed, oversized and slow requests on the
gateway's HTTP port. The rest of hostile input is in test_hostile_fuzz.py (fuzzing from
/openapi.json), test_hostile_input_grpc.py (garbage on every service's gRPC port) and
test_hostile_input_strings.py (strings nothing downstream can take).

Each malformed request runs while another tenant keeps sending webhooks: that tenant's
requests must all succeed, during the attack as before it (the reduced run asserts no
timing; latencies are reported). What the gateway does today that the issue says it
must not is marked as an expected failure, strict, with the reason: the marker has to go
the day the gateway is fixed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import pytest

from tests.resilience.conftest import Resilient, assert_still_healthy, case_id
from tests.resilience.profile import PROFILE
from tests.resilience.receivers import FlakyReceiver
from tests.resilience.report import REPORT
from tests.support.api import TenantKey

MAX_REQUEST_BYTES = 8 * 1024 * 1024
SECTION = "hostile input: malformed, oversized and slow requests"


@pytest.fixture(scope="module")
def bystander_tenant(resilient: Resilient) -> TenantKey:
    return resilient.tenant("bystander")


@pytest.fixture(scope="module")
def bystander_receiver() -> Iterator[FlakyReceiver]:
    receiver = FlakyReceiver("bystander")
    yield receiver
    receiver.close()


class Bystander:
    """Another tenant's traffic beside an attack: one webhook after another, each must get 202."""

    def __init__(self, gateway: str, tenant: TenantKey, receiver: FlakyReceiver) -> None:
        self.gateway, self.tenant, self.receiver = gateway, tenant, receiver
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(timeout=30) as client:
            while not self._stop.is_set() or not self.latencies:
                started = time.monotonic()
                try:
                    response = client.post(
                        f"{self.gateway}/v1/webhooks",
                        json={"url": f"{self.receiver.base_url}/bystander", "payload": {"mode": "ok"}},
                        headers=self.tenant.headers,
                    )
                    if response.status_code != 202:
                        self.failures.append(f"{response.status_code} {response.text[:120]}")
                except httpx.HTTPError as error:
                    self.failures.append(repr(error))
                self.latencies.append(time.monotonic() - started)
                self._stop.wait(0.05)

    def __enter__(self) -> Bystander:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # At least one request of the other tenant completed while the attack ran (or right after).
        self._stop.set()
        self._thread.join(timeout=60)

    def summary(self) -> str:
        if not self.latencies:
            return "no requests"
        ordered = sorted(self.latencies)
        p50, p95, top = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95)], ordered[-1]
        return f"{len(ordered)} requests, p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {top * 1000:.0f} ms"


def address_of(gateway: str) -> tuple[str, int]:
    parts = urlsplit(gateway)
    return parts.hostname or "127.0.0.1", parts.port or 80


def raw_exchange(gateway: str, payload: bytes, timeout: float = 30.0) -> bytes:
    """Sends raw bytes on one connection; reads the head of the answer, or nothing if the server hangs up."""
    with socket.create_connection(address_of(gateway), timeout=timeout) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(payload)
        received = b""
        with contextlib.suppress(OSError):
            while b"\r\n\r\n" not in received:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        return received


def status_of(raw: bytes) -> int | None:
    """The HTTP status of a raw answer; None when the server closed without answering."""
    return int(raw[9:12]) if raw.startswith(b"HTTP/1.1 ") else None


@dataclass(frozen=True)
class Hostile:
    name: str
    # (gateway, the attacker's Authorization value, a local URL) -> the status answered (None: connection closed)
    send: Callable[[str, str, str], int | None]
    allowed: frozenset[int | None]


def _post_json(body: bytes) -> Callable[[str, str, str], int | None]:
    def send(gateway: str, auth: str, url: str) -> int | None:
        content = body.replace(b"{URL}", url.encode())
        headers = {"authorization": auth, "content-type": "application/json"}
        return httpx.post(f"{gateway}/v1/webhooks", content=content, headers=headers, timeout=60).status_code

    return send


def _chunked(body: bytes) -> Callable[[str, str, str], int | None]:
    def send(gateway: str, auth: str, url: str) -> int | None:
        content = body.replace(b"{URL}", url.encode())
        chunks = iter([content[i : i + 65536] for i in range(0, len(content), 65536)])
        headers = {"authorization": auth, "content-type": "application/json"}
        return httpx.post(f"{gateway}/v1/webhooks", content=chunks, headers=headers, timeout=60).status_code

    return send


def _raw(head: bytes) -> Callable[[str, str, str], int | None]:
    def send(gateway: str, auth: str, url: str) -> int | None:
        return status_of(raw_exchange(gateway, head.replace(b"{AUTH}", auth.encode())))

    return send


OVERSIZED = b'{"url": "{URL}", "payload": "' + b"x" * (MAX_REQUEST_BYTES + 1024) + b'"}'
NESTED = b'{"url": "{URL}", "payload": ' + b"[" * PROFILE.nesting_depth + b"]" * PROFILE.nesting_depth + b"}"

CASES = [
    Hostile("body over 8 MiB, Content-Length declared", _post_json(OVERSIZED), frozenset({413})),
    Hostile("body over 8 MiB, chunked (no Content-Length)", _chunked(OVERSIZED), frozenset({413})),
    Hostile(f"JSON nested {PROFILE.nesting_depth} deep", _post_json(NESTED), frozenset({400, 413, 422})),
    Hostile(
        "invalid UTF-8 in a JSON body",
        _post_json(b'{"url": "{URL}", "payload": "\xff\xfe\xc3\x28"}'),
        frozenset({400, 422}),
    ),
    Hostile("JSON that is not an object", _post_json(b"[1, 2, 3]"), frozenset({422})),
    Hostile("JSON truncated", _post_json(b'{"url": "{URL}", "payload": {"a": '), frozenset({400, 422})),
    Hostile(
        "bytes after the JSON document",
        _post_json(b'{"url": "{URL}", "payload": 1} trailing'),
        frozenset({400, 422}),
    ),
    Hostile(
        "a number with 5,000 digits",
        _raw(b"GET /v1/jobs?limit=" + b"9" * 5000 + b" HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\n\r\n"),
        frozenset({400, 414, 422, None}),
    ),
    Hostile(
        "invalid UTF-8 in a header value",
        _raw(b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\nX-Note: \xff\xfe\r\n\r\n"),
        frozenset({200, 400}),
    ),
    Hostile(
        "a 64 KB Authorization header",
        _raw(b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + b"k" * 65_536 + b"\r\n\r\n"),
        frozenset({400, 401, 431, None}),
    ),
    Hostile(
        "Content-Length that is not a number",
        _raw(b"POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\nContent-Length: 12abc\r\n\r\n{}"),
        frozenset({400, None}),
    ),
    Hostile(
        "two different Content-Length headers",
        _raw(
            b"POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\n"
            b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"
        ),
        frozenset({400, None}),
    ),
    Hostile(
        "a 1 MB header (with a valid key)",
        _raw(b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\nX-Big: " + b"a" * 1_000_000 + b"\r\n\r\n"),
        frozenset({431}),
    ),
    Hostile(
        "10,000 headers (with a valid key)",
        _raw(
            b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\n"
            + b"".join(b"X-H%d: v\r\n" % i for i in range(10_000))
            + b"\r\n"
        ),
        frozenset({431}),
    ),
    Hostile(
        "200 small headers (with a valid key)",
        _raw(
            b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\n"
            + b"".join(b"X-H%d: v\r\n" % i for i in range(200))
            + b"\r\n"
        ),
        frozenset({431}),
    ),
]


@pytest.mark.parametrize("hostile", CASES, ids=[case_id(c) for c in CASES])
def test_malformed_and_oversized_requests_are_refused_while_another_tenant_is_served(
    resilient: Resilient,
    attacker: TenantKey,
    bystander_tenant: TenantKey,
    bystander_receiver: FlakyReceiver,
    hostile: Hostile,
) -> None:
    url = f"{bystander_receiver.base_url}/hostile"
    with Bystander(resilient.gateway, bystander_tenant, bystander_receiver) as bystander:
        try:
            status = hostile.send(resilient.gateway, attacker.headers["authorization"], url)
        except httpx.HTTPError as error:
            status = None
            if None not in hostile.allowed:
                pytest.fail(f"{hostile.name}: no answer ({error!r})")
    REPORT.add(SECTION, f"{hostile.name:<46} -> {status}; another tenant meanwhile: {bystander.summary()}")
    assert not bystander.failures, f"another tenant's requests failed meanwhile: {bystander.failures[:5]}"
    assert status in hostile.allowed, (
        f"{hostile.name}: answered {status}, expected one of {sorted(hostile.allowed, key=str)}"
    )
    assert_still_healthy(resilient, "gateway")


def test_slow_clients_do_not_slow_another_tenant(
    resilient: Resilient, attacker: TenantKey, bystander_tenant: TenantKey, bystander_receiver: FlakyReceiver
) -> None:
    """Slowloris, bounded: `slow_clients` connections trickle a header (or a body) a byte at a
    time for up to `slow_client_hold_s`, while another tenant is served. The gateway cuts
    each of them off by itself (its head and body read deadlines, shortened in this suite's
    stack): answered 408, or closed."""
    before = Bystander(resilient.gateway, bystander_tenant, bystander_receiver)
    with before:
        time.sleep(1.0)
    sockets: list[socket.socket] = []
    cut_off = 0
    try:
        for i in range(PROFILE.slow_clients):
            sock = socket.create_connection(address_of(resilient.gateway), timeout=5)
            if i % 2:  # a body that never finishes
                sock.sendall(
                    b"POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Authorization: " + attacker.headers["authorization"].encode() + b"\r\n"
                    b"Content-Length: 100000\r\n\r\n{"
                )
            else:  # headers that never finish
                sock.sendall(b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\n")
            sock.setblocking(False)
            sockets.append(sock)
        with Bystander(resilient.gateway, bystander_tenant, bystander_receiver) as during:
            deadline = time.monotonic() + PROFILE.slow_client_hold_s
            while time.monotonic() < deadline and sockets:
                for sock in list(sockets):
                    try:
                        answered = sock.recv(16, socket.MSG_PEEK)
                        if answered == b"" or answered.startswith(b"HTTP/1.1 408"):
                            raise ConnectionResetError
                    except BlockingIOError:
                        pass  # nothing from the server: still waiting for us
                    except OSError:
                        cut_off += 1
                        sockets.remove(sock)
                        sock.close()
                        continue
                    with contextlib.suppress(OSError):
                        sock.send(b"a")
                time.sleep(0.5)
    finally:
        still_open = len(sockets)
        for sock in sockets:
            sock.close()
    section = "hostile input: slow clients"
    REPORT.add(
        section,
        f"{PROFILE.slow_clients} connections trickling for {PROFILE.slow_client_hold_s:.0f}s: "
        f"{cut_off} cut off by the gateway, {still_open} still open at the end",
    )
    REPORT.add(section, f"another tenant before: {before.summary()}")
    REPORT.add(section, f"another tenant during: {during.summary()}")
    assert not during.failures, f"another tenant's requests failed meanwhile: {during.failures[:5]}"
    assert len(during.latencies) >= 3, "the other tenant was barely served"
    assert still_open == 0, f"{still_open} slow clients were still connected after {PROFILE.slow_client_hold_s}s"
    assert_still_healthy(resilient, "gateway")
