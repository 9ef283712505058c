"""Refuses webhook targets (and provider base URLs) that point into Herald's own network.

Tenants choose the URLs Herald POSTs to, so without a guard any tenant could make Herald call
its cloud's metadata service, an admin port on a private address or anything else the sender
can reach (server-side request forgery). The rule: only http(s), and every address the host
resolves to must be public unicast, unless the operator allow-listed it.

It is checked twice:
- when a URL is submitted, so the tenant gets a clear refusal: `TargetGuard.check_url` (no
  DNS, cheap enough for any validation path) and `TargetGuard.check_url_resolved` (also
  resolves the name);
- when connecting, through `TargetGuard.transport()`: the name is resolved once, every address
  is checked, and the socket goes to a checked address while TLS (SNI and certificate check)
  and the Host header keep using the name. A name that resolved to a public address when it
  was submitted and resolves to a private one later (DNS rebinding) is refused then, and there
  is no second lookup between the check and the connect for an attacker to answer differently.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# (host, port) -> the addresses it resolves to, as text; raises OSError when it does not resolve.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

SCHEMES = frozenset({"http", "https"})
DEFAULT_RESOLVE_TIMEOUT_S = 5.0

# What tenants are told. Deliberately the same whether a name does not resolve or resolves
# somewhere private, and never the address itself: the refusal must not become a way to map
# Herald's internal DNS.
NAME_NOT_PUBLIC = "the host name does not resolve to a public address"
NOT_HTTP = "must be an http or https URL"
MALFORMED = "must be an absolute http or https URL with a valid host name and port"

METADATA_CATEGORY = "cloud metadata"
# Instance metadata services: AWS/GCP/Azure/OpenStack, AWS ECS task metadata, Alibaba Cloud,
# Oracle Cloud (legacy), AWS over IPv6.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192", "fd00:ec2::254")
)
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "instance-data.ec2.internal"})

_V4_RANGES: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "unspecified"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared (CGNAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "reserved"),
    ("192.0.2.0/24", "reserved"),
    ("192.88.99.0/24", "reserved"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "reserved"),
    ("198.51.100.0/24", "reserved"),
    ("203.0.113.0/24", "reserved"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),  # includes the broadcast address
)
_V6_RANGES: tuple[tuple[str, str], ...] = (
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("fe80::/10", "link-local"),
    ("fc00::/7", "private"),
    ("fec0::/10", "private"),  # site-local, deprecated but still routed by some networks
    ("ff00::/8", "multicast"),
    ("64:ff9b:1::/48", "private"),  # local-use NAT64
    ("2001::/23", "reserved"),  # IETF protocol assignments, Teredo among them
    ("2001:db8::/32", "reserved"),
    ("3fff::/20", "reserved"),
)
_V4_NETWORKS = tuple((ipaddress.IPv4Network(net), why) for net, why in _V4_RANGES)
_V6_NETWORKS = tuple((ipaddress.IPv6Network(net), why) for net, why in _V6_RANGES)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
LOOPBACK_NETWORKS: tuple[IPNetwork, ...] = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))

_LOCALHOST_ADDRESSES = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))

_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")


@dataclass(frozen=True)
class Problem:
    """Why a URL was refused: `code` for programs and logs, `detail` safe to show the tenant."""

    code: str  # "scheme", "malformed", "non_public" or "unresolvable"
    detail: str

    def __str__(self) -> str:
        return self.detail


class TargetRefused(httpx.RequestError):
    """Raised at send time for a target the guard refuses: a policy decision, so retrying cannot help."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"webhook target refused: {problem.detail}")
        self.problem = problem


class ResolutionFailed(Exception):
    """The name did not resolve (or not in time): at send time that is a transient network error."""


class NameNotResolved(httpcore.ConnectError):
    """What the guarded transport raises when the name did not resolve: a connect error to
    httpx (retried), recognisable as a DNS failure in the attempt record."""


