"""Platform email (Herald's own mail): the 80 % and 100 % quota warnings go to the
tenant's contact address through the platform provider from settings, as CRITICAL jobs of
their own work class, once per tenant, month and threshold, and are logged in the
platform email log."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import PLATFORM_FROM
from tests.standins.herald_email import email, send, sent_id, wait_until
from tests.standins.resend import ResendStandIn
from tests.support.api import TenantKey, remember_secret
from tests.support.infra import query


def admin(operator_token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {operator_token}"}


def test_quota_warnings_at_80_and_100_percent_go_out_once_as_platform_email(
    gateway: str, operator_token: str, platform_mail: ResendStandIn, infra: dict[str, str]
) -> None:
    created = httpx.post(
        f"{gateway}/admin/v1/tenants",
        json={"name": "Quota Watch", "plan": "startup", "contact_email": "Ops@QuotaWatch.example"},
        headers=admin(operator_token),
    )
    assert created.status_code == 201, created.text
    tenant = TenantKey(created.json()["tenant_id"], remember_secret(created.json()["api_key"]))
    shown = httpx.get(f"{gateway}/admin/v1/tenants/{tenant.tenant_id}", headers=admin(operator_token)).json()
    assert shown["contact_email"] == "Ops@quotawatch.example"
    limits = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json={"emails_per_month": 5},
        headers=admin(operator_token),
    )
    assert limits.status_code == 200

    def warnings() -> list[dict[str, object]]:
        return [body for body in list(platform_mail.emails.values()) if body["to"] == ["Ops@quotawatch.example"]]

    for _ in range(3):
        sent_id(send(gateway, tenant, email()))
    assert warnings() == []
    sent_id(send(gateway, tenant, email()))  # 4 of 5: 80 %
    assert wait_until(lambda: len(warnings()) == 1)
    [first] = warnings()
    assert first["from"] == PLATFORM_FROM
    assert "80%" in str(first["subject"]) and "4 of its 5 emails" in str(first["text"])

    sent_id(send(gateway, tenant, email()))  # 5 of 5: 100 %
    assert wait_until(lambda: len(warnings()) == 2)
    over = send(gateway, tenant, email())
    assert over.status_code == 429 and over.json()["type"].endswith("/quota-exceeded")
    wait_until(lambda: False, timeout=2.0)
    subjects = sorted(str(w["subject"]) for w in warnings())
    assert len(subjects) == 2 and "monthly limit of 5 emails" in subjects[0]

    def logged() -> list[Any]:
        return query(
            infra["database_url"],
            "SELECT p.kind, p.status, p.recipient, p.provider_message_id, j.channel, j.priority,"
            " j.status AS job_status FROM platform_emails p JOIN jobs j ON j.id = p.id"
            " WHERE p.tenant_id = $1::uuid ORDER BY p.kind",
            tenant.tenant_id,
        )

    assert wait_until(lambda: [r["status"] for r in logged()] == ["delivered", "delivered"])
    log = logged()
    assert [(r["kind"], r["status"], r["channel"], r["priority"], r["job_status"]) for r in log] == [
        ("quota_warning_100", "delivered", "platform_email", "critical", "DELIVERED"),
        ("quota_warning_80", "delivered", "platform_email", "critical", "DELIVERED"),
    ]
    assert {r["provider_message_id"] for r in log} <= set(platform_mail.emails)
