"""The four targets the target guard must refuse — 127.0.0.1, 10.0.0.1, 169.254.169.254 and a host name that
resolves to a private address — refused at submit time (the gateway's check) and at send time
(the sender's receiver client, herald.webhooks.receiver_client), and accepted at both once the
operator allow-lists them.

The stand-in DNS plays the name server that answers with a private address; 127.0.0.1 has a
real server listening, so "refused" also means "nothing arrived". The end-to-end twins (the
gateway answering 422 problem+json) are in tests/test_webhook_submit_guard.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from herald_gateway.target_check import CachedResolver, TargetCheck
from herald_webhook_sender.client import RESPONSE_HEADERS_BYTES, call_receiver, recorded_headers

from herald.config import Settings
from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.retry_policy import attempt_error_class
from herald.webhooks.target_guard import AllowList, TargetGuard, TargetRefused
from tests.webhooks.local_servers import LocalServer, StandInDNS, make_authority

PRIVATE_NAME = "hooks.internal.example.test"
DNS = {PRIVATE_NAME: ["10.20.30.40"], "public.example.test": ["93.184.215.14"]}
ALLOW_ALL_FOUR = "127.0.0.1/32, 10.0.0.0/8, 169.254.169.254/32"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    running = LocalServer("127.0.0.1").start()
    yield running
    running.stop()


def four(port: int) -> list[str]:
    return [
        f"http://127.0.0.1:{port}/hook",
        "http://10.0.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        f"http://{PRIVATE_NAME}/hook",
    ]


def submit_check(allow: str) -> TargetCheck:
    """The gateway's check exactly as `herald_gateway.main` builds it, with the stand-in DNS."""
    settings = Settings(target_allow=allow, webhook_allow_loopback=False)
    return TargetCheck.from_settings(settings, resolver=CachedResolver(StandInDNS(dict(DNS))))


async def test_the_four_are_refused_at_submit_time(server: LocalServer) -> None:
    check = submit_check("")
    for url in four(server.port):
        problems = await check.problems(url)
        assert problems and problems[0][0] == "url", url
        assert "webhook target refused" in problems[0][1]
        assert "10.20.30.40" not in problems[0][1], "the refusal does not reveal what the name resolved to"
    assert await check.problems("http://public.example.test/hook") == []
    assert await check.problems("ftp://public.example.test/hook") != []


async def test_the_four_are_accepted_at_submit_time_once_allow_listed(server: LocalServer) -> None:
    check = submit_check(ALLOW_ALL_FOUR)
    for url in four(server.port):
        assert await check.problems(url) == [], url


async def test_the_four_are_refused_at_send_time_and_nothing_arrives(server: LocalServer) -> None:
    guard = TargetGuard(AllowList.parse(""), resolver=StandInDNS(dict(DNS)))
    http = ReceiverClient(guard, timeout_s=2, connections=4)
    try:
        for url in four(server.port):
            result = await call_receiver(http, "job-1", common_pb2.WebhookRequest(url=url, body=b"{}"), {})
            assert isinstance(result.error, TargetRefused), url
            assert attempt_error_class(result.status_code, result.error) == "refused_by_guard"
    finally:
        await http.close()
    assert server.requests == []


async def test_the_four_are_attempted_at_send_time_once_allow_listed(server: LocalServer) -> None:
    guard = TargetGuard(AllowList.parse(ALLOW_ALL_FOUR), resolver=StandInDNS(dict(DNS)))
    http = ReceiverClient(guard, timeout_s=0.5, connections=4)
    try:
        for url in four(server.port):
            result = await call_receiver(http, "job-1", common_pb2.WebhookRequest(url=url, body=b"{}"), {})
            # Reaching the address is now up to the network (nothing listens on 10.x here).
            assert not isinstance(result.error, TargetRefused), url
    finally:
        await http.close()
    assert [r.body for r in server.requests] == [b"{}"], "the loopback receiver was reached"


async def test_failures_are_classed_for_the_attempt_record(tmp_path: Path, server: LocalServer) -> None:
    dns = StandInDNS({"tls.example.test": ["127.0.0.1"]})
    guard = TargetGuard(AllowList.parse("", loopback=True), resolver=dns)
    tls_server = LocalServer("127.0.0.1")
    authority = make_authority(tmp_path, "tls.example.test")
    tls_server.serve_tls(authority.certificate, authority.key)
    tls_server.start()
    closed = LocalServer("127.0.0.1")
    closed_port = closed.port
    closed.httpd.server_close()
    http = ReceiverClient(guard, timeout_s=2, connections=4)
    try:

        async def error_class_of(url: str) -> str:
            result = await call_receiver(http, "job-1", common_pb2.WebhookRequest(url=url, body=b"x"), {})
            return attempt_error_class(result.status_code, result.error)

        # The certificate is signed by a CA the sender does not trust.
        assert await error_class_of(f"https://tls.example.test:{tls_server.port}/") == "tls"
        assert await error_class_of("http://nowhere.example.test/") == "dns"
        assert await error_class_of(f"http://127.0.0.1:{closed_port}/") == "connect"
        assert await error_class_of(f"http://127.0.0.1:{server.port}/") == ""
    finally:
        await http.close()
        tls_server.stop()


def test_recorded_response_headers_are_capped_and_leave_cookies_out() -> None:
    headers = httpx.Headers(
        [("Set-Cookie", "session=secret"), ("X-Request-Id", "abc"), ("X-Big", "v" * 10_000)]
        + [(f"X-H{i}", "1234567890") for i in range(400)]
    )
    kept = recorded_headers(headers.multi_items())
    assert "set-cookie" not in kept
    assert kept["x-request-id"] == "abc"
    assert len(kept["x-big"]) == 512
    assert sum(len(k) + len(v) for k, v in kept.items()) <= RESPONSE_HEADERS_BYTES
    assert len(kept) <= 50
