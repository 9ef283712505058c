"""The target guard's decisions: which URLs and addresses it refuses, what the allow-list opens,
and what tenants are told. No connection is made to any address here; names are answered by a
stand-in DNS."""

from __future__ import annotations

import ipaddress

import pytest

from herald.webhooks.target_guard import (
    NAME_NOT_PUBLIC,
    AllowList,
    TargetGuard,
    literal_address,
    non_public_category,
)
from tests.webhooks.local_servers import StandInDNS

REFUSED = [
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),
    ("10.0.0.1", "private"),
    ("10.255.255.255", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.168.0.1", "private"),
    ("192.168.255.255", "private"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("169.254.0.1", "link-local"),
    ("169.254.255.255", "link-local"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.170.2", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("192.0.0.192", "cloud metadata"),
    ("100.64.0.1", "shared (CGNAT)"),
    ("100.127.255.255", "shared (CGNAT)"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.0.8", "reserved"),
    ("192.0.2.1", "reserved"),
    ("198.18.0.1", "reserved"),
    ("198.51.100.1", "reserved"),
    ("203.0.113.1", "reserved"),
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("fe80::1", "link-local"),
    ("febf:ffff::1", "link-local"),
    ("fc00::1", "private"),
    ("fd12:3456:789a::1", "private"),
    ("fec0::1", "private"),
    ("fd00:ec2::254", "cloud metadata"),
    ("ff02::1", "multicast"),
    ("ff0e::1", "multicast"),
    ("2001:db8::1", "reserved"),
    ("2001::1", "reserved"),  # Teredo
    ("100::1", "reserved"),  # discard-only
    ("64:ff9b:1::1", "private"),  # local-use NAT64
    ("::127.0.0.1", "reserved"),  # IPv4-compatible, deprecated
    ("::ffff:0:a00:1", "reserved"),  # IPv4-translated
    # IPv6 forms leading to an IPv4 address are judged by that address.
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("::ffff:100.100.100.200", "cloud metadata"),
    ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
    ("64:ff9b::a9fe:a9fe", "cloud metadata"),  # NAT64 of 169.254.169.254
    ("2002:a00:1::1", "private"),  # 6to4 of 10.0.0.1
    ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
]

PUBLIC = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",  # just below CGNAT
    "100.128.0.0",  # just above it
    "172.15.255.255",
    "172.32.0.0",
    "169.253.255.255",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2002:808:808::1",  # 6to4 of 8.8.8.8
]


@pytest.mark.parametrize(("address", "category"), REFUSED)
def test_each_non_public_range_is_refused(address: str, category: str) -> None:
    ip = ipaddress.ip_address(address)
    assert non_public_category(ip) == category
    guard = TargetGuard()
    assert guard.address_problem(ip) == category
    host = f"[{address}]" if ip.version == 6 else address
    problem = guard.check_url(f"https://{host}/hook")
    assert problem is not None and problem.code == "non_public"
    assert category in problem.detail


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    ip = ipaddress.ip_address(address)
    assert non_public_category(ip) is None
    host = f"[{address}]" if ip.version == 6 else address
    assert TargetGuard().check_url(f"http://{host}:8080/hook") is None


def test_zone_index_does_not_hide_a_link_local_address() -> None:
    assert non_public_category(ipaddress.ip_address("fe80::1%eth0")) == "link-local"
    assert non_public_category(ipaddress.ip_address("fd00:ec2::254%1")) == "cloud metadata"


@pytest.mark.parametrize(
    ("host", "meant"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("10.1", "10.0.0.1"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("2852039166", "169.254.169.254"),
        ("127.0.0.1.", "127.0.0.1"),
    ],
)
def test_numeric_spellings_of_an_address_are_caught(host: str, meant: str) -> None:
    """What the C resolver would connect to, the guard judges."""
    assert literal_address(host) == ipaddress.ip_address(meant)
    problem = TargetGuard().check_url(f"http://{host}/")
    assert problem is not None and problem.code == "non_public"


@pytest.mark.parametrize(
    "url",
    [
        "",
        "example.com/hook",
        "ftp://example.com/",
        "file:///etc/passwd",
        "gopher://example.com/",
        "ws://example.com/",
        "javascript:alert(1)",
    ],
)
def test_only_http_and_https(url: str) -> None:
    problem = TargetGuard().check_url(url)
    assert problem is not None and problem.code == "scheme"


@pytest.mark.parametrize(
    "url",
    [
        "http://",
        "http:///hook",
        "http://:80/",
        "http://a b/",
        "http://exa%6dple.com/",
        "http://example.123/",  # ends in a number, so an (invalid) address, as browsers read it
        "http://1.2.3.4.5/",
        "http://256.1.1.1/",
        "http://0177.0.0.1/",
        "http://example.com:0/",
        "http://example.com:65536/",
        "http://-example.com/",
        "http://exa_mple..com/",
        "http://[::1/",
    ],
)
def test_malformed_urls(url: str) -> None:
    problem = TargetGuard().check_url(url)
    assert problem is not None and problem.code == "malformed"


@pytest.mark.parametrize(
    "url",
    ["http://localhost/", "http://LOCALHOST.:8080/", "http://api.localhost/", "http://metadata.google.internal/"],
)
def test_names_known_to_be_internal_are_refused_without_dns(url: str) -> None:
    problem = TargetGuard().check_url(url)
    assert problem is not None and problem.code == "non_public" and problem.detail == NAME_NOT_PUBLIC


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com@127.0.0.1/",
        "http://hooks.example.com:443@10.0.0.1/",
        "http://hooks.example.com\\@169.254.169.254/",
        "http://[::ffff:a9fe:a9fe]/",
    ],
)
def test_the_host_is_read_as_the_sender_reads_it(url: str) -> None:
    """Parsed by httpx, as the request will be: user-info and backslash tricks do not hide the host."""
    problem = TargetGuard().check_url(url)
    assert problem is not None and problem.code == "non_public"


def test_ordinary_names_pass_the_check_without_dns() -> None:
    guard = TargetGuard()
    assert guard.check_url("https://hooks.example.com/in?x=1") is None
    assert guard.check_url("https://exämple.com/") is None  # IDNA, judged as its xn-- form


def test_loopback_allowance_opens_loopback_only() -> None:
    guard = TargetGuard(AllowList.parse("", loopback=True))
    for url in ("http://127.0.0.1:8080/", "http://127.9.9.9/", "http://[::1]/", "http://[::ffff:127.0.0.1]/"):
        assert guard.check_url(url) is None, url
    assert guard.check_url("http://localhost:8080/") is None
    for url in ("http://10.0.0.1/", "http://169.254.169.254/", "http://0.0.0.0/", "http://[fe80::1]/"):
        assert guard.check_url(url) is not None, url


def test_allow_list_networks() -> None:
    guard = TargetGuard(AllowList.parse("10.1.0.0/16, fd00:abcd::/32 192.168.7.7"))
    assert guard.check_url("http://10.1.2.3/") is None
    assert guard.check_url("http://[fd00:abcd::5]/") is None
    assert guard.check_url("http://192.168.7.7/") is None
    assert guard.check_url("http://[::ffff:10.1.2.3]/") is None
    assert guard.check_url("http://10.2.0.1/") is not None
    assert guard.check_url("http://192.168.7.8/") is not None
    assert guard.check_url("http://127.0.0.1/") is not None
    assert guard.check_url("https://example.com/") is None  # public stays public


def test_metadata_needs_its_own_entry() -> None:
    """Allowing a whole range (link-local, or a tailnet's 100.64/10) does not open the metadata service."""
    broad = TargetGuard(AllowList.parse("169.254.0.0/16,100.64.0.0/10,fd00::/8"))
    assert broad.check_url("http://169.254.1.2/") is None
    assert broad.check_url("http://100.101.102.103/") is None
    for url in ("http://169.254.169.254/", "http://100.100.100.200/", "http://[fd00:ec2::254]/"):
        problem = broad.check_url(url)
        assert problem is not None and "cloud metadata" in problem.detail
    exact = TargetGuard(AllowList.parse("169.254.169.254"))
    assert exact.check_url("http://169.254.169.254/latest/meta-data/") is None


def test_allow_list_host_names() -> None:
    allow = AllowList.parse("receiver.internal, *.svc.cluster.local, Hooks.Example.")
    assert allow.permits_name("receiver.internal")
    assert allow.permits_name("RECEIVER.INTERNAL.")
    assert allow.permits_name("billing.default.svc.cluster.local")
    assert not allow.permits_name("svc.cluster.local")
    assert not allow.permits_name("evilsvc.cluster.local")
    assert allow.permits_name("hooks.example")
    assert not allow.permits_name("other.internal")
    assert TargetGuard(AllowList.parse("localhost")).check_url("http://localhost:9000/") is None


@pytest.mark.parametrize("entry", ["10.0.0.1/8", "not a name!", "127.1", "http://x", "*.", "10.0.0.0/33"])
def test_bad_allow_list_entries_fail_loudly(entry: str) -> None:
    with pytest.raises(ValueError, match="allow-list entry"):
        AllowList.parse(entry)


async def test_names_resolving_privately_are_refused() -> None:
    dns = StandInDNS(
        {
            "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
            "internal.example": ["10.0.0.7"],
            "meta.example": ["169.254.169.254"],
            "mixed.example": ["93.184.215.14", "192.168.1.1"],
            "mapped.example": ["::ffff:127.0.0.1"],
        }
    )
    guard = TargetGuard(resolver=dns)
    assert await guard.check_url_resolved("https://public.example/hook") is None
    for name in ("internal.example", "meta.example", "mixed.example", "mapped.example"):
        problem = await guard.check_url_resolved(f"https://{name}/hook")
        assert problem is not None and problem.code == "non_public", name
        # Tenants learn that it is refused, not where the name points.
        assert problem.detail == NAME_NOT_PUBLIC
        assert all(a not in problem.detail for a in dns.answers[name])


async def test_unresolvable_names_say_no_more_than_private_ones() -> None:
    guard = TargetGuard(resolver=StandInDNS())
    problem = await guard.check_url_resolved("https://nowhere.example/")
    assert problem is not None and problem.code == "unresolvable" and problem.detail == NAME_NOT_PUBLIC


async def test_a_resolver_that_hangs_counts_as_unresolvable() -> None:
    async def never(host: str, port: int) -> list[str]:
        import asyncio

        await asyncio.Event().wait()
        return []

    guard = TargetGuard(resolver=never, resolve_timeout_s=0.01)
    problem = await guard.check_url_resolved("https://slow.example/")
    assert problem is not None and problem.code == "unresolvable"


async def test_resolved_check_honours_the_allow_list() -> None:
    dns = StandInDNS({"receiver.internal": ["10.0.0.7"], "other.internal": ["10.0.0.8"], "tail.example": ["10.9.0.1"]})
    guard = TargetGuard(AllowList.parse("receiver.internal 10.9.0.0/16"), resolver=dns)
    assert await guard.check_url_resolved("http://receiver.internal:8080/") is None
    assert await guard.check_url_resolved("http://tail.example/") is None
    assert await guard.check_url_resolved("http://other.internal/") is not None
    # The cheap checks still run first, and address literals need no DNS.
    assert (await guard.check_url_resolved("ftp://receiver.internal/")) is not None
    questions = len(dns.questions)
    assert await guard.check_url_resolved("http://10.0.0.1/") is not None
    assert len(dns.questions) == questions


async def test_addresses_for_reports_every_checked_address_in_order() -> None:
    dns = StandInDNS({"dual.example": ["2606:4700:4700::1111", "1.1.1.1", "1.1.1.1"]})
    guard = TargetGuard(resolver=dns)
    found = await guard.addresses_for("DUAL.example.", 443)
    assert found == [ipaddress.ip_address("2606:4700:4700::1111"), ipaddress.ip_address("1.1.1.1")]
