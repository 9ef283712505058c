"""The senders' receiver client (`herald.webhooks.receiver_client` on `herald.webhooks.http1`) holds
every guarantee the target guard gives the httpx transport (tests/webhooks/test_guarded_transport.py),
against real servers on loopback addresses and the stand-in DNS playing the attacker's name
server: the address checked is the address connected to, rebinding is refused at send time,
literals in every spelling are checked, TLS keeps the name, redirects are not followed, no proxy
comes from the environment, connections are kept alive per target, the excerpt is capped, and a
slow receiver times out."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.retry_policy import ReceiverCallError, Verdict, classify_error, error_class
from herald.webhooks.target_guard import AllowList, TargetGuard, TargetRefused
from tests.webhooks.local_servers import LocalServer, StandInDNS, make_authority, server_pair

PUBLIC = "93.184.215.14"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    running = LocalServer("127.0.0.1").start()
    yield running
    running.stop()


@pytest.fixture
async def clients() -> AsyncIterator[list[ReceiverClient]]:
    """Every client a test makes, closed after it."""
    made: list[ReceiverClient] = []
    yield made
    for client in made:
        await client.close()


def make(clients: list[ReceiverClient], guard: TargetGuard, **options: object) -> ReceiverClient:
    client = ReceiverClient(guard, timeout_s=options.pop("timeout_s", 5), connections=10, **options)  # type: ignore[arg-type]
    clients.append(client)
    return client


async def test_a_permitted_name_reaches_its_checked_address_with_its_own_host_header(
    server: LocalServer, clients: list[ReceiverClient]
) -> None:
    dns = StandInDNS({"hooks.example.test": ["127.0.0.1"]})
    client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=dns))
    answer = await client.post(f"http://hooks.example.test:{server.port}/in", b"payload", {"x-a": "1"})
    assert answer.status_code == 204
    [seen] = server.requests
    assert seen.headers["host"] == f"hooks.example.test:{server.port}"
    assert (seen.path, seen.body, seen.headers["x-a"]) == ("/in", b"payload", "1")


async def test_dns_rebinding_after_the_submit_check_is_refused_at_send_time(
    server: LocalServer, clients: list[ReceiverClient]
) -> None:
    dns = StandInDNS({"rebind.example.test": [PUBLIC]})
    guard = TargetGuard(resolver=dns)
    url = f"http://rebind.example.test:{server.port}/in"
    assert await guard.check_url_resolved(url) is None

    dns.answers["rebind.example.test"] = ["127.0.0.1"]
    with pytest.raises(TargetRefused) as refused:
        await make(clients, guard).post(url, b"secret-stealing attempt", {})
    assert server.requests == []
    assert refused.value.problem.code == "non_public"
    assert "127.0.0.1" not in str(refused.value)
    assert classify_error(refused.value) is Verdict.FAILED

    allowed = make(clients, TargetGuard(AllowList.parse("127.0.0.0/8"), resolver=dns))
    assert (await allowed.post(url, b"hello", {})).status_code == 204
    assert [r.body for r in server.requests] == [b"hello"]


async def test_the_address_checked_is_the_address_connected_to(clients: list[ReceiverClient]) -> None:
    """The stand-in DNS answers the permitted 127.0.0.1 first and the forbidden 127.0.0.2
    after; the client asks once per connection and connects to what was checked."""
    permitted, forbidden = server_pair("127.0.0.1", "127.0.0.2")
    try:

        class Flipping(StandInDNS):
            async def __call__(self, host: str, port: int) -> list[str]:
                self.questions.append(host)
                return ["127.0.0.1"] if len(self.questions) == 1 else ["127.0.0.2"]

        dns = Flipping()
        guard = TargetGuard(AllowList.parse("127.0.0.1/32"), resolver=dns)
        url = f"http://flip.example.test:{permitted.port}/in"
        first = make(clients, guard)
        assert (await first.post(url, b"one", {})).status_code == 204
        assert (await first.post(url, b"again", {})).status_code == 204  # kept alive: no new question
        assert dns.questions == ["flip.example.test"]
        assert [r.body for r in permitted.requests] == [b"one", b"again"]

        with pytest.raises(TargetRefused):  # a new connection asks again, and is refused
            await make(clients, guard).post(url, b"two", {})
        assert forbidden.requests == []
    finally:
        permitted.stop()
        forbidden.stop()


async def test_address_literals_are_checked_in_every_spelling(
    server: LocalServer, clients: list[ReceiverClient]
) -> None:
    dns = StandInDNS()
    for url in (
        f"http://127.0.0.1:{server.port}/",
        f"http://2130706433:{server.port}/",
        f"http://127.1:{server.port}/",
        f"http://0x7f.1:{server.port}/",
        f"http://017700000001:{server.port}/",
        f"http://[::ffff:127.0.0.1]:{server.port}/",
        f"http://[::1]:{server.port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
    ):
        with pytest.raises(TargetRefused):
            await make(clients, TargetGuard(resolver=dns)).post(url, b"x", {})
    assert server.requests == []
    assert dns.questions == [], "literals never reach DNS"
    allowed = make(clients, TargetGuard(AllowList.parse("127.0.0.1"), resolver=dns))
    assert (await allowed.post(f"http://2130706433:{server.port}/", b"x", {})).status_code == 204
    assert server.requests[0].headers["host"] == f"2130706433:{server.port}", "the Host as written"


async def test_a_name_with_one_forbidden_answer_is_refused_whole(
    server: LocalServer, clients: list[ReceiverClient]
) -> None:
    dns = StandInDNS({"mixed.example.test": ["127.0.0.1", "127.0.0.2"]})
    with pytest.raises(TargetRefused):
        await make(clients, TargetGuard(AllowList.parse("127.0.0.1/32"), resolver=dns)).post(
            f"http://mixed.example.test:{server.port}/", b"x", {}
        )
    assert server.requests == []


async def test_redirects_are_answers_never_followed(server: LocalServer, clients: list[ReceiverClient]) -> None:
    target = LocalServer("127.0.0.1").start()
    try:
        server.status = 307
        server.headers["location"] = f"http://127.0.0.1:{target.port}/inside"
        client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS()))
        answer = await client.post(f"http://127.0.0.1:{server.port}/", b"x", {})
        assert answer.status_code == 307
        assert answer.header("Location") == f"http://127.0.0.1:{target.port}/inside"
        assert len(server.requests) == 1 and target.requests == []
    finally:
        target.stop()


async def test_no_proxy_is_taken_from_the_environment(
    server: LocalServer, clients: list[ReceiverClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy would resolve the name itself, past the guard: the environment's is ignored."""
    proxy = LocalServer("127.0.0.2").start()
    try:
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.2:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        dns = StandInDNS({"hooks.example.test": ["127.0.0.1"]})
        client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=dns))
        assert (await client.post(f"http://hooks.example.test:{server.port}/", b"direct", {})).status_code == 204
        assert proxy.requests == [] and [r.body for r in server.requests] == [b"direct"]
    finally:
        proxy.stop()


