"""At call time the email-sender connects to providers only through the target guard: its HTTP
client is the guarded receiver client (herald.webhooks.http1), SMTP connects to the checked address while TLS keeps the
host name. A guard that does not allow loopback refuses the local stand-ins before any byte."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
from herald_email_sender.outcome import Outcome, SendResult
from herald_email_sender.providers import sendgrid as adapter
from herald_email_sender.providers import smtp
from herald_email_sender.providers.validation import Validation

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.target_guard import AllowList, TargetGuard
from tests.email.conftest import SENDGRID_KEY, simple_request
from tests.standins.sendgrid import SendGridStandIn
from tests.standins.smtp import Certificates, SmtpStandIn, private_ca

pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")

STRICT = TargetGuard(AllowList.parse(""))
LOOPBACK = TargetGuard(AllowList.parse("", loopback=True))
USER, PASSWORD = "mailer", "smtp-guard-password-77"


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return private_ca(tmp_path_factory.mktemp("guard-ca"))


@pytest.fixture
def relay(certificates: Certificates) -> Iterator[SmtpStandIn]:
    running = SmtpStandIn(USER, PASSWORD, tls="starttls", certificates=certificates)
    yield running
    running.close()


@asynccontextmanager
async def _client(guard: TargetGuard) -> AsyncIterator[ReceiverClient]:
    client = ReceiverClient(guard, timeout_s=10, connections=4)
    try:
        yield client
    finally:
        await client.close()


async def _validate(client: ReceiverClient, standin: SendGridStandIn) -> Validation:
    return await adapter.validate(client, SENDGRID_KEY, standin.base_url)


async def _send(client: ReceiverClient, standin: SendGridStandIn) -> SendResult:
    return await adapter.send(client, SENDGRID_KEY, simple_request(), base_url=standin.base_url)


async def test_http_calls_go_through_the_guard(sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    async with _client(STRICT) as strict:
        validation = await _validate(strict, sendgrid)
        result = await _send(strict, sendgrid)
    # A policy refusal, the same words whatever the address: not "unreachable", not retried.
    assert not validation.valid and not validation.unreachable and "does not connect" in validation.reason
    assert result.outcome is Outcome.PERMANENT and "does not connect" in result.error
    assert sendgrid.requests == []
    async with _client(LOOPBACK) as allowed:
        assert (await _validate(allowed, sendgrid)).valid
        assert (await _send(allowed, sendgrid)).outcome is Outcome.ACCEPTED


def _relay_settings(relay: SmtpStandIn, host: str) -> common_pb2.SmtpSettings:
    return common_pb2.SmtpSettings(
        host=host, port=relay.port, username=USER, password=PASSWORD, tls_mode=common_pb2.SMTP_TLS_MODE_STARTTLS
    )


async def test_smtp_connects_to_the_checked_address_and_keeps_the_name_for_tls(
    relay: SmtpStandIn, certificates: Certificates
) -> None:
    context = smtp.tls_context(ca_pem=certificates.ca_pem)
    refused = await smtp.send(_relay_settings(relay, "localhost"), simple_request(), tls_context=context, guard=STRICT)
    assert refused.outcome is Outcome.PERMANENT and "does not connect" in refused.error
    verdict = await smtp.validate(_relay_settings(relay, "127.0.0.1"), context, guard=STRICT)
    assert not verdict.valid and not verdict.unreachable and "does not connect" in verdict.reason
    assert relay.received == []
    # Allowed: the socket goes to the checked address, the certificate is checked for "localhost".
    sent = await smtp.send(_relay_settings(relay, "localhost"), simple_request(), tls_context=context, guard=LOOPBACK)
    assert sent.outcome is Outcome.ACCEPTED, sent.error
    assert relay.received[0].over_tls
    assert (await smtp.validate(_relay_settings(relay, "localhost"), context, guard=LOOPBACK)).valid
