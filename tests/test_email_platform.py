"""Platform email (Herald's own mail), through the platform provider from settings, as
CRITICAL jobs of their own work class, logged in the platform email log:
- the 80 % and 100 % quota warnings go to the tenant's contact address, once per tenant,
  month and threshold;
- dead letters (email and webhook) alert operators by email (HERALD_ALERT_EMAIL_TO) through
  the same rate-limited alerter as Slack, so a burst becomes one summary mail;
- a new API key is announced to the tenant's contact address (name and prefix, never the key);
- operators read the log (REST and gRPC): newest first, paginated, filtered by kind and tenant."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

import grpc
import httpx

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.conftest import ALERT_EMAIL_TO, PLATFORM_FROM, TEST_ENV
from tests.standins.herald_email import add_provider, email, send, sent_id, wait_until
from tests.standins.resend import ResendStandIn
from tests.support.api import TenantKey, remember_secret, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Receiver

PLATFORM_TENANT = "00000000-0000-0000-0000-000000000000"


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
        return [
            body
            for body in list(platform_mail.emails.values())
            if body["to"] == ["Ops@quotawatch.example"] and "API key" not in str(body["subject"])
        ]

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
            " WHERE p.tenant_id = $1::uuid AND p.kind LIKE 'quota%' ORDER BY p.kind",
            tenant.tenant_id,
        )

    assert wait_until(lambda: [r["status"] for r in logged()] == ["delivered", "delivered"])
    log = logged()
    assert [(r["kind"], r["status"], r["channel"], r["priority"], r["job_status"]) for r in log] == [
        ("quota_warning_100", "delivered", "platform_email", "critical", "DELIVERED"),
        ("quota_warning_80", "delivered", "platform_email", "critical", "DELIVERED"),
    ]
    assert {r["provider_message_id"] for r in log} <= set(platform_mail.emails)


def platform_log(gateway: str, operator_token: str, **params: str) -> list[dict[str, Any]]:
    """Every page of GET /admin/v1/platform-emails."""
    entries: list[dict[str, Any]] = []
    cursor = None
    while True:
        query_params = {**params, **({"cursor": cursor} if cursor else {})}
        page = httpx.get(f"{gateway}/admin/v1/platform-emails", params=query_params, headers=admin(operator_token))
        assert page.status_code == 200, page.text
        entries += page.json()["data"]
        cursor = page.json()["next_cursor"]
        if not cursor:
            return entries


def test_dead_letters_alert_operators_by_platform_email_one_summary_for_a_burst(
    gateway: str,
    operator_token: str,
    tenant: TenantKey,
    receiver: Receiver,
    resend: ResendStandIn,
    platform_mail: ResendStandIn,
) -> None:
    # A burst: four webhooks and one email run out of attempts at about the same time.
    receiver.behaviour.status = 503
    add_provider(gateway, tenant, resend, priority=1)
    resend.fail_with = 502
    webhooks = []
    for n in range(4):
        sent = httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=tenant.headers
        )
        assert sent.status_code == 202, sent.text
        webhooks.append(sent.json()["id"])
    mail_job = sent_id(send(gateway, tenant, email(to="gil@example.com")))
    failed = {job_id: wait_for_status(gateway, tenant, job_id, timeout=60) for job_id in [*webhooks, mail_job]}
    assert {job["status"] for job in failed.values()} == {"failed"}
    dead_lettered_at = [datetime.fromisoformat(failed[job_id]["updated_at"]) for job_id in webhooks]
    burst_s = (max(dead_lettered_at) - min(dead_lettered_at)).total_seconds()

    def alert_mails(job_ids: list[str]) -> list[dict[str, Any]]:
        return [
            body
            for body in list(platform_mail.emails.values())
            if body["to"] == list(ALERT_EMAIL_TO) and any(j in str(body["text"]) for j in job_ids)
        ]

    def every_job_named() -> bool:
        text = " ".join(str(m["text"]) for m in alert_mails([*webhooks, mail_job]))
        return all(j in text for j in [*webhooks, mail_job])

    assert wait_until(every_job_named, timeout=30), "every dead letter reached the operators by email"
    # The first dead letter alerts at once, the rest wait for one summary at the window's end:
    # at most one mail per window, so four webhooks failing within a window make two mails.
    # (Retries run with jitter: on a loaded machine the four may spread over more windows.)
    window_s = float(TEST_ENV["HERALD_ALERT_WINDOW_S"])
    assert 1 <= len(alert_mails(webhooks)) <= 1 + math.ceil(burst_s / window_s)
    for mail in alert_mails([*webhooks, mail_job]):
        assert mail["from"] == PLATFORM_FROM and "dead-letter queue" in str(mail["subject"])
        assert "herald dlq retry" in str(mail["text"])
    [email_alert] = alert_mails([mail_job])
    assert "email-sender" in str(email_alert["subject"]) and "502" in str(email_alert["text"])

    # Logged as platform email of the platform's own tenant: no customer sees these jobs.
    def logged() -> list[dict[str, Any]]:
        sent_ids = {i for i, body in list(platform_mail.emails.items()) if body in alert_mails([*webhooks, mail_job])}
        return [
            e for e in platform_log(gateway, operator_token, kind="dlq_alert") if e["provider_message_id"] in sent_ids
        ]

    assert wait_until(lambda: len(logged()) == len(alert_mails([*webhooks, mail_job])))
    for entry in logged():
        assert entry["tenant_id"] == PLATFORM_TENANT and entry["recipient"] == ", ".join(ALERT_EMAIL_TO)
        assert (entry["status"], entry["job_status"], entry["attempts"]) == ("delivered", "delivered", 1)
    mine = httpx.get(f"{gateway}/v1/jobs", params={"limit": 200}, headers=tenant.headers).json()["data"]
    assert {j["id"] for j in mine} == {*webhooks, mail_job}
    tenants = httpx.get(f"{gateway}/admin/v1/tenants", params={"limit": 200}, headers=admin(operator_token))
    assert PLATFORM_TENANT not in [t["id"] for t in tenants.json()["data"]]
    # Nor can an operator give it a key or enable it: it is nobody's account.
    for method, path, body in (
        ("GET", "", None),
        ("PATCH", "", {"disabled": False}),
        ("POST", "/api-keys", {"name": "sneaky"}),
        ("PATCH", "/limits", {"rate_per_min": 10}),
    ):
        answer = httpx.request(
            method, f"{gateway}/admin/v1/tenants/{PLATFORM_TENANT}{path}", json=body, headers=admin(operator_token)
        )
        assert answer.status_code == 404, (method, path, answer.text)


def test_new_api_keys_are_announced_and_operators_read_the_log(
    stack: Stack, gateway: str, operator_token: str, platform_mail: ResendStandIn
) -> None:
    created = httpx.post(
        f"{gateway}/admin/v1/tenants",
        json={"name": "Key Watch", "plan": "indie", "contact_email": "security@keywatch.example"},
        headers=admin(operator_token),
    )
    assert created.status_code == 201, created.text
    tenant = TenantKey(created.json()["tenant_id"], remember_secret(created.json()["api_key"]))
    made = httpx.post(f"{gateway}/v1/api-keys", json={"name": "ci-deploy"}, headers=tenant.headers)
    assert made.status_code == 201, made.text
    secret = remember_secret(made.json()["api_key"])
    public_id = made.json()["public_id"]
    by_operator = httpx.post(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/api-keys",
        json={"name": "ops-added"},
        headers=admin(operator_token),
    )
    assert by_operator.status_code == 201
    remember_secret(by_operator.json()["api_key"])

    def notices() -> list[dict[str, Any]]:
        return [b for b in list(platform_mail.emails.values()) if b["to"] == ["security@keywatch.example"]]

    # The initial key, the tenant's own and the operator's: one notice each.
    assert wait_until(lambda: len(notices()) == 3)
    [ci] = [n for n in notices() if "ci-deploy" in str(n["text"])]
    assert "new API key" in str(ci["subject"]) and f"hk_live_{public_id}_" in str(ci["text"])
    # The key's random part follows its public prefix; it may itself contain "_".
    assert secret not in str(ci) and secret.removeprefix(f"hk_live_{public_id}_") not in str(ci["text"])
    assert {re.search(r"name: +(\S+)", str(n["text"])).group(1) for n in notices()} == {  # type: ignore[union-attr]
        "initial",
        "ci-deploy",
        "ops-added",
    }

    # A tenant without a contact address gets no notice.
    quiet = httpx.post(
        f"{gateway}/admin/v1/tenants", json={"name": "No Contact", "plan": "indie"}, headers=admin(operator_token)
    ).json()
    remember_secret(quiet["api_key"])
    assert platform_log(gateway, operator_token, tenant_id=quiet["tenant_id"]) == []

    # The log: newest first, filtered, paginated; status and attempts once delivered.
    def entries() -> list[dict[str, Any]]:
        return platform_log(gateway, operator_token, tenant_id=tenant.tenant_id, kind="api_key_created", limit="1")

    assert wait_until(lambda: [e["status"] for e in entries()] == ["delivered"] * 3)
    listed = entries()
    assert [e["kind"] for e in listed] == ["api_key_created"] * 3
    assert [e["recipient"] for e in listed] == ["security@keywatch.example"] * 3
    assert all(e["attempts"] == 1 and e["job_status"] == "delivered" and e["finished_at"] for e in listed)
    stamps = [e["created_at"] for e in listed]
    assert stamps == sorted(stamps, reverse=True) and "ops-added" in listed[0]["subject"] + str(
        platform_mail.emails[listed[0]["provider_message_id"]]["text"]
    )
    assert platform_log(gateway, operator_token, tenant_id=tenant.tenant_id, kind="dlq_alert") == []
    bad = httpx.get(f"{gateway}/admin/v1/platform-emails", params={"kind": "spam"}, headers=admin(operator_token))
    assert bad.status_code == 422 and bad.headers["content-type"].startswith("application/problem+json")
    assert httpx.get(f"{gateway}/admin/v1/platform-emails", headers=tenant.headers).status_code == 401

    # The gRPC twin answers the same entries, with the same filters.
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.AdminServiceStub(channel)
        operator = (("authorization", f"Bearer {operator_token}"),)
        first = api.ListPlatformEmails(
            gateway_pb2.AdminServiceListPlatformEmailsRequest(
                tenant_id=tenant.tenant_id, kind="api_key_created", page_size=2
            ),
            metadata=operator,
            timeout=10,
        )
        rest = api.ListPlatformEmails(
            gateway_pb2.AdminServiceListPlatformEmailsRequest(
                tenant_id=tenant.tenant_id, kind="api_key_created", page_size=2, cursor=first.next_cursor
            ),
            metadata=operator,
            timeout=10,
        )
        assert [e.id for e in [*first.entries, *rest.entries]] == [e["id"] for e in listed]
        assert rest.next_cursor == "" and all(e.attempts == 1 and e.status == "delivered" for e in first.entries)
        for request, metadata, code in (
            (
                gateway_pb2.AdminServiceListPlatformEmailsRequest(kind="spam"),
                operator,
                grpc.StatusCode.INVALID_ARGUMENT,
            ),
            (
                gateway_pb2.AdminServiceListPlatformEmailsRequest(),
                (("authorization", f"Bearer {tenant.api_key}"),),
                grpc.StatusCode.UNAUTHENTICATED,
            ),
        ):
            try:
                api.ListPlatformEmails(request, metadata=metadata, timeout=10)
            except grpc.RpcError as error:
                assert error.code() == code  # type: ignore[attr-defined]
            else:
                raise AssertionError(f"{request} was answered")
