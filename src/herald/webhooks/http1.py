"""HTTP/1.1 for the senders' outbound calls: one asyncio protocol per connection, the answer
read by httptools (llhttp, the parser uvicorn's server side uses), and a pool of kept-alive
connections per target. `herald.webhooks.receiver_client` puts the target guard in front.

Why not aiohttp, which served before: a call through aiohttp's client crosses three or four
turns of the event loop (its connector, its response reader, its payload stream), and on a
sender's loop, busy with the started jobs and the ledger calls, each turn waits behind all of
them. Here a call is one write of the request (its head and a small body in one system call)
and one wait on a future that `data_received` completes: the caller resumes once. Measured with
`bench/client_cost.py`, in docs/performance.md.

What a connection guarantees:
- it reads at most `limit` bytes of an answer's body, and at most MAX_HEAD_BYTES of its head;
  an answer cut at the body's limit is returned and its connection not reused;
- an interim answer (1xx) is skipped, the final one returned;
- a body framed by Content-Length or chunked that the connection's end cuts short is a broken
  answer, not a short one; only an answer with neither ends with the connection;
- it is reused only when the answer said keep-alive and was read to its end;
- a connection whose peer closed it while it was idle is never written to: before a kept-alive
  connection is written to again, the socket is polled, and one with anything to read (its
  end, a TLS close, bytes nobody asked for) is reported `stale` with nothing written, so the
  caller may send on a new connection. Once a request is written, whatever happens next
  (closed, reset, timed out) is that call's failure: the receiver may have acted on it, so it
  is an attempt, never sent again unseen.
"""

from __future__ import annotations

import asyncio
import select
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

import httptools

# A connection idle longer than this is closed instead of reused: receivers' servers close
# theirs after 5 s (uvicorn) to 75 s (nginx), and a request racing the peer's close is a retry.
KEEP_ALIVE_S = 15.0
# A body at most this long leaves in the same write as the head.
ONE_WRITE_BYTES = 16 * 1024
# An answer's status line and headers may take this much, interim answers included: llhttp sets
# no bound of its own, and a receiver must not make us hold more than the excerpt's worth.
MAX_HEAD_BYTES = 64 * 1024
# Headers that say where an answer's body ends, other than at the connection's end.
FRAMING = frozenset({b"content-length", b"transfer-encoding"})


@dataclass(frozen=True)
class Answer:
    """What the receiver answered: its status, its headers as sent (repeats kept), the start of its body."""

    status_code: int
    headers: list[tuple[str, str]]
    excerpt: bytes

    def header(self, name: str) -> str | None:
        """The first value of header `name` (any case), or None."""
        name = name.lower()
        return next((value for key, value in self.headers if key.lower() == name), None)


class ConnectionBroken(Exception):
    """The connection ended or broke the protocol before a whole answer came back.

    `stale`: nothing was written, the connection was found closed by its peer (a kept-alive one
    closed while idle), so the request may go out on another; `reset`: the connection was reset
    rather than closed; `parse_error`: the answer was not HTTP."""

    def __init__(self, detail: str, *, stale: bool = False, reset: bool = False, parse_error: bool = False) -> None:
        super().__init__(detail)
        self.stale = stale
        self.reset = reset
        self.parse_error = parse_error


Key = TypeVar("Key")


