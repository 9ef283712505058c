"""The guard at send time, against real servers on loopback addresses.

Loopback stands in for the private network an attacker wants to reach, and the stand-in DNS
plays the attacker's name server. Where a test needs "a public address" as the answer at check
time, no connection is ever made to it: the point is that the later answer is what counts."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from herald.webhooks.target_guard import AllowList, TargetGuard, TargetRefused
from tests.webhooks.local_servers import LocalServer, StandInDNS, make_authority, server_pair

PUBLIC = "93.184.215.14"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    running = LocalServer("127.0.0.1").start()
    yield running
    running.stop()


def client(guard: TargetGuard, **options: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=guard.transport(), timeout=5, **options)  # type: ignore[arg-type]


async def test_a_permitted_name_reaches_its_checked_address_with_its_own_host_header(server: LocalServer) -> None:
    dns = StandInDNS({"hooks.example.test": ["127.0.0.1"]})
    guard = TargetGuard(AllowList.parse("", loopback=True), resolver=dns)
    async with client(guard) as http:
        answer = await http.post(f"http://hooks.example.test:{server.port}/in", content=b"payload")
    assert answer.status_code == 204
    [seen] = server.requests
    assert seen.headers["host"] == f"hooks.example.test:{server.port}"
    assert (seen.path, seen.body) == ("/in", b"payload")


async def test_dns_rebinding_after_the_submit_check_is_refused_at_send_time(server: LocalServer) -> None:
    """Public when the tenant submitted the URL, loopback when Herald sends: nothing arrives."""
    dns = StandInDNS({"rebind.example.test": [PUBLIC]})
    guard = TargetGuard(resolver=dns)
    url = f"http://rebind.example.test:{server.port}/in"
    assert await guard.check_url_resolved(url) is None

    dns.answers["rebind.example.test"] = ["127.0.0.1"]
    async with client(guard) as http:
        with pytest.raises(TargetRefused) as refused:
            await http.post(url, content=b"secret-stealing attempt")
    assert server.requests == []
    assert refused.value.problem.code == "non_public"
    assert "127.0.0.1" not in str(refused.value)

    # The same answer is fine once the operator allow-lists loopback.
    allowed = TargetGuard(AllowList.parse("127.0.0.0/8"), resolver=dns)
    async with client(allowed) as http:
        assert (await http.post(url, content=b"hello")).status_code == 204
    assert [r.body for r in server.requests] == [b"hello"]


async def test_the_address_checked_is_the_address_connected_to() -> None:
    """127.0.0.1 plays the permitted address and 127.0.0.2 the forbidden one, on the same port.

    The stand-in DNS answers the permitted address to the first question and the forbidden one
    to every later question. A guard that checked, then let the connection look the name up
    again, would reach 127.0.0.2; this one asks once and connects to what it checked.
    """
    permitted, forbidden = server_pair("127.0.0.1", "127.0.0.2")
    try:

        class Flipping(StandInDNS):
            async def __call__(self, host: str, port: int) -> list[str]:
                self.questions.append(host)
                return ["127.0.0.1"] if len(self.questions) == 1 else ["127.0.0.2"]

        dns = Flipping()
        guard = TargetGuard(AllowList.parse("127.0.0.1/32"), resolver=dns)
        url = f"http://flip.example.test:{permitted.port}/in"
        async with client(guard) as http:
            assert (await http.post(url, content=b"one")).status_code == 204
        assert dns.questions == ["flip.example.test"]
        assert [r.body for r in permitted.requests] == [b"one"]

        async with client(guard) as http:  # a new connection asks again, and is refused
            with pytest.raises(TargetRefused):
                await http.post(url, content=b"two")
        assert forbidden.requests == []
    finally:
        permitted.stop()
        forbidden.stop()


async def test_address_literals_are_checked_at_send_time(server: LocalServer) -> None:
    dns = StandInDNS()
    for url in (
        f"http://127.0.0.1:{server.port}/",
        f"http://2130706433:{server.port}/",
        f"http://127.1:{server.port}/",
        f"http://[::ffff:127.0.0.1]:{server.port}/",
    ):
        async with client(TargetGuard(resolver=dns)) as http:
            with pytest.raises(TargetRefused):
                await http.post(url, content=b"x")
    assert server.requests == []
    assert dns.questions == []  # literals never reach DNS
    async with client(TargetGuard(AllowList.parse("127.0.0.1"), resolver=dns)) as http:
        assert (await http.post(f"http://2130706433:{server.port}/", content=b"x")).status_code == 204


async def test_a_name_with_one_forbidden_answer_is_refused_whole(server: LocalServer) -> None:
    dns = StandInDNS({"mixed.example.test": ["127.0.0.1", "127.0.0.2"]})
    guard = TargetGuard(AllowList.parse("127.0.0.1/32"), resolver=dns)
    async with client(guard) as http:
        with pytest.raises(TargetRefused):
            await http.post(f"http://mixed.example.test:{server.port}/", content=b"x")
    assert server.requests == []


async def test_redirects_are_checked_hop_by_hop_when_followed(server: LocalServer) -> None:
    """Redirects are off in the sender; should they ever be on, each hop still goes through the guard."""
    target = LocalServer("127.0.0.2").start()
    try:
        server.status = 307
        server.headers["location"] = f"http://127.0.0.2:{target.port}/inside"
        dns = StandInDNS({"hooks.example.test": ["127.0.0.1"]})
        guard = TargetGuard(AllowList.parse("hooks.example.test"), resolver=dns)
        async with client(guard, follow_redirects=True) as http:
            with pytest.raises(TargetRefused):
                await http.post(f"http://hooks.example.test:{server.port}/", content=b"x")
        assert len(server.requests) == 1 and target.requests == []
    finally:
        target.stop()


async def test_a_name_that_does_not_resolve_is_a_transient_connect_error(server: LocalServer) -> None:
    async with client(TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS())) as http:
        with pytest.raises(httpx.ConnectError) as failed:
            await http.post(f"http://gone.example.test:{server.port}/", content=b"x")
    assert not isinstance(failed.value, TargetRefused)


async def test_other_schemes_are_refused_by_the_transport() -> None:
    async with client(TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS())) as http:
        with pytest.raises(TargetRefused):
            await http.get("ws://127.0.0.1:9/")


async def test_tls_keeps_the_name_for_sni_and_the_certificate(tmp_path: Path) -> None:
    """Connected to 127.0.0.1, yet the handshake offers and verifies `hooks.example.test`,
    whose certificate names no address: verification would fail if the IP were used."""
    authority = make_authority(tmp_path, "hooks.example.test")
    server = LocalServer("127.0.0.1")
    server.serve_tls(authority.certificate, authority.key)
    server.start()
    try:
        trust = ssl.create_default_context(cafile=str(authority.ca_file))
        dns = StandInDNS({"hooks.example.test": ["127.0.0.1"]})
        guard = TargetGuard(AllowList.parse("", loopback=True), resolver=dns)
        async with httpx.AsyncClient(transport=guard.transport(verify=trust), timeout=5) as http:
            answer = await http.post(f"https://hooks.example.test:{server.port}/tls", content=b"sealed")
            assert answer.status_code == 204
            with pytest.raises(httpx.ConnectError):  # same server by address: the name no longer matches
                await http.post(f"https://127.0.0.1:{server.port}/tls", content=b"x")
        assert server.server_names[0] == "hooks.example.test"
        assert [r.body for r in server.requests] == [b"sealed"]
    finally:
        server.stop()
