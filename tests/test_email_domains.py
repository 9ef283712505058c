"""Sending domains: registered with the tenant's chosen provider (its domain API answers
the DNS records), verified on request; a send from a registered domain that is not
verified yet is refused before any provider is called. A from-domain the tenant never
registered is not Herald's to check (the provider enforces its own sender identity).
The same over gRPC (NotificationService), tenant-scoped. Postmark's account token is
stored sealed with the provider's credential, shown masked, and used for domain calls."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import grpc
import httpx

from herald.cli.stack import Stack
from herald.grpcio.errors import field_violations
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.standins.herald_email import add_provider, email, send, sent_id
from tests.standins.postmark import PostmarkStandIn
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, create_tenant, remember_secret, wait_for_status
from tests.support.infra import query

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


def grpc_error(call: Callable[[], Any]) -> grpc.RpcError:
    try:
        call()
    except grpc.RpcError as error:
        return error
    raise AssertionError("the call was answered")


def test_domains_over_grpc_mirror_rest_and_stay_within_the_tenant(
    stack: Stack, gateway: str, operator_token: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    provider = add_provider(gateway, tenant, resend, priority=1)
    other = create_tenant(gateway, operator_token, "domains-grpc-other")
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        mine = (("authorization", f"Bearer {tenant.api_key}"),)
        theirs = (("authorization", f"Bearer {other.api_key}"),)

        created = api.CreateDomain(
            gateway_pb2.NotificationServiceCreateDomainRequest(domain="Post.Grpc.Example", provider_id=provider),
            metadata=mine,
            timeout=60,
        ).domain
        assert created.name == "post.grpc.example" and created.provider == common_pb2.EMAIL_PROVIDER_RESEND
        assert not created.verified and created.tenant_id == tenant.tenant_id
        assert ("TXT", "resend._domainkey.post.grpc.example") in {(r.type, r.name) for r in created.records}
        # The same domain over REST: one resource, two doors.
        rest = httpx.get(f"{gateway}/v1/domains/{created.id}", headers=tenant.headers).json()
        assert rest["domain"] == created.name and len(rest["records"]) == len(created.records)

        refused = send(gateway, tenant, email(sender="a@post.grpc.example"))
        assert refused.status_code == 422 and refused.json()["type"].endswith("/sender-domain-unverified")

        resend.publish_dns("post.grpc.example")
        verified = api.VerifyDomain(
            gateway_pb2.NotificationServiceVerifyDomainRequest(id=created.id), metadata=mine, timeout=60
        ).domain
        assert verified.verified and verified.HasField("verified_at")
        got = api.GetDomain(gateway_pb2.NotificationServiceGetDomainRequest(id=created.id), metadata=mine, timeout=10)
        assert got.domain.verified and got.domain.id == created.id
        listed = api.ListDomains(gateway_pb2.NotificationServiceListDomainsRequest(), metadata=mine, timeout=10)
        assert [d.id for d in listed.domains] == [created.id]

        # Another tenant: A's domain and A's provider are indistinguishable from missing ones.
        for call in (
            lambda: api.GetDomain(gateway_pb2.NotificationServiceGetDomainRequest(id=created.id), metadata=theirs),
            lambda: api.VerifyDomain(
                gateway_pb2.NotificationServiceVerifyDomainRequest(id=created.id), metadata=theirs
            ),
            lambda: api.CreateDomain(
                gateway_pb2.NotificationServiceCreateDomainRequest(domain="x.grpc.example", provider_id=provider),
                metadata=theirs,
            ),
        ):
            assert grpc_error(call).code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]
        assert api.ListDomains(gateway_pb2.NotificationServiceListDomainsRequest(), metadata=theirs).domains == []

        # Errors are rich statuses: which field, what is wrong.
        bad = grpc_error(
            lambda: api.CreateDomain(
                gateway_pb2.NotificationServiceCreateDomainRequest(domain="not a domain", provider_id=provider),
                metadata=mine,
            )
        )
        assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
        assert [f for f, _ in field_violations(bad)] == ["domain"]  # type: ignore[arg-type]
        twice = grpc_error(
            lambda: api.CreateDomain(
                gateway_pb2.NotificationServiceCreateDomainRequest(domain="post.grpc.example", provider_id=provider),
                metadata=mine,
            )
        )
        assert twice.code() == grpc.StatusCode.ALREADY_EXISTS  # type: ignore[attr-defined]
        resend.fail_with = 403
        refused_by_provider = grpc_error(
            lambda: api.CreateDomain(
                gateway_pb2.NotificationServiceCreateDomainRequest(domain="no.grpc.example", provider_id=provider),
                metadata=mine,
                timeout=60,
            )
        )
        assert refused_by_provider.code() == grpc.StatusCode.FAILED_PRECONDITION  # type: ignore[attr-defined]
        missing = grpc_error(
            lambda: api.GetDomain(gateway_pb2.NotificationServiceGetDomainRequest(id="nope"), metadata=mine)
        )
        assert missing.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]


def test_postmark_account_token_is_stored_sealed_shown_masked_and_used_for_domains(
    gateway: str, tenant: TenantKey, postmark: PostmarkStandIn, sendgrid: SendGridStandIn, infra: dict[str, str]
) -> None:
    server_token = remember_secret(postmark.add_token(f"pm-server-{secrets.token_hex(8)}-4e29"))
    account_token = remember_secret(f"pm-account-{secrets.token_hex(12)}")
    body = {"provider": "postmark", "api_key": server_token, "base_url": postmark.base_url}

    # Checked with Postmark's account API before anything is stored.
    unknown = httpx.post(
        f"{gateway}/v1/providers", json={**body, "account_token": account_token}, headers=tenant.headers
    )
    assert unknown.status_code == 422 and "account token" in unknown.json()["detail"]
    assert httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"] == []
    postmark.add_account_token(account_token)
    created = httpx.post(
        f"{gateway}/v1/providers", json={**body, "account_token": account_token}, headers=tenant.headers
    )
    assert created.status_code == 201, created.text
    provider = created.json()
    assert provider["masked_account_token"] == f"****{account_token[-2:]}"
    assert account_token not in created.text
    assert [r.headers["x-postmark-account-token"] for r in postmark.received("GET", "/domains")] == [
        account_token,
        account_token,
    ]
    # Sealed in the credential's envelope: not in any column in clear.
    [row] = query(infra["database_url"], "SELECT * FROM provider_credentials WHERE id = $1::uuid", provider["id"])
    assert all(account_token.encode() not in (v if isinstance(v, bytes) else str(v).encode()) for v in row.values())

    # Domain calls use the stored token; the request no longer carries one.
    domain = httpx.post(
        f"{gateway}/v1/domains",
        json={"domain": "pm.acme.example", "provider_id": provider["id"]},
        headers=tenant.headers,
    )
    assert domain.status_code == 201, domain.text
    [registered] = postmark.received("POST", "/domains")
    assert registered.headers["x-postmark-account-token"] == account_token
    assert "x-postmark-server-token" not in registered.headers
    passed = httpx.post(
        f"{gateway}/v1/domains",
        json={"domain": "pm2.acme.example", "provider_id": provider["id"], "account_token": account_token},
        headers=tenant.headers,
    )
    assert passed.status_code == 422 and passed.json()["errors"][0]["field"] == "account_token"

    # A new server token keeps the stored account token; verification still reaches Postmark with it.
    new_server = remember_secret(postmark.add_token(f"pm-server-{secrets.token_hex(8)}-7f3a"))
    patched = httpx.patch(
        f"{gateway}/v1/providers/{provider['id']}", json={"api_key": new_server}, headers=tenant.headers
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["masked_account_token"] == provider["masked_account_token"]
    postmark.publish_dns("pm.acme.example")
    verified = httpx.post(f"{gateway}/v1/domains/{domain.json()['id']}/verify", headers=tenant.headers)
    assert verified.status_code == 200 and verified.json()["verified"] is True
    assert {r.headers["x-postmark-account-token"] for r in postmark.requests if r.method == "PUT"} == {account_token}

    # Replacing or removing the account token alone keeps the server token (sending still works).
    rotated = remember_secret(postmark.add_account_token(f"pm-account-{secrets.token_hex(12)}"))
    changed = httpx.patch(
        f"{gateway}/v1/providers/{provider['id']}", json={"account_token": rotated}, headers=tenant.headers
    )
    assert changed.status_code == 200 and changed.json()["masked_account_token"] == f"****{rotated[-2:]}"
    assert changed.json()["masked_secret"] == patched.json()["masked_secret"]
    removed = httpx.patch(
        f"{gateway}/v1/providers/{provider['id']}", json={"account_token": ""}, headers=tenant.headers
    )
    assert removed.status_code == 200 and removed.json()["masked_account_token"] is None
    job_id = sent_id(send(gateway, tenant, email(sender="hello@pm.acme.example")))
    assert wait_for_status(gateway, tenant, job_id, SETTLED)["status"] == "delivered"
    no_token = httpx.post(
        f"{gateway}/v1/domains",
        json={"domain": "pm3.acme.example", "provider_id": provider["id"]},
        headers=tenant.headers,
    )
    assert no_token.status_code == 422 and "account token" in no_token.json()["detail"]

    # Only Postmark takes one.
    sg_key = remember_secret(sendgrid.add_key(f"SG.acct-{secrets.token_hex(6)}.{secrets.token_hex(10)}"))
    wrong_kind = httpx.post(
        f"{gateway}/v1/providers",
        json={"provider": "sendgrid", "api_key": sg_key, "base_url": sendgrid.base_url, "account_token": "x" * 20},
        headers=tenant.headers,
    )
    assert wrong_kind.status_code == 422 and wrong_kind.json()["errors"][0]["field"] == "account_token"