class Connection(asyncio.Protocol, Generic[Key]):
    """One HTTP/1.1 connection; one exchange at a time (no pipelining)."""

    def __init__(self, key: Key, on_lost: Callable[[Connection[Key]], None]) -> None:
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.exchanges = 0  # answers read whole on this connection
        self.idle_since = 0.0
        self._on_lost = on_lost
        self._parser = httptools.HttpResponseParser(self)
        self._answer: asyncio.Future[Answer] | None = None
        self._begin(0, head_only=False)

    def _begin(self, limit: int, *, head_only: bool) -> None:
        """What one exchange reads, set afresh for each."""
        self._limit = limit
        self._head_only = head_only
        self._received = False
        self._head_bytes = 0
        self._interim = False
        self._status = 0
        self._headers: list[tuple[str, str]] = []
        self._framed = False  # Content-Length or chunked: the connection's end is not the body's
        self._headers_done = False
        self._excerpt = bytearray()
        self._full = False
        self._reusable = False

    # -- the exchange ----------------------------------------------------------------------------

    def send(self, request: bytes, body: bytes | None, *, limit: int, head_only: bool) -> asyncio.Future[Answer]:
        """Writes the request and returns the future of its answer (read up to `limit` body bytes)."""
        assert self.transport is not None and self._answer is None
        answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        if self.closed or self.transport.is_closing() or (self.exchanges > 0 and self._peer_spoke()):
            # Lost between its pick (or its opening) and now: nothing written, nothing can come back.
            # A kept-alive one may be replaced uncounted; a new one closed at once is the call's failure.
            self.close()
            answer.set_exception(ConnectionBroken("the connection was closed", stale=self.exchanges > 0))
            return answer
        self._answer = answer
        self._begin(limit, head_only=head_only)
        if body is None:
            self.transport.write(request)
        elif len(body) <= ONE_WRITE_BYTES:
            self.transport.write(request + body)
        else:
            self.transport.write(request)
            self.transport.write(body)
        return answer

    def _peer_spoke(self) -> bool:
        """Whether an idle connection has something to read (its end, a TLS close, stray bytes)
        that the event loop has not handled yet: it must not carry a request. One poll of the
        socket, no wait."""
        assert self.transport is not None
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return False
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN | getattr(select, "POLLRDHUP", 0))
        return bool(poller.poll(0))

    @property
    def reusable(self) -> bool:
        """After an answer: may another request go out on this connection?"""
        return self._reusable and not self.closed and self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.closed = True

    def expire(self) -> None:
        """The caller's time is up: the answer fails with TimeoutError and the connection is closed."""
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_exception(TimeoutError("no answer in time"))
        self._answer = None
        self.close()

    def _finish(self) -> None:
        answer, self._answer = self._answer, None
        if answer is not None and not answer.done():
            answer.set_result(Answer(self._status, self._headers, bytes(self._excerpt)))

    def _fail(self, error: BaseException) -> None:
        answer, self._answer = self._answer, None
        if answer is not None and not answer.done():
            answer.set_exception(error)

    # -- asyncio.Protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._answer is None:
            # Bytes nobody asked for: whatever they are, the connection cannot be trusted.
            self.close()
            return
        self._received = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(ConnectionBroken("the receiver switched protocols", parse_error=True))
            self.close()
        except httptools.HttpParserError as error:
            self._fail(ConnectionBroken(f"not an HTTP answer ({error})", parse_error=True))
            self.close()
        else:
            if self._answer is None:
                return
            if self._full:
                # The excerpt is full and the body goes on: answer now, read no more.
                self._finish()
                self.close()
            elif not self._headers_done:
                # All of it was head (the parser holds a header it has not finished in memory).
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEAD_BYTES:
                    self._fail(ConnectionBroken(f"the answer's head exceeds {MAX_HEAD_BYTES} bytes", parse_error=True))
                    self.close()

    def eof_received(self) -> bool:
        self._ended(None)
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._ended(exc)
        self._on_lost(self)

    def _ended(self, exc: Exception | None) -> None:
        if self._answer is None:
            return
        if self._headers_done and not self._framed and exc is None:
            # A body delimited by the end of the connection: what came is the whole of it.
            self._reusable = False
            self._finish()
            return
        if self._headers_done:
            detail = "the receiver closed the connection before the end of its answer's body"
        else:
            detail = "the receiver closed the connection without an answer" if exc is None else repr(exc)
        self._fail(ConnectionBroken(detail, reset=exc is not None))

    # -- httptools' callbacks ----------------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._interim:
            self._headers.append((name.decode("latin-1"), value.decode("utf-8", "replace")))
            self._framed = self._framed or name.lower() in FRAMING

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            self._interim = True  # 100 Continue and the like: the real answer follows
            self._headers = []
            return
        self._status = status
        self._headers_done = True
        if self._head_only:
            # A HEAD answer's Content-Length promises no body: answer now, and do not reuse.
            self._finish()

    def on_body(self, body: bytes) -> None:
        room = self._limit - len(self._excerpt)
        if room > 0:
            self._excerpt += body[:room]
        if len(body) > room:
            self._full = True

    def on_message_complete(self) -> None:
        if self._interim:
            self._interim = False
            return
        self.exchanges += 1
        self._reusable = self._parser.should_keep_alive() and not self._head_only
        self._full = False
        self._finish()


class Pool(Generic[Key]):
    """Kept-alive connections per key, at most `limit` open at once in all.

    `connect(key)` opens a new connection when no idle one is left; it is the caller's (the
    target guard's address check lives there). At the limit, the longest-idle connection of any
    key is closed to make room; with none idle, a caller waits for one to come back."""

    def __init__(self, limit: int, connect: Callable[[Key], Awaitable[Connection[Key]]]) -> None:
        self.limit = max(1, limit)
        self._connect = connect
        self._idle: dict[Key, list[Connection[Key]]] = {}
        self._open: set[Connection[Key]] = set()
        self._opening = 0
        self._room: deque[asyncio.Future[None]] = deque()

    def idle(self, key: Key) -> Connection[Key] | None:
        """The most recently used idle connection for `key` still fit to use, or None."""
        kept = self._idle.get(key)
        if kept is None:
            return None
        now = time.monotonic()
        found = None
        while kept:
            connection = kept.pop()
            if connection.reusable and now - connection.idle_since < KEEP_ALIVE_S:
                found = connection
                break
            self.discard(connection)
        if not kept:
            self._idle.pop(key, None)  # a sender meets many targets over its life: keep no empty entries
        return found

    async def open(self, key: Key) -> Connection[Key]:
        """A new connection for `key`, once there is room for it."""
        while len(self._open) + self._opening >= self.limit:
            if not self._close_longest_idle():
                waiting: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._room.append(waiting)
                try:
                    await waiting
                finally:
                    if not waiting.done():
                        waiting.cancel()
        self._opening += 1
        try:
            connection = await self._connect(key)
        finally:
            self._opening -= 1
            self._wake()
        self._open.add(connection)
        return connection

    def release(self, connection: Connection[Key]) -> None:
        """Back from an exchange: kept for the next request when fit, closed otherwise."""
        if connection.reusable:
            connection.idle_since = time.monotonic()
            self._idle.setdefault(connection.key, []).append(connection)
            self._wake()
        else:
            self.discard(connection)

    def discard(self, connection: Connection[Key]) -> None:
        """Closed and forgotten (also what a connection's loss calls)."""
        connection.close()
        kept = self._idle.get(connection.key)
        if kept and connection in kept:
            kept.remove(connection)
            if not kept:
                del self._idle[connection.key]
        if connection in self._open:
            self._open.discard(connection)
            self._wake()

    def _close_longest_idle(self) -> bool:
        oldest: Connection[Key] | None = None
        for kept in self._idle.values():
            if kept and (oldest is None or kept[0].idle_since < oldest.idle_since):
                oldest = kept[0]
        if oldest is None:
            return False
        self.discard(oldest)
        return True

    def _wake(self) -> None:
        while self._room:
            waiting = self._room.popleft()
            if not waiting.done():
                waiting.set_result(None)
                return

    def close(self) -> None:
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle.clear()
