"""Which addresses and host names a target may name: address classification and the operator's allow-list.

An address is public unicast or it has a category ("loopback", "private", "cloud metadata", ...)
in every spelling a resolver accepts (numeric IPv4 forms, IPv6 forms carrying an IPv4 address);
the allow-list lets chosen networks and names through.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

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

LOCALHOST_ADDRESSES = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))

_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")


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
