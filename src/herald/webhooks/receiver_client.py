"""The HTTP client the senders call tenant-aimed endpoints with: aiohttp behind the target guard.

The webhook-sender POSTs to receivers with it; the email-sender calls its providers' HTTP APIs
(sends, credential checks, domain calls) with it, because a provider's base URL is as
tenant-aimed as a webhook URL. Built for throughput: measured with `bench/client_cost.py` (one
process on uvloop, 5 POSTs in flight over keep-alive to a local receiver), httpx costs about
0.95 ms of CPU per POST and aiohttp about 0.10 ms. Delivery is Herald's main job, so both
senders use aiohttp; the target guard's httpx transport (`TargetGuard.transport`) stays for
the other callers.

Every guarantee of the guard holds here, through the guard's own functions:
- names are resolved by `TargetGuard.addresses_for` inside a custom aiohttp resolver, so every
  address a new connection may use is checked, and the connection goes to one of those checked
  addresses (no second lookup for a rebinding name server to answer differently);
- address literals, which aiohttp connects to without asking a resolver, are checked before the
  request by the same function; legacy numeric spellings (`2130706433`, `127.1`) are checked as
  the address they mean and sent to it, with the Host header as written;
- TLS keeps the URL's host name for SNI and certificate verification, and the Host header is the
  name: aiohttp takes both from the URL, not from the address it connected to;
- no redirects are followed, no proxy or settings are taken from the environment
  (`trust_env=False`), and no cookies are kept between receivers;
- one timeout bounds the whole call (connect, send, answer, excerpt); connections are kept
  alive per target (host, port, TLS) in one pool of `connections`;
- at most `excerpt_bytes` of the answer's body are read (or the call's own `read_bytes`): a
  receiver cannot make us read more.

Without a guard (`guard=None`) the client checks only the URL's form: that is for endpoints the
operator configured (platform email's provider), which may well sit on a private network.

Failures come back as `ReceiverCallError` with the class the attempt record and the retry
policy use (`herald.webhooks.retry_policy`), or as `TargetRefused`.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from multidict import CIMultiDict
from yarl import URL

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

DEFAULT_EXCERPT_BYTES = 4096
# URLs whose parse and literal check are remembered: a sender calls the same few targets.
CHECKED_URLS_KEPT = 1024


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


class GuardedResolver(AbstractResolver):
    """aiohttp asks this for the addresses of a name when it opens a connection: the guard
    resolves and checks them, and only checked addresses come back."""

    def __init__(self, guard: TargetGuard) -> None:
        self._guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            addresses = await self._guard.addresses_for(host, port)
        except ResolutionFailed as error:
            # An OSError is what aiohttp turns into its DNS error (a transient "dns" failure).
            raise OSError(str(error)) from None
        return [
            {
                "hostname": host,
                "host": str(address),
                "port": port,
                "family": socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                "proto": socket.IPPROTO_TCP,
                "flags": socket.AI_NUMERICHOST,
            }
            for address in addresses
        ]

    async def close(self) -> None:
        return None


def _error_kind(error: BaseException) -> str:
    """aiohttp's exceptions in the retry policy's vocabulary (see `retry_policy.error_class`)."""
    if isinstance(error, TimeoutError):  # aiohttp's timeouts are TimeoutErrors too
        return "timeout"
    if isinstance(error, aiohttp.InvalidURL):
        return "invalid_url"
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        return "dns"
    if isinstance(error, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError | ssl.SSLError):
        return "tls"
    if isinstance(error, aiohttp.ClientConnectorError):
        return "connect"
    if isinstance(error, aiohttp.ServerDisconnectedError | aiohttp.ClientResponseError | aiohttp.ClientPayloadError):
        return "protocol"
    if isinstance(error, aiohttp.ClientOSError | OSError):
        return "network"
    return "other"


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
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.connections = connections
        self.ssl_context = ssl_context
        self.excerpt_bytes = excerpt_bytes
        self._session: aiohttp.ClientSession | None = None
        # A call's own timeout, made once per value.
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        # url -> (what to request, the Host header to send or None). The guard's policy is
        # fixed for its life, so a literal's verdict cannot change; names are checked per
        # connection by the resolver whatever is remembered here.
        self._checked: dict[str, tuple[URL, str | None]] = {}

    def _open(self) -> aiohttp.ClientSession:
        """The session, made on first use (aiohttp wants a running loop for it)."""
        if self._session is None:
            guarded = self.guard is not None
            connector = aiohttp.TCPConnector(
                resolver=GuardedResolver(self.guard) if self.guard is not None else None,
                # Guarded, every new connection asks the guard, as a rebinding check must.
                use_dns_cache=not guarded,
                limit=self.connections,
                limit_per_host=0,
                ssl=self.ssl_context if self.ssl_context is not None else True,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self.timeout,
                trust_env=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                raise_for_status=False,
            )
        return self._session

    async def _checked_url(self, url: str) -> tuple[URL, str | None]:
        """What to request for `url` and the Host header it needs, refused when the guard
        would refuse it. A host written as an address is checked here (aiohttp connects to
        literals without a resolver) and sent to the address it means; names are checked by
        `GuardedResolver` whenever a connection is opened."""
        found = self._checked.get(url)
        if found is None:
            found = await self._check(url)
            if len(self._checked) >= CHECKED_URLS_KEPT:
                self._checked.clear()
            self._checked[url] = found
        return found

    async def _check(self, url: str) -> tuple[URL, str | None]:
        try:
            parsed = URL(url)
            host = parsed.raw_host
        except (ValueError, TypeError):
            raise TargetRefused(Problem("malformed", MALFORMED)) from None
        if parsed.scheme not in SCHEMES:
            raise TargetRefused(Problem("scheme", NOT_HTTP))
        if not host or parsed.port is None:
            raise TargetRefused(Problem("malformed", MALFORMED))
        try:
            address = literal_address(host)
        except ValueError:
            raise TargetRefused(Problem("malformed", MALFORMED)) from None
        if address is None:
            if ":" in host or host.replace(".", "").isdigit():
                raise TargetRefused(Problem("malformed", MALFORMED))
            return parsed, None
        if self.guard is not None:
            [address] = await self.guard.addresses_for(str(address), parsed.port)
        canonical = str(address)
        if canonical != host:
            # A legacy spelling aiohttp would not connect to: the checked address, the Host as written.
            return parsed.with_host(canonical), parsed.raw_authority
        return parsed, None

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
        target, host = await self._checked_url(url)
        sending = CIMultiDict(headers)
        if host is not None:
            sending["host"] = host
        limit = self.excerpt_bytes if read_bytes is None else read_bytes
        try:
            async with self._open().request(
                method,
                target,
                data=body,
                headers=sending,
                allow_redirects=False,
                proxy=None,
                timeout=self._timeout(timeout_s),
            ) as response:
                excerpt = bytearray()
                while len(excerpt) < limit:
                    chunk = await response.content.read(limit - len(excerpt))
                    if not chunk:
                        break
                    excerpt += chunk
                return Answer(response.status, list(response.headers.items()), bytes(excerpt))
        except TargetRefused:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as error:
            raise ReceiverCallError(_error_kind(error), repr(error)) from error

    def _timeout(self, timeout_s: float | None) -> aiohttp.ClientTimeout:
        if timeout_s is None:
            return self.timeout
        found = self._timeouts.get(timeout_s)
        if found is None:
            found = self._timeouts[timeout_s] = aiohttp.ClientTimeout(total=timeout_s)
        return found

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
