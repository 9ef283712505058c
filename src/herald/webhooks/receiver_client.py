"""The HTTP client the senders call tenant-aimed endpoints with: `herald.webhooks.http1` behind
the target guard.

The webhook-sender POSTs to receivers with it; the email-sender calls its providers' HTTP APIs
(sends, credential checks, domain calls) with it, because a provider's base URL is as
tenant-aimed as a webhook URL. Built for throughput: a call is one write and one wake-up of its
caller (see `herald.webhooks.http1` for why, and `bench/client_cost.py` for the measure against
httpx and aiohttp). The target guard's httpx transport (`TargetGuard.transport`) stays for the
other callers.

Every guarantee of the guard holds here, through the guard's own functions:
- every new connection asks `TargetGuard.addresses_for` for the addresses it may use (a name is
  resolved and every answer checked; a literal is checked), and connects to one of exactly those:
  there is no second lookup for a rebinding name server to answer differently;
- address literals are also checked before anything else, in every spelling; legacy numeric
  spellings (`2130706433`, `127.1`) are checked as the address they mean and sent to it, with the
  Host header as written;
- TLS keeps the URL's host name for SNI and certificate verification, and the Host header is the
  name, whatever address the connection went to;
- no redirects are followed (a 3xx is an answer), no proxy or settings are taken from the
  environment, and no cookies are kept;
- one timeout bounds the whole call (connect, send, answer, excerpt); connections are kept
  alive per target (scheme, host, port), at most `connections` open in all;
- at most `excerpt_bytes` of the answer's body are read (or the call's own `read_bytes`): a
  receiver cannot make us read more.

Without a guard (`guard=None`) the client checks only the URL's form: that is for endpoints the
operator configured (platform email's provider), which may well sit on a private network.

Failures come back as `ReceiverCallError` with the class the attempt record and the retry
policy use (`herald.webhooks.retry_policy`), or as `TargetRefused`. Every call that wrote its
request is one attempt, whatever happens next (closed without an answer, reset, timed out): the
receiver may have acted on it. Only a kept-alive connection found closed before anything was
written (`ConnectionBroken.stale`) is left for a new one, within the same timeout, uncounted.
"""

from __future__ import annotations

import asyncio
import base64
import re
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

from yarl import URL

from herald.webhooks.http1 import Answer, Connection, ConnectionBroken, Pool
from herald.webhooks.retry_policy import ReceiverCallError
from herald.webhooks.target_guard import (
    MALFORMED,
    NOT_HTTP,
    SCHEMES,
    Problem,
    ResolutionFailed,
    TargetGuard,
    TargetRefused,
    literal_address,
)

__all__ = ["DEFAULT_EXCERPT_BYTES", "Answer", "ReceiverClient"]

DEFAULT_EXCERPT_BYTES = 4096
# URLs whose parse and literal check are remembered: a sender calls the same few targets.
CHECKED_URLS_KEPT = 1024
# Headers that frame the message or the connection: the client writes its own, never a caller's.
FRAMING_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer"}
)
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# What would end a header line early or split a name: refused rather than written.
UNSENDABLE_NAME = re.compile(r"[:\r\n\x00 ]")
UNSENDABLE_VALUE = re.compile(r"[\r\n\x00]")

# (https?, host to connect to and to name in TLS, port)
PoolKey = tuple[bool, str, int]


@dataclass(frozen=True)
class Target:
    """A URL as the client requests it, parsed and checked once."""

    key: PoolKey
    path: str  # the request target: path and query, percent-encoded
    host_header: str
    authorization: str | None  # Basic credentials written in the URL, if any


def _connect_error_kind(error: BaseException) -> str:
    """A failure to open a connection in the retry policy's vocabulary (`retry_policy.error_class`)."""
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, ResolutionFailed | socket.gaierror):
        return "dns"
    if isinstance(error, ssl.SSLError | ssl.CertificateError):
        return "tls"
    if isinstance(error, OSError):
        return "connect"
    return "other"


def _basic(user: str, password: str) -> str:
    pair = f"{user}:{password}"
    try:
        raw = pair.encode("latin-1")
    except UnicodeEncodeError:
        raw = pair.encode("utf-8")
    return "Basic " + base64.b64encode(raw).decode("ascii")


