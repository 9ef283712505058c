"""Provider credentials: checked with the provider first, stored sealed, shown masked,
and a sealed value that was tampered with or moved fails loudly."""

from __future__ import annotations

import httpx
import pytest

from herald.cli.stack import Stack
from tests.standins.postmark import PostmarkStandIn
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.standins.smtp import SmtpStandIn
from tests.support.api import TenantKey, create_tenant, remember_secret
from tests.support.infra import query

SENDGRID_KEY = "SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789abcd"


def add(gateway: str, tenant: TenantKey, body: dict[str, object]) -> httpx.Response:
    return httpx.post(f"{gateway}/v1/providers", json=body, headers=tenant.headers, timeout=30)


def test_sendgrid_key_is_validated_sealed_and_masked(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, infra: dict[str, str], stack: Stack
) -> None:
    key = remember_secret(sendgrid.add_key(SENDGRID_KEY))
    response = add(
        gateway, tenant, {"provider": "sendgrid", "api_key": key, "priority": 10, "base_url": sendgrid.base_url}
    )
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["masked_secret"] == "SG.****abcd"
    assert key not in response.text
    assert sendgrid.requests[-1].path == "/v3/scopes"
    assert sendgrid.requests[-1].headers["authorization"] == f"Bearer {key}"

    [row] = query(
        infra["database_url"], "SELECT sealed, key_id FROM provider_credentials WHERE id = $1::uuid", created["id"]
    )
    # Sealed under the ledger's active master key (a rotation test may have made it k2 already).
    active_key_id = stack.services["ledger"].env["HERALD_MASTER_KEY_ID"]
    assert key.encode() not in bytes(row["sealed"]) and row["key_id"] == active_key_id


@pytest.mark.parametrize(
    ("scopes", "detail"),
    [(None, "rejected the credential"), (["user.profile.read"], "lacks the mail.send permission")],
)
def test_rejected_sendgrid_key_is_refused_and_not_stored(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, scopes: list[str] | None, detail: str
) -> None:
    key = remember_secret("SG.not-a-good-key-0000000000000000")
    if scopes is not None:
        sendgrid.add_key(key, scopes)
    response = add(gateway, tenant, {"provider": "sendgrid", "api_key": key, "base_url": sendgrid.base_url})
    assert response.status_code == 422
    problem = response.json()
    assert problem["type"].endswith("/invalid-credential") and detail in problem["detail"]
    assert key not in response.text
    listed = httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"]
    assert listed == []


def test_unreachable_provider_is_503_and_nothing_stored(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn
) -> None:
    sendgrid.fail_with = 503
    response = add(
        gateway, tenant, {"provider": "sendgrid", "api_key": "SG.whatever-123456789", "base_url": sendgrid.base_url}
    )
    assert response.status_code == 503
    assert response.json()["type"].endswith("/provider-unreachable")
    assert httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"] == []


def test_resend_postmark_and_smtp_validation(
    gateway: str, tenant: TenantKey, resend: ResendStandIn, postmark: PostmarkStandIn
) -> None:
    # A Resend key limited to sending is genuine: accepted.
    sending_only = remember_secret(resend.add_key("re_SendOnly_1234567890abcdef", "sending_access"))
    assert (
        add(gateway, tenant, {"provider": "resend", "api_key": sending_only, "base_url": resend.base_url}).status_code
        == 201
    )
    assert (
        add(
            gateway, tenant, {"provider": "resend", "api_key": "re_wrong_000000000000", "base_url": resend.base_url}
        ).status_code
        == 422
    )
    token = remember_secret(postmark.add_token("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"))
    assert (
        add(gateway, tenant, {"provider": "postmark", "api_key": token, "base_url": postmark.base_url}).status_code
        == 201
    )
    assert postmark.requests[-1].headers["x-postmark-server-token"] == token
    assert (
        add(
            gateway, tenant, {"provider": "postmark", "api_key": "nope-token", "base_url": postmark.base_url}
        ).status_code
        == 422
    )

    smtp = SmtpStandIn("mailer", remember_secret("smtp-password-31337"))
    try:
        good = {
            "host": "127.0.0.1",
            "port": smtp.port,
            "username": "mailer",
            "password": "smtp-password-31337",
            "tls_mode": "none",
        }
        created = add(gateway, tenant, {"provider": "smtp", "smtp": good})
        assert created.status_code == 201, created.text
        assert created.json()["smtp"] == {
            "host": "127.0.0.1",
            "port": smtp.port,
            "username": "mailer",
            "tls_mode": "none",
        }
        assert created.json()["masked_secret"] == "****37"
        bad = {**good, "password": "wrong-password"}
        assert add(gateway, tenant, {"provider": "smtp", "smtp": bad}).status_code == 422
    finally:
        smtp.close()


