"""Hostile input (tests/resilience/README.md), second half: malformed, oversized and slow requests
on the gateway's HTTP port, and garbage on every service's gRPC port (the fuzzing from
/openapi.json is in test_hostile_fuzz.py).

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
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import grpc
import httpx
import pytest
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from grpc_status import rpc_status

from herald.grpcio.options import MAX_MESSAGE_BYTES
from tests.resilience.conftest import Resilient
from tests.resilience.profile import PROFILE
from tests.resilience.receivers import FlakyReceiver
from tests.resilience.report import REPORT
from tests.support.api import TenantKey

MAX_REQUEST_BYTES = 8 * 1024 * 1024
SERVICES = ("gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier")
SECTION = "hostile input: malformed, oversized and slow requests"


@pytest.fixture(scope="module")
def attacker(resilient: Resilient) -> TenantKey:
    return resilient.tenant("attacker")


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


def _case_id(case: Any) -> str:
    hostile = case.values[0] if hasattr(case, "values") else case
    return str(hostile.name)


@pytest.mark.parametrize("hostile", CASES, ids=[_case_id(c) for c in CASES])
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


# --- garbage gRPC -------------------------------------------------------------------------------

GARBAGE = {
    "invalid wire type": b"\xff" * 16,
    "length past the end": b"\x0a\xff\xff\xff\xff\x0f" + b"x" * 8,
    "truncated varint": b"\x08\xff\xff\xff",
}


def assert_still_healthy(resilient: Resilient, name: str) -> None:
    service = resilient.stack.services[name]
    assert service.process is not None and service.process.poll() is None, f"{name} died"
    with grpc.insecure_channel(service.grpc_addr) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING, f"{name} is {answer.status}"


def grpc_methods(channel: grpc.Channel) -> tuple[list[str], list[str], list[tuple[str, bool]]]:
    """Every method the server exposes, found through its own reflection service: the unary
    ones, the server-streaming ones (one request each), and the client-streaming ones with
    whether they stream back too."""
    database = ProtoReflectionDescriptorDatabase(channel)
    pool = descriptor_pool.DescriptorPool(database)
    methods, server_streaming, client_streaming = [], [], []
    for name in database.get_services():
        for method in pool.FindServiceByName(name).methods:
            if method.client_streaming:
                client_streaming.append((f"/{name}/{method.name}", method.server_streaming))
            elif method.server_streaming:
                server_streaming.append(f"/{name}/{method.name}")
            else:
                methods.append(f"/{name}/{method.name}")
    return methods, server_streaming, client_streaming


def _read_all(stream: Callable[..., Any]) -> Callable[..., list[Any]]:
    return lambda garbage, **kwargs: list(stream(garbage, **kwargs))


def stream_garbage(channel: grpc.Channel, method: str, server: bool, garbage: bytes, key: str) -> None:
    """One garbage message on a client-streaming method (raw bytes in, raw bytes out), every answer read."""
    metadata = [("authorization", f"Bearer {key}")]
    if server:
        list(channel.stream_stream(method)(iter([garbage]), timeout=10, metadata=metadata))
    else:
        channel.stream_unary(method)(iter([garbage]), timeout=10, metadata=metadata)


@pytest.mark.parametrize("name", SERVICES)
def test_garbage_grpc_messages_are_refused_with_a_status(resilient: Resilient, attacker: TenantKey, name: str) -> None:
    """Every method of the service (found by reflection, so new ones are covered) gets bytes that
    are no protobuf message, and one message over the size limit. A method taking one request
    answers promptly with a rich INVALID_ARGUMENT (RESOURCE_EXHAUSTED for the size) and no
    traceback is logged for it; a client-streaming method gets the garbage as a message of the
    stream, with a real tenant key so that it is read, and answers with an error status
    promptly. The process stays up and SERVING."""
    service = resilient.stack.services[name]
    pid = service.process.pid if service.process else None
    log_path = resilient.stack.data_dir / "logs" / f"{name}.log"
    log_offset = log_path.stat().st_size if log_path.exists() else 0
    wrong: list[str] = []
    codes: Counter[str] = Counter()
    with grpc.insecure_channel(service.grpc_addr) as channel:
        methods, server_streaming, client_streaming = grpc_methods(channel)
        assert methods, f"{name} exposes no unary method through reflection"
        for method in methods + server_streaming:
            # Raw bytes in, raw bytes out; a stream is read to its end (or its error).
            call = (
                _read_all(channel.unary_stream(method)) if method in server_streaming else channel.unary_unary(method)
            )
            for label, garbage in GARBAGE.items():
                try:
                    call(garbage, timeout=10, metadata=[("authorization", "Bearer not-a-key")])
                    wrong.append(f"{method} ({label}): answered OK")
                except grpc.RpcError as error:
                    codes[error.code().name] += 1
                    if error.code() != grpc.StatusCode.INVALID_ARGUMENT:
                        wrong.append(f"{method} ({label}): {error.code().name} {error.details()}")
                    elif rpc_status.from_call(error) is None:
                        wrong.append(f"{method} ({label}): INVALID_ARGUMENT without a google.rpc.Status")
        for method, server in client_streaming:
            for label, garbage in GARBAGE.items():
                try:
                    stream_garbage(channel, method, server, garbage, attacker.api_key)
                    wrong.append(f"{method} (stream, {label}): answered OK")
                except grpc.RpcError as error:
                    codes[f"stream {error.code().name}"] += 1
                    if error.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                        wrong.append(f"{method} (stream, {label}): {error.code().name} {error.details()}")
        try:
            channel.unary_unary(methods[0])(b"\x0a" + b"x" * (MAX_MESSAGE_BYTES + 1024 * 1024), timeout=30)
            wrong.append(f"{methods[0]}: a message over {MAX_MESSAGE_BYTES} bytes answered OK")
        except grpc.RpcError as error:
            codes[f"over the size limit: {error.code().name}"] += 1
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                wrong.append(f"{methods[0]} over the size limit: {error.code().name}")
    assert_still_healthy(resilient, name)
    logged = log_path.read_bytes()[log_offset:].decode(errors="replace") if log_path.exists() else ""
    if "DecodeError" in logged:
        wrong.append(f"{name} logged an error for an undecodable request")
    if service.process is not None and service.process.pid != pid:
        wrong.append(f"{name} was restarted during the test")
    REPORT.add(
        "hostile input: garbage gRPC (status codes answered)",
        f"{name:<15} {len(methods)} unary, {len(server_streaming)} server-streaming and "
        f"{len(client_streaming)} client-streaming methods: "
        + ", ".join(f"{code} x{n}" for code, n in sorted(codes.items())),
    )
    assert not wrong, "\n".join(wrong[:40])


# --- strings nothing downstream can take --------------------------------------------------------

NUL, LONE_SURROGATE = "\\u0000", "\\ud800"  # as JSON escapes


@dataclass(frozen=True)
class Unstorable:
    name: str
    path: str  # {TENANT}: the calling tenant's id
    body: str  # JSON text; {X} is replaced by `char`
    char: str
    operator: bool = False
    method: str = "POST"


UNSTORABLE = [
    Unstorable("tenant name, NUL", "/admin/v1/tenants", '{"name": "a{X}b", "plan": "startup"}', NUL, True),
    Unstorable(
        "tenant name, lone surrogate", "/admin/v1/tenants", '{"name": "a{X}b", "plan": "startup"}', LONE_SURROGATE, True
    ),
    Unstorable("API key name, NUL", "/v1/api-keys", '{"name": "a{X}b"}', NUL),
    Unstorable("suppressed address, NUL", "/v1/suppressions", '{"address": "a{X}b@example.com"}', NUL),
    Unstorable(
        "tenant limit beyond int32",
        "/admin/v1/tenants/{TENANT}/limits",
        '{"webhooks_per_month": {X}}',
        str(2**40),
        operator=True,
        method="PATCH",
    ),
    Unstorable(
        "Postmark key, lone surrogate",
        "/v1/providers",
        '{"provider": "postmark", "api_key": "pm-{X}", "base_url": "http://127.0.0.1:9"}',
        LONE_SURROGATE,
    ),
    Unstorable(
        "webhook header value, NUL",
        "/v1/webhooks",
        '{"url": "http://127.0.0.1:9/x", "payload": 1, "headers": {"X-A": "a{X}b"}}',
        NUL,
    ),
    Unstorable(
        "Postmark key, non-ASCII",
        "/v1/providers",
        '{"provider": "postmark", "api_key": "pm-{X}", "base_url": "http://127.0.0.1:9"}',
        "\\u20ac",
    ),
    Unstorable(
        "tenant limit just past int32",
        "/admin/v1/tenants/{TENANT}/limits",
        '{"rate_per_min": {X}}',
        str(2**31),
        operator=True,
        method="PATCH",
    ),
    Unstorable(
        "webhook ordering key, NUL",
        "/v1/webhooks",
        '{"url": "http://127.0.0.1:9/x", "payload": 1, "ordering_key": "a{X}b"}',
        NUL,
    ),
    Unstorable(
        "email tag, NUL",
        "/v1/emails",
        '{"from": "a@acme.example", "to": ["b@example.com"], "subject": "s", "text": "t", "tags": ["a{X}b"]}',
        NUL,
    ),
    Unstorable(
        "Postmark account token, non-ASCII",
        "/v1/domains",
        '{"domain": "mail.acme.example", "provider_id": "x", "account_token": "t-{X}"}',
        "\\u00e9",
    ),
    Unstorable(
        "webhook payload, integer beyond 64 bits",
        "/v1/webhooks",
        '{"url": "http://127.0.0.1:9/x", "payload": {"n": {X}}}',
        str(-(2**64)),
    ),
    Unstorable(
        "event payload, integer beyond 64 bits", "/v1/events", '{"event_type": "a.b", "payload": {X}}', str(2**64)
    ),
    Unstorable(
        "email subject, NUL",
        "/v1/emails",
        '{"from": "a@acme.example", "to": ["b@example.com"], "subject": "a{X}b", "text": "t"}',
        NUL,
    ),
]


@pytest.mark.parametrize("case", UNSTORABLE, ids=[_case_id(c) for c in UNSTORABLE])
def test_strings_nothing_downstream_can_take_are_refused(
    resilient: Resilient, attacker: TenantKey, case: Unstorable
) -> None:
    """NUL (PostgreSQL refuses it in text) and lone surrogates (not UTF-8) are valid JSON escapes: the
    gateway must refuse them (4xx), not pass them on to fail downstream (5xx)."""
    headers = resilient.operator_headers if case.operator else attacker.headers
    response = httpx.request(
        case.method,
        f"{resilient.gateway}{case.path.replace('{TENANT}', attacker.tenant_id)}",
        content=case.body.replace("{X}", case.char).encode(),
        headers={**headers, "content-type": "application/json"},
        timeout=30,
    )
    REPORT.add("hostile input: strings nothing downstream can take", f"{case.name:<32} -> {response.status_code}")
    assert 400 <= response.status_code < 500, response.text[:300]
    assert response.headers["content-type"].startswith("application/problem+json"), response.text[:300]


def test_a_replayed_error_is_problem_json_too(resilient: Resilient, attacker: TenantKey) -> None:
    """An Idempotency-Key replays the first answer, errors included: with the same media type.
    (A route that creates a job writes its key with the job, so there a refused request leaves
    no key behind and a repeat is refused afresh; this is a route that stores its answer.)"""
    headers = {**attacker.headers, "idempotency-key": f"replayed-error-{resilient.run_id}"}
    body = {"url": "ftp://receiver.example/hook"}  # not http(s): 422
    first, again = (
        httpx.post(f"{resilient.gateway}/v1/webhooks/targets", json=body, headers=headers, timeout=30) for _ in range(2)
    )
    assert (first.status_code, again.status_code) == (422, 422)
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.headers["content-type"].startswith("application/problem+json")