class ReceiverClient:
    """Calls tenant-aimed endpoints; one per sender process and purpose (it owns the connection pool)."""

    def __init__(
        self,
        guard: TargetGuard | None,
        *,
        timeout_s: float,
        connections: int,
        ssl_context: ssl.SSLContext | None = None,
        excerpt_bytes: int = DEFAULT_EXCERPT_BYTES,
    ) -> None:
        self.guard = guard
        self.timeout_s = timeout_s
        self.connections = connections
        self.ssl_context = ssl_context
        self.excerpt_bytes = excerpt_bytes
        self._pool: Pool[PoolKey] = Pool(connections, self._connect)
        self._default_ssl: ssl.SSLContext | None = None
        # url -> Target. The guard's policy is fixed for its life, so a literal's verdict cannot
        # change; every new connection asks the guard again whatever is remembered here.
        self._checked: dict[str, Target] = {}

    def _tls(self) -> ssl.SSLContext:
        if self.ssl_context is not None:
            return self.ssl_context
        if self._default_ssl is None:
            self._default_ssl = ssl.create_default_context()
        return self._default_ssl

    async def _checked_url(self, url: str) -> Target:
        """What to request for `url`, refused when the guard would refuse it."""
        found = self._checked.get(url)
        if found is None:
            found = await self._check(url)
            if len(self._checked) >= CHECKED_URLS_KEPT:
                self._checked.clear()
            self._checked[url] = found
        return found

    async def _check(self, url: str) -> Target:
        try:
            parsed = URL(url)
            host = parsed.raw_host
            port = parsed.port
            host_header = parsed.host_port_subcomponent
        except (ValueError, TypeError):
            raise TargetRefused(Problem("malformed", MALFORMED)) from None
        if parsed.scheme not in SCHEMES:
            raise TargetRefused(Problem("scheme", NOT_HTTP))
        if not host or port is None or not host_header:
            raise TargetRefused(Problem("malformed", MALFORMED))
        try:
            address = literal_address(host)
        except ValueError:
            raise TargetRefused(Problem("malformed", MALFORMED)) from None
        if address is None:
            if ":" in host or host.replace(".", "").isdigit():
                raise TargetRefused(Problem("malformed", MALFORMED))
        else:
            if self.guard is not None:
                [address] = await self.guard.addresses_for(str(address), port)
            host = str(address)  # a legacy spelling is sent to the address it means, Host as written
        authorization = _basic(parsed.user or "", parsed.password or "") if parsed.user is not None else None
        return Target((parsed.scheme == "https", host, port), parsed.raw_path_qs or "/", host_header, authorization)

    async def _connect(self, key: PoolKey) -> Connection[PoolKey]:
        """A new connection to an address the guard checked just now (a name asks it again)."""
        tls, host, port = key
        addresses = [str(a) for a in await self.guard.addresses_for(host, port)] if self.guard else [host]
        loop = asyncio.get_running_loop()
        failure: BaseException | None = None
        for address in addresses:
            try:
                _, connection = await loop.create_connection(
                    lambda: Connection(key, self._pool.discard),
                    host=address,
                    port=port,
                    ssl=self._tls() if tls else None,
                    server_hostname=host if tls else None,
                )
                return connection
            except OSError as error:  # ssl.SSLError is an OSError too
                failure = error
        assert failure is not None
        raise failure

    def _head(self, method: str, target: Target, headers: Mapping[str, str], body: bytes | None) -> bytes:
        lines = [f"{method} {target.path} HTTP/1.1\r\nHost: {target.host_header}\r\n"]
        accept = authorization = False
        for name, value in headers.items():
            lowered = name.lower()
            if lowered in FRAMING_HEADERS:
                continue
            if not name or UNSENDABLE_NAME.search(name) or UNSENDABLE_VALUE.search(value):
                raise ReceiverCallError("other", f"header {name!r} cannot be sent")
            accept = accept or lowered == "accept"
            authorization = authorization or lowered == "authorization"
            lines.append(f"{name}: {value}\r\n")
        if not accept:
            lines.append("Accept: */*\r\n")
        if target.authorization is not None and not authorization:
            lines.append(f"Authorization: {target.authorization}\r\n")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}\r\n")
        elif method in BODY_METHODS:
            lines.append("Content-Length: 0\r\n")
        lines.append("\r\n")
        return "".join(lines).encode("utf-8")

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        """One POST; raises TargetRefused or ReceiverCallError when there is no answer."""
        return await self.request("POST", url, body=body, headers=headers)

    async def request(
        self,
        method: str,
        url: str,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str],
        timeout_s: float | None = None,
        read_bytes: int | None = None,
    ) -> Answer:
        """One call; raises TargetRefused or ReceiverCallError when there is no answer.
        `timeout_s` replaces the client's timeout for this call, `read_bytes` its excerpt cap."""
        target = await self._checked_url(url)
        method = method.upper()
        head = self._head(method, target, headers, body)
        limit = self.excerpt_bytes if read_bytes is None else read_bytes
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.timeout_s if timeout_s is None else timeout_s)
        pool = self._pool
        while True:
            connection = pool.idle(target.key)
            if connection is None:
                try:
                    async with asyncio.timeout_at(deadline):
                        connection = await pool.open(target.key)
                except TargetRefused:
                    raise
                except Exception as error:
                    raise ReceiverCallError(_connect_error_kind(error), repr(error)) from error
            timer = loop.call_at(deadline, connection.expire)
            try:
                answer = await connection.send(head, body, limit=limit, head_only=method == "HEAD")
            except ConnectionBroken as broken:
                pool.discard(connection)
                if broken.stale:
                    continue  # found closed before anything was written: on a new connection
                kind = "protocol" if broken.parse_error or not broken.reset else "network"
                raise ReceiverCallError(kind, str(broken)) from broken
            except TimeoutError as error:
                pool.discard(connection)
                raise ReceiverCallError("timeout", repr(error)) from error
            except BaseException:
                pool.discard(connection)  # cancelled mid-exchange: the connection's state is unknown
                raise
            finally:
                timer.cancel()
            pool.release(connection)
            return answer

    async def close(self) -> None:
        self._pool.close()
