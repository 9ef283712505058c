"""The guard's policy: a URL's or host's checks at submit time, and the addresses a connection may use."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import httpx

from herald.webhooks.target_guard.addresses import (
    LOCALHOST_ADDRESSES,
    METADATA_NAMES,
    AllowList,
    IPAddress,
    is_host_name,
    is_localhost_name,
    literal_address,
    non_public_category,
    normalise_name,
)
from herald.webhooks.target_guard.refusals import (
    MALFORMED,
    NAME_NOT_PUBLIC,
    NOT_HTTP,
    SCHEMES,
    Problem,
    ResolutionFailed,
    TargetRefused,
)
from herald.webhooks.target_guard.transport import GuardedTransport

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
DEFAULT_RESOLVE_TIMEOUT_S = 5.0


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """The operating system's resolver, without blocking the event loop."""
    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in found]


@dataclass(frozen=True)
class _Target:
    name: str  # lower case, no trailing dot
    port: int
    address: IPAddress | None


def _parse(url: str) -> _Target | Problem:
    """Parses with httpx, the parser the sender itself uses, so the check and the request can
    never disagree about which host a URL names."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return Problem("malformed", MALFORMED)
    if parsed.scheme not in SCHEMES:
        return Problem("scheme", NOT_HTTP)
    try:
        host = parsed.raw_host.decode("ascii")
        port = parsed.port if parsed.port is not None else (443 if parsed.scheme == "https" else 80)
        address = literal_address(host)
    except (UnicodeDecodeError, ValueError):
        return Problem("malformed", MALFORMED)
    name = normalise_name(host)
    if not 0 < port < 65536 or (address is None and not is_host_name(name)):
        return Problem("malformed", MALFORMED)
    return _Target(name, port, address)


@dataclass(frozen=True)
class TargetGuard:
    """The policy, a resolver, and the checks built from them. Resolver injectable for tests."""

    allow: AllowList = field(default_factory=AllowList)
    resolver: Resolver = system_resolver
    resolve_timeout_s: float = DEFAULT_RESOLVE_TIMEOUT_S

    def address_problem(self, ip: IPAddress) -> str | None:
        """The category that refuses `ip`, or None when it is public or allow-listed."""
        why = non_public_category(ip)
        if why is None or self.allow.permits_address(ip):
            return None
        return why

    def check_url(self, url: str) -> Problem | None:
        """Submit-time check without DNS: scheme, host syntax, address literals in every
        spelling, `localhost` names and known metadata names."""
        target = _parse(url)
        if isinstance(target, Problem):
            return target
        return self._check_without_dns(target)

    async def check_url_resolved(self, url: str) -> Problem | None:
        """`check_url`, then every address the name resolves to. Code "unresolvable" when it
        does not resolve (the caller may accept that and leave it to send time)."""
        target = _parse(url)
        if isinstance(target, Problem):
            return target
        problem = self._check_without_dns(target)
        if problem is not None or target.address is not None or self.allow.permits_name(target.name):
            return problem
        try:
            addresses = await self._resolve(target.name, target.port)
        except ResolutionFailed:
            return Problem("unresolvable", NAME_NOT_PUBLIC)
        if any(self.address_problem(ip) for ip in addresses):
            return Problem("non_public", NAME_NOT_PUBLIC)
        return None

    def _check_without_dns(self, target: _Target) -> Problem | None:
        if target.address is not None:
            why = self.address_problem(target.address)
            return None if why is None else Problem("non_public", f"points at a non-public address ({why})")
        if self.allow.permits_name(target.name):
            return None
        if is_localhost_name(target.name):
            if any(self.address_problem(ip) for ip in LOCALHOST_ADDRESSES):
                return Problem("non_public", NAME_NOT_PUBLIC)
            return None
        if target.name in METADATA_NAMES:
            return Problem("non_public", NAME_NOT_PUBLIC)
        return None

    async def _resolve(self, name: str, port: int) -> list[IPAddress]:
        try:
            async with asyncio.timeout(self.resolve_timeout_s):
                answers = await self.resolver(name, port)
            addresses = list(dict.fromkeys(ipaddress.ip_address(a) for a in answers))
        except (OSError, TimeoutError, ValueError) as error:
            raise ResolutionFailed(NAME_NOT_PUBLIC) from error
        if not addresses:
            raise ResolutionFailed(NAME_NOT_PUBLIC)
        return addresses

    async def addresses_for(self, host: str, port: int) -> list[IPAddress]:
        """The addresses a connection to `host` may use, every one of them checked.

        Raises TargetRefused when the host is malformed or any address is refused (a name with
        one public and one private answer is refused whole), ResolutionFailed when it does not
        resolve.
        """
        name = normalise_name(host)
        try:
            address = literal_address(name)
        except ValueError:
            raise TargetRefused(Problem("malformed", MALFORMED)) from None
        if address is not None:
            why = self.address_problem(address)
            if why is not None:
                raise TargetRefused(Problem("non_public", f"points at a non-public address ({why})"))
            return [address]
        if not is_host_name(name):
            raise TargetRefused(Problem("malformed", MALFORMED))
        addresses = await self._resolve(name, port)
        if not self.allow.permits_name(name) and any(self.address_problem(ip) for ip in addresses):
            raise TargetRefused(Problem("non_public", NAME_NOT_PUBLIC))
        return addresses

    def transport(
        self,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits | None = None,
        http2: bool = False,
    ) -> GuardedTransport:
        """An httpx transport that connects only to addresses this guard permits. Give it to
        `httpx.AsyncClient(transport=...)`; connection limits belong here, not to the client."""
        return GuardedTransport(self, verify=verify, limits=limits or httpx.Limits(), http2=http2)


async def check_host_resolved(guard: TargetGuard, host: str, port: int) -> Problem | None:
    """`TargetGuard.check_url_resolved` for a bare host and port (an SMTP relay)."""
    if not 0 < port < 65536:
        return Problem("malformed", MALFORMED)
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    if any(c in shown for c in "/?#@\\ \t\r\n"):
        return Problem("malformed", MALFORMED)
    return await guard.check_url_resolved(f"http://{shown}:{port}/")
