"""Connecting only to checked addresses: an httpx transport for HTTP clients, a socket for SMTP."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import TYPE_CHECKING

import httpcore
import httpx

from herald.webhooks.target_guard.refusals import (
    MALFORMED,
    NOT_HTTP,
    SCHEMES,
    NameNotResolved,
    Problem,
    ResolutionFailed,
    TargetRefused,
)

if TYPE_CHECKING:
    from herald.webhooks.target_guard.policy import TargetGuard


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves, checks and connects in one step, so the address connected to is the one checked."""

    def __init__(self, guard: TargetGuard) -> None:
        self._guard = guard
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self._guard.addresses_for(host, port)
        except ResolutionFailed as error:
            raise NameNotResolved(str(error)) from None
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectError as error:
                failure = error  # refused or unreachable: the next checked address may answer
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise TargetRefused(Problem("malformed", MALFORMED))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, with its connection pool built on the guarded network backend.

    No proxy (a proxy would resolve the name itself, past the guard) and no environment
    settings. TLS keeps the URL's host name for SNI and certificate verification because httpcore
    takes them from the request, not from the address the backend connected to.
    """

    def __init__(self, guard: TargetGuard, *, verify: ssl.SSLContext | bool, limits: httpx.Limits, http2: bool) -> None:
        super().__init__(verify=verify, limits=limits, http2=http2, trust_env=False)
        context = verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify, trust_env=False)
        # httpx offers no way to pass a network backend, so the pool is rebuilt with the same
        # settings; tests/webhooks prove the guard is the one connecting.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=http2,
            network_backend=_GuardedBackend(guard),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme not in SCHEMES:
            raise TargetRefused(Problem("scheme", NOT_HTTP))
        return await super().handle_async_request(request)


async def connect_socket(guard: TargetGuard, host: str, port: int, timeout_s: float) -> socket.socket:
    """A connected, non-blocking TCP socket to a checked address of `host`, for clients that
    take a socket (aiosmtplib's `sock=`) and keep the host name for TLS themselves.

    Raises TargetRefused (a policy decision), ResolutionFailed (DNS), or OSError / TimeoutError
    when no checked address answers."""
    addresses = await guard.addresses_for(host, port)
    loop = asyncio.get_running_loop()
    failure: BaseException | None = None
    for address in addresses:
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            async with asyncio.timeout(timeout_s):
                await loop.sock_connect(sock, (str(address), port))
        except (OSError, TimeoutError) as error:
            sock.close()
            failure = error  # refused or unreachable: the next checked address may answer
            continue
        except BaseException:
            sock.close()
            raise
        return sock
    assert failure is not None
    raise failure
