"""Sending-domain registration and verification through each provider's domain API,
against the stand-ins."""

from __future__ import annotations

import pytest
from herald_email_sender import domains
from herald_email_sender.domains import DnsRecord, DomainError, RecordStatus

from herald.cli.embedded import free_port
from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from tests.email.conftest import POSTMARK_ACCOUNT_TOKEN, POSTMARK_TOKEN, RESEND_KEY, SENDGRID_KEY, config, credential
from tests.standins.postmark import PostmarkStandIn
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import DOMAINS_PATH, SendGridStandIn
from tests.standins.server import Reply

DOMAIN = "mail.acme.example"


async def test_sendgrid_registers_and_verifies(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    provider = config("sg", common_pb2.EMAIL_PROVIDER_SENDGRID, base_url=sendgrid.base_url, sendgrid_subdomain="em7")
    secret = credential(common_pb2.EMAIL_PROVIDER_SENDGRID, SENDGRID_KEY)

    state = await domains.register(http, provider, secret, DOMAIN)
    [created] = sendgrid.received("POST", DOMAINS_PATH)
    assert created.json() == {"domain": DOMAIN, "automatic_security": True, "subdomain": "em7"}
    assert created.headers["authorization"] == f"Bearer {SENDGRID_KEY}"
    assert state.name == DOMAIN and not state.verified and state.provider_domain_id.isdigit()
    assert set(state.records) == {
        DnsRecord("CNAME", f"em7.{DOMAIN}", "u1234.wl.sendgrid.net", RecordStatus.PENDING, "mail_cname"),
        DnsRecord(
            "CNAME", f"s1._domainkey.{DOMAIN}", "s1.domainkey.u1234.wl.sendgrid.net", RecordStatus.PENDING, "dkim1"
        ),
        DnsRecord(
            "CNAME", f"s2._domainkey.{DOMAIN}", "s2.domainkey.u1234.wl.sendgrid.net", RecordStatus.PENDING, "dkim2"
        ),
    }

    # Checked before the records are published: SendGrid says what it expected.
    checked = await domains.verify(http, provider, secret, state.provider_domain_id)
    assert not checked.verified and {r.status for r in checked.records} == {RecordStatus.FAILED}
    assert sendgrid.received("POST", f"{DOMAINS_PATH}/{state.provider_domain_id}/validate")

    sendgrid.publish_dns(DOMAIN)
    verified = await domains.verify(http, provider, secret, state.provider_domain_id)
    assert verified.verified and {r.status for r in verified.records} == {RecordStatus.VERIFIED}
    again = await domains.get(http, provider, secret, state.provider_domain_id)
    assert again == verified


async def test_sendgrid_without_automatic_security_gives_mx_and_txt(
    http: ReceiverClient, sendgrid: SendGridStandIn
) -> None:
    sendgrid.add_key(SENDGRID_KEY)
    provider = config(
        "sg", common_pb2.EMAIL_PROVIDER_SENDGRID, base_url=sendgrid.base_url, sendgrid_automatic_security="false"
    )
    state = await domains.register(http, provider, credential(common_pb2.EMAIL_PROVIDER_SENDGRID, SENDGRID_KEY), DOMAIN)
    assert sorted(r.type for r in state.records) == ["MX", "TXT", "TXT"]


async def test_sendgrid_refusals_and_outages(http: ReceiverClient, sendgrid: SendGridStandIn) -> None:
    provider = config("sg", common_pb2.EMAIL_PROVIDER_SENDGRID, base_url=sendgrid.base_url)
    secret = credential(common_pb2.EMAIL_PROVIDER_SENDGRID, SENDGRID_KEY)
    with pytest.raises(DomainError) as refused:
        await domains.register(http, provider, secret, DOMAIN)
    assert not refused.value.transient and refused.value.status_code == 401
    assert SENDGRID_KEY not in str(refused.value)

    sendgrid.add_key(SENDGRID_KEY)
    sendgrid.script("POST", DOMAINS_PATH, Reply(503, {"errors": [{"message": "unavailable"}]}))
    with pytest.raises(DomainError) as outage:
        await domains.register(http, provider, secret, DOMAIN)
    assert outage.value.transient and outage.value.status_code == 503


async def test_resend_registers_and_verifies(http: ReceiverClient, resend: ResendStandIn) -> None:
    resend.add_key(RESEND_KEY)
    provider = config("rs", common_pb2.EMAIL_PROVIDER_RESEND, base_url=resend.base_url, resend_region="eu-west-1")
    secret = credential(common_pb2.EMAIL_PROVIDER_RESEND, RESEND_KEY)

    state = await domains.register(http, provider, secret, DOMAIN)
    assert resend.received("POST", "/domains")[0].json() == {"name": DOMAIN, "region": "eu-west-1"}
    assert not state.verified and state.provider_status == "not_started"
    # Resend's relative names come back fully qualified.
    assert state.records == (
        DnsRecord(
            "MX", f"send.{DOMAIN}", "feedback-smtp.eu-west-1.amazonses.com", RecordStatus.PENDING, "SPF", priority=10
        ),
        DnsRecord("TXT", f"send.{DOMAIN}", '"v=spf1 include:amazonses.com ~all"', RecordStatus.PENDING, "SPF"),
        DnsRecord(
            "TXT",
            f"resend._domainkey.{DOMAIN}",
            "p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDsc4Lh8xilsngyKEgN2S84",
            RecordStatus.PENDING,
            "DKIM",
        ),
    )

    pending = await domains.verify(http, provider, secret, state.provider_domain_id)
    assert not pending.verified and pending.provider_status == "pending"
    resend.publish_dns(DOMAIN)
    verified = await domains.verify(http, provider, secret, state.provider_domain_id)
    assert verified.verified and {r.status for r in verified.records} == {RecordStatus.VERIFIED}
    assert len(resend.received("POST", f"/domains/{state.provider_domain_id}/verify")) == 2
    assert (await domains.get(http, provider, secret, state.provider_domain_id)).verified


async def test_resend_needs_a_full_access_key_for_domains(http: ReceiverClient, resend: ResendStandIn) -> None:
    resend.add_key(RESEND_KEY, "sending_access")
    provider = config("rs", common_pb2.EMAIL_PROVIDER_RESEND, base_url=resend.base_url)
    with pytest.raises(DomainError, match="restricted_api_key") as refused:
        await domains.register(http, provider, credential(common_pb2.EMAIL_PROVIDER_RESEND, RESEND_KEY), DOMAIN)
    assert not refused.value.transient


async def test_postmark_registers_and_verifies_with_the_account_token(
    http: ReceiverClient, postmark: PostmarkStandIn
) -> None:
    postmark.add_token(POSTMARK_TOKEN)
    postmark.add_account_token(POSTMARK_ACCOUNT_TOKEN)
    provider = config(
        "pm",
        common_pb2.EMAIL_PROVIDER_POSTMARK,
        base_url=postmark.base_url,
        postmark_return_path_domain=f"pm-bounces.{DOMAIN}",
    )
    # The account token travels in the (sealed) credential, beside the server token.
    secret = credential(common_pb2.EMAIL_PROVIDER_POSTMARK, POSTMARK_TOKEN)
    secret.account_token = POSTMARK_ACCOUNT_TOKEN

    state = await domains.register(http, provider, secret, DOMAIN)
    [created] = postmark.received("POST", "/domains")
    assert created.headers["x-postmark-account-token"] == POSTMARK_ACCOUNT_TOKEN
    assert "x-postmark-server-token" not in created.headers
    assert created.json() == {"Name": DOMAIN, "ReturnPathDomain": f"pm-bounces.{DOMAIN}"}
    assert not state.verified
    assert state.records == (
        DnsRecord(
            "TXT",
            f"20260101000000pm._domainkey.{DOMAIN}",
            "k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCFn",
            RecordStatus.PENDING,
            "DKIM",
        ),
        DnsRecord("CNAME", f"pm-bounces.{DOMAIN}", "pm.mtasv.net", RecordStatus.PENDING, "Return-Path"),
    )

    postmark.publish_dns(DOMAIN)
    verified = await domains.verify(http, provider, secret, state.provider_domain_id)
    assert verified.verified and {r.status for r in verified.records} == {RecordStatus.VERIFIED}
    root = f"/domains/{state.provider_domain_id}"
    assert postmark.received("PUT", f"{root}/verifyDkim") and postmark.received("PUT", f"{root}/verifyReturnPath")
    fetched = await domains.get(http, provider, secret, state.provider_domain_id)
    assert fetched.verified


async def test_postmark_without_an_account_token(http: ReceiverClient, postmark: PostmarkStandIn) -> None:
    postmark.add_token(POSTMARK_TOKEN)
    provider = config("pm", common_pb2.EMAIL_PROVIDER_POSTMARK, base_url=postmark.base_url)
    secret = credential(common_pb2.EMAIL_PROVIDER_POSTMARK, POSTMARK_TOKEN)
    with pytest.raises(DomainError, match="account token"):
        await domains.register(http, provider, secret, DOMAIN)
    assert postmark.requests == []
    # The server token in the account header: Postmark refuses it, and the error says why.
    with pytest.raises(DomainError, match="needs the Postmark account token") as refused:
        secret.account_token = POSTMARK_TOKEN
        await domains.register(http, provider, secret, DOMAIN)
    assert refused.value.status_code == 401 and POSTMARK_TOKEN not in str(refused.value)


async def test_smtp_has_no_domain_api(http: ReceiverClient) -> None:
    provider = config("relay", common_pb2.EMAIL_PROVIDER_SMTP)
    with pytest.raises(DomainError, match="no domain API"):
        await domains.register(http, provider, credential(common_pb2.EMAIL_PROVIDER_SMTP), DOMAIN)


async def test_an_unreachable_provider_is_transient(http: ReceiverClient) -> None:
    provider = config("rs", common_pb2.EMAIL_PROVIDER_RESEND, base_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(DomainError) as outage:
        await domains.verify(http, provider, credential(common_pb2.EMAIL_PROVIDER_RESEND, RESEND_KEY), "d-1")
    assert outage.value.transient