async def test_a_name_that_does_not_resolve_is_a_transient_dns_failure(
    server: LocalServer, clients: list[ReceiverClient]
) -> None:
    client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS()))
    with pytest.raises(ReceiverCallError) as failed:
        await client.post(f"http://gone.example.test:{server.port}/", b"x", {})
    assert error_class(failed.value) == "dns"
    assert classify_error(failed.value) is Verdict.RETRY


async def test_other_schemes_and_malformed_urls_are_refused(clients: list[ReceiverClient]) -> None:
    client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS()))
    for url in ("ws://127.0.0.1:9/", "file:///etc/passwd", "http:///nohost", "http://1.2.3.4.5/"):
        with pytest.raises(TargetRefused):
            await client.post(url, b"x", {})


async def test_tls_keeps_the_name_for_sni_and_the_certificate(tmp_path: Path, clients: list[ReceiverClient]) -> None:
    """Connected to 127.0.0.1, the handshake offers and verifies `hooks.example.test`,
    whose certificate names no address: verification would fail if the IP were used."""
    authority = make_authority(tmp_path, "hooks.example.test")
    server = LocalServer("127.0.0.1")
    server.serve_tls(authority.certificate, authority.key)
    server.start()
    try:
        trust = ssl.create_default_context(cafile=str(authority.ca_file))
        dns = StandInDNS({"hooks.example.test": ["127.0.0.1"]})
        guard = TargetGuard(AllowList.parse("", loopback=True), resolver=dns)
        client = make(clients, guard, ssl_context=trust)
        answer = await client.post(f"https://hooks.example.test:{server.port}/tls", b"sealed", {})
        assert answer.status_code == 204
        with pytest.raises(ReceiverCallError) as failed:  # same server by address: the name no longer matches
            await client.post(f"https://127.0.0.1:{server.port}/tls", b"x", {})
        assert error_class(failed.value) == "tls"
        untrusted = make(clients, guard)  # the system's trust store does not know this CA
        with pytest.raises(ReceiverCallError) as failed:
            await untrusted.post(f"https://hooks.example.test:{server.port}/tls", b"x", {})
        assert error_class(failed.value) == "tls"
        assert server.server_names[0] == "hooks.example.test"
        assert [r.body for r in server.requests] == [b"sealed"]
    finally:
        server.stop()