def test_list_reorder_update_delete(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, postmark: PostmarkStandIn
) -> None:
    first = add(
        gateway,
        tenant,
        {
            "provider": "sendgrid",
            "api_key": remember_secret(sendgrid.add_key("SG.first-key-aaaaaaaaaaaa1111")),
            "priority": 1,
            "base_url": sendgrid.base_url,
        },
    ).json()
    second = add(
        gateway,
        tenant,
        {
            "provider": "postmark",
            "api_key": remember_secret(postmark.add_token("second-token-bbbbbbbb2222")),
            "priority": 2,
            "base_url": postmark.base_url,
        },
    ).json()

    def order() -> list[str]:
        return [p["id"] for p in httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"]]

    assert order() == [second["id"], first["id"]]
    patched = httpx.patch(f"{gateway}/v1/providers/{first['id']}", json={"priority": 5}, headers=tenant.headers)
    assert patched.status_code == 200
    assert order() == [first["id"], second["id"]]

    replacement = remember_secret(sendgrid.add_key("SG.replacement-key-cccc3333"))
    patched = httpx.patch(
        f"{gateway}/v1/providers/{first['id']}", json={"api_key": replacement}, headers=tenant.headers, timeout=30
    )
    assert patched.status_code == 200 and patched.json()["masked_secret"] == "SG.****3333"
    refused = httpx.patch(
        f"{gateway}/v1/providers/{first['id']}",
        json={"api_key": "SG.unknown-key-000000"},
        headers=tenant.headers,
        timeout=30,
    )
    assert refused.status_code == 422
    assert httpx.delete(f"{gateway}/v1/providers/{second['id']}", headers=tenant.headers).status_code == 204
    assert order() == [first["id"]]


def test_another_tenants_provider_is_not_found(
    gateway: str, tenant: TenantKey, operator_token: str, sendgrid: SendGridStandIn
) -> None:
    created = add(
        gateway,
        tenant,
        {
            "provider": "sendgrid",
            "api_key": remember_secret(sendgrid.add_key("SG.owned-key-dddd4444")),
            "base_url": sendgrid.base_url,
        },
    ).json()
    other = create_tenant(gateway, operator_token, "provider-thief")
    assert (
        httpx.patch(f"{gateway}/v1/providers/{created['id']}", json={"priority": 9}, headers=other.headers).status_code
        == 404
    )
    assert httpx.delete(f"{gateway}/v1/providers/{created['id']}", headers=other.headers).status_code == 404
    assert httpx.get(f"{gateway}/v1/providers", headers=other.headers).json()["data"] == []


def test_tampered_or_moved_ciphertext_fails_loudly(
    gateway: str, tenant: TenantKey, operator_token: str, sendgrid: SendGridStandIn, infra: dict[str, str]
) -> None:
    other = create_tenant(gateway, operator_token, "other-owner")
    mine = add(
        gateway,
        tenant,
        {
            "provider": "sendgrid",
            "api_key": remember_secret(sendgrid.add_key("SG.mine-key-eeee5555")),
            "base_url": sendgrid.base_url,
        },
    ).json()
    theirs = add(
        gateway,
        other,
        {
            "provider": "sendgrid",
            "api_key": remember_secret(sendgrid.add_key("SG.theirs-key-ffff6666")),
            "base_url": sendgrid.base_url,
        },
    ).json()

    # Flip the bits of one byte of my ciphertext (XOR: setting it to a fixed value left it
    # unchanged whenever the byte already had that value, one run in 256).
    query(
        infra["database_url"],
        "UPDATE provider_credentials SET sealed = set_byte(sealed, 29, get_byte(sealed, 29) # 255) WHERE id = $1::uuid",
        mine["id"],
    )
    [mine_listed] = httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"]
    assert mine_listed["masked_secret"] is None
    assert "failed authentication" in mine_listed["secret_error"]

    # A valid ciphertext of tenant B placed on a row of tenant A fails too.
    moved = add(
        gateway,
        tenant,
        {
            "provider": "sendgrid",
            "api_key": remember_secret(sendgrid.add_key("SG.target-key-gggg7777")),
            "base_url": sendgrid.base_url,
        },
    ).json()
    query(
        infra["database_url"],
        "UPDATE provider_credentials SET sealed = (SELECT sealed FROM provider_credentials WHERE id = $1::uuid)"
        " WHERE id = $2::uuid",
        theirs["id"],
        moved["id"],
    )
    listed = {p["id"]: p for p in httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"]}
    assert listed[moved["id"]]["masked_secret"] is None
    assert "failed authentication" in listed[moved["id"]]["secret_error"]
    # The owner's own row still opens.
    [theirs_listed] = httpx.get(f"{gateway}/v1/providers", headers=other.headers).json()["data"]
    assert theirs_listed["masked_secret"] == "SG.****6666"
