"""A tenant's email provider is a target the tenant aims (base URL, SMTP relay): the target guard
that protects webhooks refuses non-public endpoints when a provider is created and when it is
updated (a PATCH of the base URL alone included), with one answer whatever lives there."""

from __future__ import annotations

import httpx
import pytest

from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, remember_secret

SENDGRID_KEY = "SG.guardTestKeyAbCdEfGh.IjKlMnOpQrStUvWxYz0123"
# Metadata service, a private address with a port, the same in hex, IPv6 mapped, a metadata name.
INTERNAL_URLS = [
    "http://169.254.169.254/",
    "http://10.0.0.5:8080",
    "http://0x0a000005:8081",
    "http://[::ffff:10.0.0.5]/",
    "http://metadata.google.internal/",
    "http://no-such-name.invalid/",
]


def _refusal(response: httpx.Response, field: str) -> str:
    assert response.status_code == 422, response.text
    problem = response.json()
    [error] = [e for e in problem["errors"] if e["field"] == field]
    return str(error["detail"])


def test_internal_base_urls_are_refused_alike_at_create(gateway: str, tenant: TenantKey) -> None:
    key = remember_secret(SENDGRID_KEY)
    details = {
        _refusal(
            httpx.post(
                f"{gateway}/v1/providers",
                json={"provider": "sendgrid", "api_key": key, "base_url": url},
                headers=tenant.headers,
                timeout=30,
            ),
            "base_url",
        )
        for url in INTERNAL_URLS
    }
    # One answer for every address: it tells nothing about which one answers or resolves.
    assert len(details) == 1, details
    assert httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"] == []


@pytest.mark.parametrize("host", ["169.254.169.254", "10.0.0.5", "2130706433x.invalid", "fd00::1"])
def test_internal_smtp_relays_are_refused(gateway: str, tenant: TenantKey, host: str) -> None:
    smtp = {"host": host, "port": 25, "username": "u", "password": remember_secret("smtp-guard-pass-1234")}
    response = httpx.post(
        f"{gateway}/v1/providers", json={"provider": "smtp", "smtp": smtp}, headers=tenant.headers, timeout=30
    )
    assert "does not connect" in _refusal(response, "smtp.host")


def test_a_patch_of_the_base_url_alone_is_checked(gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn) -> None:
    key = remember_secret(sendgrid.add_key(SENDGRID_KEY))
    created = httpx.post(
        f"{gateway}/v1/providers",
        json={"provider": "sendgrid", "api_key": key, "base_url": sendgrid.base_url},
        headers=tenant.headers,
        timeout=30,
    )
    assert created.status_code == 201, created.text
    provider = created.json()
    for url in ("http://169.254.169.254/latest/meta-data", "http://10.0.0.5:8080"):
        response = httpx.patch(
            f"{gateway}/v1/providers/{provider['id']}", json={"base_url": url}, headers=tenant.headers, timeout=30
        )
        assert "does not connect" in _refusal(response, "base_url")
    [listed] = httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"]
    assert listed["base_url"] == sendgrid.base_url