def _plain(ip: IPAddress) -> IPAddress:
    """The address without an IPv6 zone (`fe80::1%eth0`), so set lookups compare numbers only."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        return ipaddress.IPv6Address(int(ip))
    return ip


def non_public_category(ip: IPAddress) -> str | None:
    """Why `ip` is not a public unicast address ("loopback", "private", "cloud metadata", ...), or None.

    IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
    `2002::/16`) are judged by the IPv4 address they lead to; everything else outside global
    unicast `2000::/3` is reserved.
    """
    ip = _plain(ip)
    if ip in METADATA_ADDRESSES:
        return METADATA_CATEGORY
    if isinstance(ip, ipaddress.IPv4Address):
        return next((why for net, why in _V4_NETWORKS if ip in net), None)
    if ip.ipv4_mapped is not None:
        return non_public_category(ip.ipv4_mapped)
    embedded = ip.sixtofour
    if embedded is None and ip in _NAT64:
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if embedded is not None and (why := non_public_category(embedded)) is not None:
        return why
    found = next((why for net, why in _V6_NETWORKS if ip in net), None)
    if found is None and ip not in _GLOBAL_UNICAST and ip not in _NAT64:
        return "reserved"
    return found


def _numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a numeric host means to the C resolver and to browsers ("2130706433",
    "0x7f.1" and "127.1" are all 127.0.0.1), or None if the host is not numeric. Raises
    ValueError when it looks numeric but is no address, as the URL standard does."""
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if not _NUMBER.fullmatch(parts[-1]):
        return None
    if len(parts) > 4 or not all(_NUMBER.fullmatch(p) for p in parts):
        raise ValueError("not an IPv4 address")
    values = []
    for part in parts:
        if part[:2].lower() == "0x":
            values.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *leading, last = values
    if any(v > 255 for v in leading) or last >= 256 ** (5 - len(values)):
        raise ValueError("not an IPv4 address")
    number = last + sum(v << (8 * (3 - i)) for i, v in enumerate(leading))
    return ipaddress.IPv4Address(number)


def literal_address(host: str) -> IPAddress | None:
    """The address when the host is written as one (in any form a resolver accepts), else None."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return _numeric_ipv4(host)


def literal_address_or_invalid(host: str) -> bool:
    """True when the host is an address or a malformed numeric one: either way, not a name."""
    try:
        return literal_address(host) is not None
    except ValueError:
        return True


def normalise_name(host: str) -> str:
    return host.lower().removesuffix(".")


def is_host_name(name: str) -> bool:
    return 0 < len(name) <= 253 and all(_LABEL.fullmatch(label) for label in name.split("."))


def is_localhost_name(name: str) -> bool:
    """RFC 6761: `localhost` and every name under it are loopback, whatever DNS says."""
    return name == "localhost" or name.endswith(".localhost")


@dataclass(frozen=True)
class AllowList:
    """What the operator lets targets reach despite the rules: networks and host names.

    A network permits every non-public address inside it except cloud-metadata addresses, which
    must be listed on their own (a /32 or /128 entry): allowing `169.254.0.0/16`, or Tailscale's
    `100.64.0.0/10`, must not open the metadata service by accident. A host name (exact, or
    `*.example.internal` for every name under it) is trusted wherever it resolves: that is how
    an operator lets a cluster-internal receiver through.
    """

    networks: tuple[IPNetwork, ...] = ()
    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, entries: str | Iterable[str], *, loopback: bool = False) -> AllowList:
        """From settings: CIDRs, addresses and host names separated by commas or spaces.

        Raises ValueError on an entry that is none of those, or a network with host bits set
        (`10.0.0.1/8` is more likely a typo than a wish), so a bad setting fails at startup.
        """
        items = re.split(r"[\s,]+", entries) if isinstance(entries, str) else list(entries)
        networks: list[IPNetwork] = list(LOOPBACK_NETWORKS) if loopback else []
        names: set[str] = set()
        suffixes: list[str] = []
        for item in items:
            entry = item.strip().lower()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry))
                continue
            except ValueError:
                pass
            wildcard = entry.startswith("*.")
            name = normalise_name(entry[2:] if wildcard else entry)
            if not is_host_name(name) or literal_address_or_invalid(name):
                raise ValueError(f"allow-list entry {item!r} is not a network, an address or a host name")
            if wildcard:
                suffixes.append("." + name)
            else:
                names.add(name)
        return cls(tuple(networks), frozenset(names), tuple(suffixes))

    def permits_name(self, name: str) -> bool:
        name = normalise_name(name)
        return name in self.names or name.endswith(self.suffixes)

    def permits_address(self, ip: IPAddress) -> bool:
        ip = _plain(ip)
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        metadata = ip in METADATA_ADDRESSES
        return any(
            ip.version == net.version and ip in net and (not metadata or net.num_addresses == 1)
            for net in self.networks
        )


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
            if any(self.address_problem(ip) for ip in _LOCALHOST_ADDRESSES):
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
