"""What one HTTP client may hold of a service (herald.http_limits), on a real uvicorn with
httptools serving a small app that reads the whole body: oversized heads and bodies are
refused with problem+json, slow clients are cut off, and ordinary traffic (keep-alive,
bodies up to the limit) is untouched. An idle keep-alive connection is closed after its time,
which on the services outlasts a load balancer's idle timeout. The head of an answer waits for its body only within
one loop turn (so a small answer leaves in one write): a streamed answer's head is not held."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from herald.asgi import serve_asgi
from herald.cli.embedded import free_port
from herald.http_limits import HttpLimits

MAX_BODY = 1024 * 1024
LIMITS = HttpLimits(max_body_bytes=MAX_BODY, head_timeout_s=0.5, body_timeout_s=0.8, keep_alive_s=2.0)
# GET /streamed: the head at once, the body when the test sets this (after it has read the head).
BODY_MAY_FOLLOW = threading.Event()


async def count_body(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers how many body bytes it read."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/streamed":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"transfer-encoding", b"chunked")]})
        while not BODY_MAY_FOLLOW.is_set():
            await asyncio.sleep(0.01)
        await send({"type": "http.response.body", "body": b"later"})
        return
    received = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        received += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = str(received).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    loop = asyncio.new_event_loop()
    stopping = asyncio.Event()
    thread = threading.Thread(
        target=loop.run_until_complete, args=(serve_asgi(count_body, "127.0.0.1", port, stopping, LIMITS),)
    )
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while True:
        try:
            httpx.get(base, timeout=1)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
    yield base
    loop.call_soon_threadsafe(stopping.set)
    thread.join(timeout=15)


def exchange(base: str, payload: bytes) -> bytes:
    """Sends raw bytes; reads one answer (by its content-length), or nothing if the server closes."""
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(payload)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
            head, found, body = received.partition(b"\r\n\r\n")
            length = [int(line[15:]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")]
            if found and length and len(body) >= length[0]:
                break
        return received


def problem_of(raw: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in head.lower(), head
    return int(head[9:12]), json.loads(body)


def test_ordinary_requests_pass_on_one_keep_alive_connection(server: str) -> None:
    with httpx.Client(base_url=server) as client:
        sizes = [0, 1, 70_000, MAX_BODY, 3]
        assert [client.post("/", content=b"x" * n).text for n in sizes] == [str(n) for n in sizes]


def _ask_again(sock: socket.socket) -> bytes:
    """One more GET on an open connection: the answer's head, or b"" if the server closed it."""
    try:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def test_an_idle_keep_alive_connection_lives_its_time_then_is_closed(server: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        assert _ask_again(sock).startswith(b"HTTP/1.1 200")
        time.sleep(LIMITS.keep_alive_s / 2)
        assert _ask_again(sock).startswith(b"HTTP/1.1 200"), "closed before its keep-alive time"
        time.sleep(LIMITS.keep_alive_s * 1.5)
        assert sock.recv(65536) == b"", "still open after its keep-alive time"


def test_the_gateway_keeps_an_idle_connection_past_five_seconds(gateway: str) -> None:
    """uvicorn's own 5 s closed connections a client was about to reuse (resets at 600/s); a
    load balancer in front keeps its idle connections 60 s, and must close them first."""
    host, port = gateway.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        time.sleep(6)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200"), "the idle connection was closed"


def test_a_chunked_body_up_to_the_limit_is_read(server: str) -> None:
    chunks = [b"x" * 65536] * (MAX_BODY // 65536)
    assert httpx.post(server, content=iter(chunks), timeout=30).text == str(MAX_BODY)


def test_a_chunked_body_over_the_limit_is_refused_413_and_the_client_sees_it(server: str) -> None:
    chunks = [b"x" * 65536] * (MAX_BODY // 65536 + 4)
    response = httpx.post(server, content=iter(chunks), timeout=30)
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 413
    # The answer states the limit, so the client knows how much less to send.
    assert "limit of 1 MiB" in response.json()["detail"]


@pytest.mark.parametrize(
    "headers",
    [
        b"X-Big: " + b"a" * 1_000_000 + b"\r\n",
        b"".join(b"X-H%d: v\r\n" % i for i in range(10_000)),
        b"".join(b"X-H%d: v\r\n" % i for i in range(LIMITS.max_headers + 1)),
    ],
    ids=["one 1 MB header", "10,000 headers", "one header too many"],
)
def test_oversized_heads_are_refused_431(server: str, headers: bytes) -> None:
    status, problem = problem_of(exchange(server, b"GET / HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n"))
    assert (status, problem["status"]) == (431, 431)


@pytest.mark.parametrize(
    "partial",
    [b"GET / HTTP/1.1\r\nHost: x\r\n", b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"],
    ids=["headers never finished", "body never finished"],
)
def test_a_client_that_does_not_finish_its_request_is_answered_408_and_cut_off(server: str, partial: bytes) -> None:
    status, problem = problem_of(exchange(server, partial))
    assert (status, problem["type"]) == (408, "https://herald.dev/problems/request-timeout")


def test_a_connection_that_never_sends_a_request_is_closed(server: str) -> None:
    assert exchange(server, b"") == b""


def test_a_streamed_answer_shows_its_head_before_its_body_is_ready(server: str) -> None:
    BODY_MAY_FOLLOW.clear()
    with httpx.Client(base_url=server, timeout=10) as client, client.stream("GET", "/streamed") as response:
        # The headers arrived while the app still holds the body back (it waits for this event).
        assert response.status_code == 200
        BODY_MAY_FOLLOW.set()
        assert response.read() == b"later"


def test_the_server_still_serves_after_the_refusals(server: str) -> None:
    assert httpx.post(server, content=b"abc").text == "3"
