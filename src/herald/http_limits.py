"""Bounds on what one HTTP client may hold of a service: header size and count, body size
(chunked included), and time to send its request.

uvicorn with httptools bounds none of these (`h11_max_incomplete_event_size` applies to
h11 only), so a client could send an unbounded header block, a chunked body of any size
(read whole before the app could refuse it), or hold a connection open forever by
trickling bytes, each connection counting against `limit_concurrency` for every tenant.
`GuardedHttpToolsProtocol` keeps httptools' speed and adds the bounds at the protocol,
where a request that arrives whole in one read costs a few attribute checks: deadlines
are timers armed only while a request is incomplete at the end of a read.

A refused request gets a problem+json answer (431, 413, 408) with `Connection: close`;
after a refusal the rest of what the client sends is read and dropped for a moment
(a lingering close), so a client still uploading sees the answer rather than a reset.

It also sends a small answer in one write instead of two: uvicorn writes a response's
head when the app starts it and the body when the app sends it, and each write to a socket
is a system call (with a wakeup of the client), which `make bench`'s counts put at a few
percent of the gateway's CPU per request. `HeadHeld` keeps the head until the body comes, or
until the end of the loop turn when it does not come at once (a streamed answer, a
`100 Continue`), so nothing waits longer than that.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

PROBLEM_BASE = "https://herald.dev/problems/"
# After a refusal: how long what the client still sends is read and dropped before closing.
LINGER_S = 2.0

_IDLE, _HEAD, _BODY = 0, 1, 2


@dataclass(frozen=True)
class HttpLimits:
    # The request line and headers together.
    max_head_bytes: int = 64 * 1024
    max_headers: int = 100
    # None: the app bounds the body itself.
    max_body_bytes: int | None = None
    # From the connection's first byte (or a keep-alive request's first byte) to the end of its headers.
    head_timeout_s: float = 10.0
    # From the end of the headers to the end of the body: a deadline, not an idle timeout, so
    # trickling a byte at a time does not extend it.
    body_timeout_s: float = 30.0
    # An idle keep-alive connection's life (HERALD_HTTP_KEEP_ALIVE_S, see herald.config).
    keep_alive_s: float = 75.0


class _Refused(Exception):
    """Raised inside a parser callback to stop parsing; uvicorn then calls send_400_response."""


def _answer(status: int, reason: str, kind: str, title: str, detail: str) -> bytes:
    body = json.dumps(
        {"type": PROBLEM_BASE + kind, "title": title, "status": status, "detail": detail}, separators=(",", ":")
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/problem+json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


HEAD_TOO_LARGE = _answer(
    431,
    "Request Header Fields Too Large",
    "headers-too-large",
    "Request headers too large",
    "the headers are too large",
)
TOO_MANY_HEADERS = _answer(
    431, "Request Header Fields Too Large", "headers-too-large", "Request headers too large", "too many headers"
)


def size_in_words(size: int) -> str:
    """A limit as a person reads it: "8 MiB", "512 KiB", "100 bytes"."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def body_too_large_detail(limit: int) -> str:
    return f"the request body is larger than this endpoint's limit of {size_in_words(limit)}; send less"


def body_too_large(limit: float) -> bytes:
    detail = body_too_large_detail(int(limit)) if limit != math.inf else "the request body is too large"
    return _answer(413, "Content Too Large", "payload-too-large", "Payload too large", detail)


TOO_SLOW = _answer(408, "Request Timeout", "request-timeout", "Request timeout", "the request was not received in time")


class HeadHeld:
    """One request's view of its connection: the first thing written (the head of its answer)
    is held until the next write, which carries both, or until the end of the loop turn."""

    __slots__ = ("_first", "_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._first = True

    def write(self, data: bytes) -> None:
        if self._first:
            self._first = False
            self._held = data
            self._loop.call_soon(self._flush)
            return
        held = self._held
        if held is not None:
            self._held = None
            data = held + data
        self._transport.write(data)

    def _flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedHttpToolsProtocol(HttpToolsProtocol):  # type: ignore[misc]
    """uvicorn's httptools protocol with `limits` enforced (see the module docstring)."""

    limits: ClassVar[HttpLimits] = HttpLimits()
    _max_body: ClassVar[float] = math.inf
    _body_refusal: ClassVar[bytes] = body_too_large(math.inf)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._phase = _IDLE
        self._head_bytes = 0
        self._body_bytes = 0
        self._deadline: asyncio.TimerHandle | None = None
        self._refusal: bytes | None = None
        self._draining = False

    @classmethod
    def with_limits(cls, limits: HttpLimits) -> type[GuardedHttpToolsProtocol]:
        max_body = math.inf if limits.max_body_bytes is None else limits.max_body_bytes
        refusal = body_too_large(max_body)
        return type(cls.__name__, (cls,), {"limits": limits, "_max_body": max_body, "_body_refusal": refusal})

    # --- asyncio.Protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A connection that never sends a request is bounded too (it holds a place of limit_concurrency).
        self._deadline = self.loop.call_later(self.limits.head_timeout_s, self._expire)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return
        super().data_received(data)
        phase = self._phase
        if phase == _IDLE or self._draining:
            return  # the common case: the read held whole requests
        if phase == _HEAD:
            # Counted after parsing, so that a read holding the end of the headers and body bytes is not
            # mistaken for a large head; the parser holds at most one read more than the limit.
            self._head_bytes += len(data)
            if self._head_bytes > self.limits.max_head_bytes:
                self._refuse(HEAD_TOO_LARGE)
                return
        if self._deadline is None and self.parser is not None:
            timeout = self.limits.head_timeout_s if phase == _HEAD else self.limits.body_timeout_s
            self._deadline = self.loop.call_later(timeout, self._expire)

    # --- parser callbacks

    def on_message_begin(self) -> None:
        self._phase = _HEAD
        self._head_bytes = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        if len(self.headers) > self.limits.max_headers:
            self._refusal = TOO_MANY_HEADERS
            raise _Refused
        self._phase = _BODY
        self._body_bytes = 0
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        super().on_headers_complete()
        self.cycle.transport = cast(asyncio.Transport, HeadHeld(self.transport, self.loop))

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        # Not when the app has answered already (413 on a declared length): uvicorn drops the rest.
        if self._body_bytes > self._max_body and self.cycle is not None and not self.cycle.response_started:
            self._refusal = self._body_refusal
            raise _Refused
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._phase = _IDLE
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        super().on_message_complete()

    # --- refusing

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a parser error, which is how a refusal in a callback arrives."""
        refusal, self._refusal = self._refusal, None
        if refusal is None:
            super().send_400_response(msg)
        else:
            self._refuse(refusal)

    def _refuse(self, answer: bytes) -> None:
        self._cancel_deadline()
        # The cycle is this request's only once its headers are complete (before, it is the previous one's).
        cycle = self.cycle if self._phase == _BODY else None
        if cycle is not None:
            if not cycle.response_complete:
                # The app may be waiting for the rest of the body: it is told the client went away.
                cycle.disconnected = True
                cycle.message_event.set()
            if cycle.response_started:
                # The app has answered (say 413 on a declared length) and the client is still sending.
                self.transport.close()
                return
        self._draining = True
        self.transport.write(answer)
        self.flow.resume_reading()
        self.loop.call_later(LINGER_S, self.transport.close)

    def _expire(self) -> None:
        self._deadline = None
        if self._draining or self.transport.is_closing():
            return
        if self._phase == _IDLE:
            self.transport.close()  # never sent a request
        else:
            self._refuse(TOO_SLOW)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