async def test_connections_are_kept_alive_per_target(clients: list[ReceiverClient]) -> None:
    one, two = LocalServer("127.0.0.1").start(), LocalServer("127.0.0.1").start()
    try:
        client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS()))
        for _ in range(3):
            for target in (one, two):
                assert (await client.post(f"http://127.0.0.1:{target.port}/", b"x", {})).status_code == 204
        assert len({r.peer_port for r in one.requests}) == 1, "one connection, reused"
        assert len({r.peer_port for r in two.requests}) == 1
        assert len(one.requests) == len(two.requests) == 3
    finally:
        one.stop()
        two.stop()


async def test_the_excerpt_is_capped_and_headers_come_back_as_sent(
    server: LocalServer, clients: list[ReceiverClient]
) -> None:
    server.status = 503
    server.body = b"overloaded " + b"x" * 100_000
    server.headers = {"X-Request-Id": "req-1", "Retry-After": "7"}
    client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS()))
    answer = await client.post(f"http://127.0.0.1:{server.port}/", b"x", {})
    assert answer.status_code == 503
    assert answer.excerpt.startswith(b"overloaded xxx") and len(answer.excerpt) == 4096
    received = [(name.lower(), value) for name, value in answer.headers]
    assert ("x-request-id", "req-1") in received and ("retry-after", "7") in received
    server.status, server.body = 200, b'{"ok":true}'
    answer = await client.post(f"http://127.0.0.1:{server.port}/", b"x", {})  # the cut connection is not reused
    assert (answer.status_code, answer.excerpt) == (200, b'{"ok":true}')


async def test_a_slow_receiver_times_out(server: LocalServer, clients: list[ReceiverClient]) -> None:
    server.delay_s = 1.5
    client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS()), timeout_s=0.3)
    with pytest.raises(ReceiverCallError) as failed:
        await client.post(f"http://127.0.0.1:{server.port}/", b"x", {})
    assert error_class(failed.value) == "timeout"
    assert classify_error(failed.value) is Verdict.RETRY


async def test_a_closed_port_is_a_connect_failure(clients: list[ReceiverClient]) -> None:
    closed = LocalServer("127.0.0.1")
    port = closed.port
    closed.httpd.server_close()
    client = make(clients, TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS()))
    with pytest.raises(ReceiverCallError) as failed:
        await client.post(f"http://127.0.0.1:{port}/", b"x", {})
    assert error_class(failed.value) == "connect"
