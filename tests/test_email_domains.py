"""Sending domains: registered with the tenant's chosen provider (its domain API answers
the DNS records), verified on request; a send from a registered domain that is not
verified yet is refused before any provider is called. A from-domain the tenant never
registered is not Herald's to check (the provider enforces its own sender identity)."""

from __future__ import annotations

import httpx

from tests.standins.herald_email import add_provider, email, send, sent_id
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, wait_for_status

SETTLED = {"delivered", "failed"}


def test_unverified_domain_is_refused_with_no_provider_call_until_verified(
    gateway: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    provider = add_provider(gateway, tenant, resend, priority=1)
    created = httpx.post(
        f"{gateway}/v1/domains",
        json={"domain": "Mail.Acme.Example.", "provider_id": provider},
        headers=tenant.headers,
        timeout=30,
    )
    assert created.status_code == 201, created.text
    domain = created.json()
    assert domain["domain"] == "mail.acme.example" and domain["provider"] == "resend"
    assert domain["verified"] is False and domain["status"] == "pending"
    records = {(r["type"], r["name"]) for r in domain["records"]}
    assert ("TXT", "resend._domainkey.mail.acme.example") in records
    assert ("MX", "send.mail.acme.example") in records
    assert resend.received("POST", "/domains")[0].json() == {"name": "mail.acme.example"}

    # Registered, not verified: refused at the door, no job, no provider call.
    refused = send(gateway, tenant, email(sender="Acme <billing@mail.acme.example>"))
    assert refused.status_code == 422
    problem = refused.json()
    assert problem["type"].endswith("/sender-domain-unverified") and "mail.acme.example" in problem["detail"]
    assert httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers).json()["data"] == []
    assert resend.received("POST", RESEND_SEND) == []

    # A from-domain the tenant never registered is allowed (the provider decides).
    other = sent_id(send(gateway, tenant, email(sender="hello@acme.example")))
    assert wait_for_status(gateway, tenant, other, SETTLED)["status"] == "delivered"

    # Verify before the records are published: still pending.
    checked = httpx.post(f"{gateway}/v1/domains/{domain['id']}/verify", headers=tenant.headers, timeout=30)
    assert checked.status_code == 200 and checked.json()["verified"] is False

    resend.publish_dns("mail.acme.example")
    checked = httpx.post(f"{gateway}/v1/domains/{domain['id']}/verify", headers=tenant.headers, timeout=30)
    assert checked.status_code == 200, checked.text
    assert checked.json()["verified"] is True and checked.json()["verified_at"]
    assert {r["status"] for r in checked.json()["records"]} == {"verified"}

    job_id = sent_id(send(gateway, tenant, email(sender="Acme <billing@mail.acme.example>")))
    assert wait_for_status(gateway, tenant, job_id, SETTLED)["status"] == "delivered"

    listed = httpx.get(f"{gateway}/v1/domains", headers=tenant.headers).json()["data"]
    assert [(d["domain"], d["verified"]) for d in listed] == [("mail.acme.example", True)]
    one = httpx.get(f"{gateway}/v1/domains/{domain['id']}", headers=tenant.headers).json()
    assert one["id"] == domain["id"]

    again = httpx.post(
        f"{gateway}/v1/domains", json={"domain": "mail.acme.example", "provider_id": provider}, headers=tenant.headers
    )
    assert again.status_code == 409


def test_domain_registration_errors_and_deletion(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, operator_token: str
) -> None:
    provider = add_provider(gateway, tenant, sendgrid, priority=1)
    bad = httpx.post(
        f"{gateway}/v1/domains", json={"domain": "not a domain", "provider_id": provider}, headers=tenant.headers
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "domain"
    unknown = httpx.post(
        f"{gateway}/v1/domains",
        json={"domain": "example.org", "provider_id": "00000000-0000-7000-8000-000000000000"},
        headers=tenant.headers,
    )
    assert unknown.status_code == 404

    created = httpx.post(
        f"{gateway}/v1/domains", json={"domain": "news.shop.example", "provider_id": provider}, headers=tenant.headers
    )
    assert created.status_code == 201, created.text
    domain = created.json()
    assert {r["purpose"] for r in domain["records"]} == {"mail_cname", "dkim1", "dkim2"}
    assert all(r["type"] == "CNAME" for r in domain["records"])

    refused = send(gateway, tenant, email(sender="news@news.shop.example"))
    assert refused.status_code == 422 and refused.json()["type"].endswith("/sender-domain-unverified")

    # The provider refuses (the name is in the SendGrid account already): its words come back.
    sendgrid.domains_by_id[1] = {"domain": "dup.shop.example"}
    taken = httpx.post(
        f"{gateway}/v1/domains", json={"domain": "dup.shop.example", "provider_id": provider}, headers=tenant.headers
    )
    assert taken.status_code == 422 and taken.json()["type"].endswith("/provider-refused")
    assert "already exists" in taken.json()["detail"]
    assert [d["domain"] for d in httpx.get(f"{gateway}/v1/domains", headers=tenant.headers).json()["data"]] == [
        "news.shop.example"
    ]

    # Deleting it makes Herald forget the domain: sends from it are no longer checked.
    assert httpx.delete(f"{gateway}/v1/domains/{domain['id']}", headers=tenant.headers).status_code == 204
    assert httpx.get(f"{gateway}/v1/domains/{domain['id']}", headers=tenant.headers).status_code == 404
    assert send(gateway, tenant, email(sender="news@news.shop.example")).status_code == 202
