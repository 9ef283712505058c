"""The fallback walk over real provider stand-ins: order, the pinned pair, and what a walk's
failures add up to."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from herald_email_sender.dispatch import Senders
from herald_email_sender.outcome import Outcome
from herald_email_sender.walk import Attempt, Verdict, WalkResult, walk

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from tests.email.conftest import (
    POSTMARK_TOKEN,
    RESEND_KEY,
    SECRETS,
    SENDGRID_KEY,
    Vault,
    config,
    credential,
    full_request,
    simple_request,
)
from tests.standins.postmark import SEND_PATH as POSTMARK_SEND
from tests.standins.postmark import PostmarkStandIn
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.standins.scripted import Stall
from tests.standins.sendgrid import SEND_PATH as SENDGRID_SEND
from tests.standins.sendgrid import SendGridStandIn
from tests.standins.server import Reply
from tests.standins.smtp import SmtpStandIn, private_ca

TENANT = "tenant-a"


class Providers:
    """A tenant with SendGrid (priority 30), Resend (20) and Postmark (10), listed out of order."""

    def __init__(self, sendgrid: SendGridStandIn, resend: ResendStandIn, postmark: PostmarkStandIn) -> None:
        self.sendgrid, self.resend, self.postmark = sendgrid, resend, postmark
        sendgrid.add_key(SENDGRID_KEY)
        resend.add_key(RESEND_KEY)
        postmark.add_token(POSTMARK_TOKEN)
        self.configs = [
            config("pm", common_pb2.EMAIL_PROVIDER_POSTMARK, 10, postmark.base_url),
            config("sg", common_pb2.EMAIL_PROVIDER_SENDGRID, 30, sendgrid.base_url),
            config("rs", common_pb2.EMAIL_PROVIDER_RESEND, 20, resend.base_url),
        ]
        self.vault = Vault(
            {
                "sg": credential(common_pb2.EMAIL_PROVIDER_SENDGRID, SENDGRID_KEY),
                "rs": credential(common_pb2.EMAIL_PROVIDER_RESEND, RESEND_KEY),
                "pm": credential(common_pb2.EMAIL_PROVIDER_POSTMARK, POSTMARK_TOKEN),
            }
        )

    def calls(self) -> dict[str, int]:
        return {
            "sg": len(self.sendgrid.received("POST", SENDGRID_SEND)),
            "rs": len(self.resend.received("POST", RESEND_SEND)),
            "pm": len(self.postmark.received("POST", POSTMARK_SEND)),
        }


@pytest.fixture
def tenant(sendgrid: SendGridStandIn, resend: ResendStandIn, postmark: PostmarkStandIn) -> Providers:
    return Providers(sendgrid, resend, postmark)


async def run(
    http: ReceiverClient,
    tenant: Providers,
    request: common_pb2.EmailRequest,
    seen: list[Attempt] | None = None,
    timeout_s: float = 5.0,
) -> WalkResult:
    async def on_attempt(attempt: Attempt) -> None:
        if seen is not None:
            seen.append(attempt)

    return await walk(
        request,
        tenant.configs,
        tenant.vault.open,
        senders=Senders(http, timeout_s=timeout_s),
        tenant_id=TENANT,
        idempotency_key="job-0193a1b2",
        on_attempt=on_attempt,
    )


def outcomes(result: WalkResult) -> list[tuple[str, Outcome]]:
    return [(a.provider_id, a.outcome) for a in result.attempts]


async def test_the_highest_priority_provider_goes_first_and_acceptance_ends_the_walk(
    http: ReceiverClient, tenant: Providers
) -> None:
    result = await run(http, tenant, full_request())
    assert result.verdict is Verdict.ACCEPTED
    assert outcomes(result) == [("sg", Outcome.ACCEPTED)]
    assert tenant.calls() == {"sg": 1, "rs": 0, "pm": 0}
    accepted = result.accepted
    assert accepted is not None and accepted.provider == "sendgrid" and accepted.called
    assert accepted.message_id == tenant.sendgrid.sent[0][0] and accepted.status_code == 202
    assert accepted.duration_ms >= 0 and result.error == ""
    # Only the provider called was decrypted.
    assert tenant.vault.opened == ["sg"]


async def test_a_failure_falls_back_in_priority_order(http: ReceiverClient, tenant: Providers) -> None:
    tenant.sendgrid.script("POST", SENDGRID_SEND, Reply(503, {"errors": []}))
    tenant.resend.script("POST", RESEND_SEND, Reply(401, {"name": "missing_api_key", "message": "no"}))
    seen: list[Attempt] = []
    result = await run(http, tenant, full_request(), seen)

    assert result.verdict is Verdict.ACCEPTED
    assert outcomes(result) == [("sg", Outcome.TRANSIENT), ("rs", Outcome.PERMANENT), ("pm", Outcome.ACCEPTED)]
    assert [(a.provider, a.status_code) for a in result.attempts] == [
        ("sendgrid", 503),
        ("resend", 401),
        ("postmark", 200),
    ]
    assert result.accepted is not None and result.accepted.message_id == tenant.postmark.sent[0][0]
    assert list(result.attempts) == seen  # reported one by one, in order
    assert tenant.vault.opened == ["sg", "rs", "pm"]


async def test_equal_priorities_keep_the_given_order(http: ReceiverClient, tenant: Providers) -> None:
    for entry in tenant.configs:
        entry.priority = 5
    tenant.postmark.script("POST", POSTMARK_SEND, Reply(500, {"ErrorCode": 500, "Message": "boom"}))
    result = await run(http, tenant, simple_request())
    assert outcomes(result) == [("pm", Outcome.TRANSIENT), ("sg", Outcome.ACCEPTED)]


async def test_a_pinned_pair_is_all_that_is_tried(http: ReceiverClient, tenant: Providers) -> None:
    tenant.postmark.script("POST", POSTMARK_SEND, Reply(503, {"ErrorCode": 500, "Message": "down"}))
    result = await run(http, tenant, full_request(provider_id="pm", fallback_provider_id="rs"))
    assert result.verdict is Verdict.ACCEPTED
    assert outcomes(result) == [("pm", Outcome.TRANSIENT), ("rs", Outcome.ACCEPTED)]
    assert tenant.calls() == {"sg": 0, "rs": 1, "pm": 1}


async def test_a_pinned_pair_that_fails_does_not_spill_over(http: ReceiverClient, tenant: Providers) -> None:
    tenant.postmark.script("POST", POSTMARK_SEND, Reply(503, {"ErrorCode": 500, "Message": "down"}))
    tenant.resend.script("POST", RESEND_SEND, Reply(500, {"name": "application_error", "message": "down"}))
    result = await run(http, tenant, simple_request(provider_id="pm", fallback_provider_id="rs"))
    assert result.verdict is Verdict.FAILED_TRANSIENTLY
    assert tenant.calls() == {"sg": 0, "rs": 1, "pm": 1}


async def test_a_pinned_provider_alone(http: ReceiverClient, tenant: Providers) -> None:
    tenant.resend.script("POST", RESEND_SEND, Reply(500, {"name": "application_error", "message": "down"}))
    result = await run(http, tenant, simple_request(provider_id="rs"))
    assert outcomes(result) == [("rs", Outcome.TRANSIENT)]
    assert result.verdict is Verdict.FAILED_TRANSIENTLY


async def test_a_pinned_provider_that_no_longer_exists_is_a_permanent_refusal(
    http: ReceiverClient, tenant: Providers
) -> None:
    result = await run(http, tenant, simple_request(provider_id="gone", fallback_provider_id="rs"))
    assert outcomes(result) == [("gone", Outcome.PERMANENT), ("rs", Outcome.ACCEPTED)]
    assert not result.attempts[0].called and "not configured" in result.attempts[0].error
    alone = await run(http, tenant, simple_request(provider_id="gone"))
    assert alone.verdict is Verdict.FAILED_PERMANENTLY


async def test_every_failure_permanent_fails_the_job_at_once(http: ReceiverClient, tenant: Providers) -> None:
    tenant.sendgrid.reject.add("ada@example.com")
    tenant.resend.reject.add("ada@example.com")
    tenant.postmark.inactive.add("ada@example.com")
    result = await run(http, tenant, simple_request())
    assert result.verdict is Verdict.FAILED_PERMANENTLY
    assert [a.outcome for a in result.attempts] == [Outcome.PERMANENT] * 3
    assert tenant.calls() == {"sg": 1, "rs": 1, "pm": 1}
    assert result.error.startswith("sendgrid sg: 400 Does not contain a valid address")
    assert "resend rs: 422" in result.error and "postmark pm: 422 ErrorCode 406" in result.error
    assert result.retry_after_s is None


async def test_one_transient_failure_makes_the_walk_a_retry(http: ReceiverClient, tenant: Providers) -> None:
    tenant.sendgrid.rate_limit_next(reset_in_s=2)
    tenant.resend.rate_limit_next(retry_after="9")
    tenant.postmark.inactive.add("ada@example.com")
    result = await run(http, tenant, simple_request())
    assert result.verdict is Verdict.FAILED_TRANSIENTLY
    assert [a.outcome for a in result.attempts] == [Outcome.TRANSIENT, Outcome.TRANSIENT, Outcome.PERMANENT]
    # The largest Retry-After of the walk.
    assert result.retry_after_s == 9.0


async def test_a_timeout_is_transient_and_the_walk_moves_on(http: ReceiverClient, tenant: Providers) -> None:
    tenant.sendgrid.script("POST", SENDGRID_SEND, Stall(2.0))
    result = await run(http, tenant, simple_request(), timeout_s=0.3)
    assert outcomes(result) == [("sg", Outcome.TRANSIENT), ("rs", Outcome.ACCEPTED)]
    assert result.attempts[0].status_code == 0


async def test_the_idempotency_key_reaches_resend(http: ReceiverClient, tenant: Providers) -> None:
    tenant.sendgrid.script("POST", SENDGRID_SEND, Reply(500, {"errors": []}))
    first = await run(http, tenant, simple_request())
    tenant.sendgrid.script("POST", SENDGRID_SEND, Reply(500, {"errors": []}))
    again = await run(http, tenant, simple_request())
    keys = [r.headers.get("idempotency-key") for r in tenant.resend.received("POST", RESEND_SEND)]
    assert keys == ["job-0193a1b2", "job-0193a1b2"]
    # The second walk (a retry of the same job) created no second email.
    assert len(tenant.resend.emails) == 1
    assert first.accepted is not None and again.accepted is not None
    assert again.accepted.message_id == first.accepted.message_id


async def test_no_providers_is_permanent(http: ReceiverClient, tenant: Providers) -> None:
    tenant.configs = []
    result = await run(http, tenant, simple_request())
    assert result.verdict is Verdict.FAILED_PERMANENTLY and result.attempts == ()
    assert "no email provider" in result.error


async def test_a_fallback_without_a_pinned_provider_is_refused(http: ReceiverClient, tenant: Providers) -> None:
    result = await run(http, tenant, simple_request(fallback_provider_id="rs"))
    assert result.verdict is Verdict.FAILED_PERMANENTLY and tenant.calls() == {"sg": 0, "rs": 0, "pm": 0}


async def test_an_unusable_credential_is_refused_without_a_call(http: ReceiverClient, tenant: Providers) -> None:
    tenant.configs[1].secret_error = "the sealed credential did not authenticate"
    del tenant.vault.credentials["rs"]  # opening it raises KeyError
    result = await run(http, tenant, simple_request())
    assert outcomes(result) == [("sg", Outcome.PERMANENT), ("rs", Outcome.PERMANENT), ("pm", Outcome.ACCEPTED)]
    assert [a.called for a in result.attempts] == [False, False, True]
    assert "cannot be decrypted" in result.attempts[0].error
    assert "cannot be opened (KeyError)" in result.attempts[1].error
    assert tenant.calls() == {"sg": 0, "rs": 0, "pm": 1}


async def test_a_credential_for_another_kind_is_refused(http: ReceiverClient, tenant: Providers) -> None:
    tenant.vault.credentials["sg"] = credential(common_pb2.EMAIL_PROVIDER_RESEND, RESEND_KEY)
    result = await run(http, tenant, simple_request())
    assert outcomes(result)[0] == ("sg", Outcome.PERMANENT) and tenant.calls()["sg"] == 0


async def test_secrets_stay_out_of_results(http: ReceiverClient, tenant: Providers) -> None:
    """Even a provider that echoes the key back in its error does not get it into a result."""
    tenant.sendgrid.script(
        "POST", SENDGRID_SEND, Reply(400, {"errors": [{"message": f"key {SENDGRID_KEY} is malformed"}]})
    )
    tenant.resend.keys = {}
    tenant.postmark.tokens = set()
    result = await run(http, tenant, simple_request())
    assert result.verdict is Verdict.FAILED_PERMANENTLY
    assert "key **** is malformed" in result.attempts[0].error
    text = repr(result) + result.error
    assert not [secret for secret in SECRETS if secret in text]


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[tuple[SmtpStandIn, str]]:
    certificates = private_ca(tmp_path)
    running = SmtpStandIn("mailer", "relay-pass-2209", tls="starttls", certificates=certificates)
    yield running, certificates.ca_pem
    running.close()


async def test_smtp_in_a_walk_with_the_tenants_private_ca(
    http: ReceiverClient, tenant: Providers, relay: tuple[SmtpStandIn, str]
) -> None:
    server, ca_pem = relay
    tenant.configs.append(config("relay", common_pb2.EMAIL_PROVIDER_SMTP, 99, smtp_ca_pem=ca_pem))
    tenant.vault.credentials["relay"] = credential(
        common_pb2.EMAIL_PROVIDER_SMTP,
        smtp=common_pb2.SmtpSettings(
            host="localhost",
            port=server.port,
            username="mailer",
            password="relay-pass-2209",
            tls_mode=common_pb2.SMTP_TLS_MODE_STARTTLS,
        ),
    )
    result = await run(http, tenant, simple_request())
    assert outcomes(result) == [("relay", Outcome.ACCEPTED)]
    assert result.accepted is not None and result.accepted.provider == "smtp"
    assert server.received[0].over_tls
    assert server.received[0].message["Message-ID"] == f"<{result.accepted.message_id}>"


async def test_a_broken_ca_option_is_permanent(http: ReceiverClient, tenant: Providers) -> None:
    tenant.configs.append(config("relay", common_pb2.EMAIL_PROVIDER_SMTP, 99, smtp_ca_pem="not a certificate"))
    tenant.vault.credentials["relay"] = credential(
        common_pb2.EMAIL_PROVIDER_SMTP, smtp=common_pb2.SmtpSettings(host="127.0.0.1", port=1)
    )
    result = await run(http, tenant, simple_request())
    assert outcomes(result) == [("relay", Outcome.PERMANENT), ("sg", Outcome.ACCEPTED)]
    assert "CA certificate" in result.attempts[0].error


@pytest.mark.parametrize("headers", [{"Bcc": "spy@example.com"}, {"X-Note": "a\r\nBcc: spy@example.com"}])
async def test_a_header_that_would_inject_is_refused_without_calls(
    http: ReceiverClient, tenant: Providers, headers: dict[str, str]
) -> None:
    result = await run(http, tenant, simple_request(headers=headers))
    assert result.verdict is Verdict.FAILED_PERMANENTLY and result.attempts == ()
    assert "header" in result.error and tenant.vault.opened == []
    assert tenant.calls() == {"sg": 0, "rs": 0, "pm": 0}
