"""The SMTP adapter against a real aiosmtpd server: plain, STARTTLS and implicit TLS with a
private CA, logins, refused recipients and refused data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from herald_email_sender.outcome import Outcome
from herald_email_sender.providers import smtp

from herald.cli.embedded import free_port
from herald.v1 import common_pb2
from tests.email.conftest import full_request, simple_request
from tests.standins.smtp import Certificates, SmtpStandIn, TlsMode, private_ca

# aiosmtpd warns whenever AUTH is offered without TLS, which the plain relay does on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")

USER = "mailer"
PASSWORD = "smtp-password-8f2c41"


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return private_ca(tmp_path_factory.mktemp("relay-ca"))


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return private_ca(tmp_path_factory.mktemp("other-ca"), "Some other CA")


@pytest.fixture
def relay(request: pytest.FixtureRequest, certificates: Certificates) -> Iterator[SmtpStandIn]:
    mode: TlsMode = getattr(request, "param", "none")
    running = SmtpStandIn(USER, PASSWORD, tls=mode, certificates=certificates)
    yield running
    running.close()


def settings(
    relay: SmtpStandIn, mode: int, password: str = PASSWORD, host: str = "127.0.0.1"
) -> common_pb2.SmtpSettings:
    return common_pb2.SmtpSettings(host=host, port=relay.port, username=USER, password=password, tls_mode=mode)  # type: ignore[arg-type]


async def test_a_full_message_goes_out_as_mime(relay: SmtpStandIn) -> None:
    result = await smtp.send(
        settings(relay, common_pb2.SMTP_TLS_MODE_NONE), full_request(), idempotency_key="0193a1b2-job-7"
    )

    assert result.outcome is Outcome.ACCEPTED and result.status_code == 250 and result.error == ""
    assert result.message_id == "herald.0193a1b2-job-7@acme.example"
    [received] = relay.received
    assert received.mail_from == "billing@acme.example"
    # The envelope carries everyone, Bcc included; the message shows no Bcc.
    assert received.rcpt_tos == ["ada@example.com", "bob@example.com", "carol@example.com", "audit@acme.example"]
    mime = received.message
    assert mime["From"] == "Acme Billing <billing@acme.example>"
    assert mime["To"] == "Ada Lovelace <ada@example.com>, bob@example.com"
    assert mime["Cc"] == "Carol <carol@example.com>"
    assert mime["Bcc"] is None
    assert mime["Reply-To"] == "Acme Support <support@acme.example>"
    assert mime["Subject"] == "Your invoice #1042"
    assert mime["Message-ID"] == "<herald.0193a1b2-job-7@acme.example>"
    assert mime["X-Campaign"] == "spring"
    assert mime["Date"] is not None
    assert mime.get_content_type() == "multipart/alternative"
    plain = mime.get_body(("plain",))
    html = mime.get_body(("html",))
    assert plain is not None and plain.get_content().strip() == "Hello Ada, your invoice is attached."
    assert html is not None and html.get_content().strip() == "<p>Hello Ada, your invoice is attached.</p>"
    assert not received.over_tls


async def test_the_same_key_gives_the_same_message_id(relay: SmtpStandIn) -> None:
    """A retry after a timeout repeats the Message-ID, which receivers de-duplicate on."""
    target = settings(relay, common_pb2.SMTP_TLS_MODE_NONE)
    first = await smtp.send(target, simple_request(), idempotency_key="job 9 / weird key")
    again = await smtp.send(target, simple_request(), idempotency_key="job 9 / weird key")
    other = await smtp.send(target, simple_request(), idempotency_key="job-10")
    assert first.message_id == again.message_id != other.message_id
    assert " " not in first.message_id and first.message_id.endswith("@acme.example")
    assert [r.message["Message-ID"] for r in relay.received][:2] == [f"<{first.message_id}>"] * 2


@pytest.mark.parametrize("relay", ["starttls"], indirect=True)
async def test_starttls_with_a_private_ca_given_as_pem(relay: SmtpStandIn, certificates: Certificates) -> None:
    context = smtp.tls_context(ca_pem=certificates.ca_pem)
    result = await smtp.send(
        settings(relay, common_pb2.SMTP_TLS_MODE_STARTTLS, host="localhost"), simple_request(), tls_context=context
    )
    assert result.outcome is Outcome.ACCEPTED, result.error
    assert relay.received[0].over_tls


@pytest.mark.parametrize("relay", ["implicit"], indirect=True)
async def test_implicit_tls_with_a_private_ca_file(relay: SmtpStandIn, certificates: Certificates) -> None:
    context = smtp.tls_context(ca_file=str(certificates.ca_file))
    result = await smtp.send(settings(relay, common_pb2.SMTP_TLS_MODE_IMPLICIT), simple_request(), tls_context=context)
    assert result.outcome is Outcome.ACCEPTED, result.error
    assert relay.received[0].over_tls


@pytest.mark.parametrize("relay", ["starttls"], indirect=True)
async def test_an_unset_tls_mode_means_starttls(relay: SmtpStandIn, certificates: Certificates) -> None:
    context = smtp.tls_context(ca_pem=certificates.ca_pem)
    result = await smtp.send(
        settings(relay, common_pb2.SMTP_TLS_MODE_UNSPECIFIED), simple_request(), tls_context=context
    )
    assert result.outcome is Outcome.ACCEPTED and relay.received[0].over_tls


@pytest.mark.parametrize("relay", ["starttls", "implicit"], indirect=True)
async def test_a_certificate_from_another_ca_is_permanent(relay: SmtpStandIn, other_ca: Certificates) -> None:
    mode = common_pb2.SMTP_TLS_MODE_STARTTLS if relay.tls == "starttls" else common_pb2.SMTP_TLS_MODE_IMPLICIT
    context = smtp.tls_context(ca_pem=other_ca.ca_pem)
    result = await smtp.send(settings(relay, mode), simple_request(), tls_context=context)
    assert result.outcome is Outcome.PERMANENT and "certificate" in result.error
    assert relay.received == []


@pytest.mark.parametrize("relay", ["starttls"], indirect=True)
async def test_a_private_certificate_without_its_ca_is_permanent(relay: SmtpStandIn) -> None:
    result = await smtp.send(settings(relay, common_pb2.SMTP_TLS_MODE_STARTTLS), simple_request())
    assert result.outcome is Outcome.PERMANENT and "certificate" in result.error


async def test_starttls_asked_of_a_server_without_it_is_permanent(relay: SmtpStandIn) -> None:
    result = await smtp.send(settings(relay, common_pb2.SMTP_TLS_MODE_STARTTLS), simple_request())
    assert result.outcome is Outcome.PERMANENT and "STARTTLS" in result.error
    assert relay.received == []


async def test_a_rejected_login_is_permanent_and_hides_the_password(relay: SmtpStandIn) -> None:
    result = await smtp.send(
        settings(relay, common_pb2.SMTP_TLS_MODE_NONE, password="wrong-pass-123"), simple_request()
    )
    assert result.outcome is Outcome.PERMANENT and result.status_code == 535
    assert "login" in result.error and "wrong-pass-123" not in result.error
    assert relay.received == []


@pytest.mark.parametrize(
    ("reply", "outcome", "code"),
    [
        ("550 5.1.1 <ada@example.com>: Recipient address rejected: User unknown", Outcome.PERMANENT, 550),
        ("450 4.2.1 <ada@example.com>: Mailbox busy, try later", Outcome.TRANSIENT, 450),
    ],
)
async def test_every_recipient_refused(relay: SmtpStandIn, reply: str, outcome: Outcome, code: int) -> None:
    relay.reject["ada@example.com"] = reply
    result = await smtp.send(settings(relay, common_pb2.SMTP_TLS_MODE_NONE), simple_request())
    assert result.outcome is outcome and result.status_code == code
    assert "every recipient was refused" in result.error


async def test_some_recipients_refused_is_still_accepted(relay: SmtpStandIn) -> None:
    """The others got it: retrying would deliver to them twice."""
    relay.reject["bob@example.com"] = "550 5.1.1 Recipient address rejected"
    result = await smtp.send(settings(relay, common_pb2.SMTP_TLS_MODE_NONE), full_request())
    assert result.outcome is Outcome.ACCEPTED and "1 of 4 recipients refused (550)" in result.error
    assert "bob@example.com" not in relay.received[0].rcpt_tos


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        ("451 4.3.0 Temporary failure, try again", Outcome.TRANSIENT),
        ("554 5.7.1 Message rejected as spam", Outcome.PERMANENT),
    ],
)
async def test_refused_data(relay: SmtpStandIn, reply: str, outcome: Outcome) -> None:
    relay.fail_data = reply
    result = await smtp.send(settings(relay, common_pb2.SMTP_TLS_MODE_NONE), simple_request())
    assert result.outcome is outcome and result.status_code == int(reply[:3]) and "DATA" in result.error


async def test_an_unreachable_relay_is_transient() -> None:
    target = common_pb2.SmtpSettings(host="127.0.0.1", port=free_port(), tls_mode=common_pb2.SMTP_TLS_MODE_NONE)
    result = await smtp.send(target, simple_request(), timeout_s=2)
    assert result.outcome is Outcome.TRANSIENT and result.status_code == 0


async def test_a_reserved_header_is_refused_before_connecting(relay: SmtpStandIn) -> None:
    request = simple_request(headers={"Bcc": "spy@example.com"})
    result = await smtp.send(settings(relay, common_pb2.SMTP_TLS_MODE_NONE), request)
    assert result.outcome is Outcome.PERMANENT and "'Bcc'" in result.error
    assert relay.messages == []


def test_tls_contexts_are_cached_and_trust_only_the_given_ca(certificates: Certificates, tmp_path: Path) -> None:
    assert smtp.tls_context() is None
    first = smtp.tls_context(ca_pem=certificates.ca_pem)
    assert first is smtp.tls_context(ca_pem=certificates.ca_pem)
    assert first is not None and len(first.get_ca_certs()) == 1
