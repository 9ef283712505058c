"""The operator console in a real browser: refused without the operator token (a tenant's
key included), tenants and plans, dead letters across tenants with their payload shown as
text, redrive of one and of all since a time, the platform email log."""

from __future__ import annotations

import re

import httpx
from playwright.async_api import BrowserContext, Page, expect

from tests.conftest import TEST_ENV
from tests.console.conftest import shot, sign_in, unlabelled_controls
from tests.standins.herald_email import add_provider, email, send, sent_id
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, remember_secret, wait_for_status
from tests.support.receiver import Receiver

SCRIPT = "<script>window.pwned=1</script>"


async def test_refused_without_the_operator_token(
    context: BrowserContext, page: Page, gateway: str, tenant: TenantKey
) -> None:
    for path in ("/admin/console/tenants", "/admin/console/dead-letters", "/admin/console/platform-emails"):
        answer = httpx.get(f"{gateway}{path}", timeout=10)
        assert answer.status_code == 303 and answer.headers["location"] == "/admin/console/login"
        assert "<table" not in answer.text
    refused = httpx.post(f"{gateway}/admin/console/dead-letters/redrive", data={"all": "1"}, timeout=10)
    assert refused.status_code == 401

    await sign_in(page, gateway, "hk_op_not-the-token", "/admin/console")
    await expect(page.get_by_role("alert")).to_contain_text("was not accepted")
    # A tenant's API key is no operator token, and a tenant's console session opens nothing here.
    await sign_in(page, gateway, tenant.api_key, "/admin/console")
    await expect(page.get_by_role("alert")).to_contain_text("was not accepted")
    await sign_in(page, gateway, tenant.api_key)
    tenant_cookie = next(c for c in await context.cookies() if c["name"] == "herald_console")
    forged = httpx.get(
        f"{gateway}/admin/console/tenants",
        headers={"cookie": f"herald_admin_console={tenant_cookie['value']}"},
        timeout=10,
    )
    assert forged.status_code == 303 and forged.headers["location"] == "/admin/console/login"
    await page.goto(f"{gateway}/admin/console/tenants")
    await expect(page).to_have_url(re.compile(r"/admin/console/login$"))


async def test_operator_sees_tenants_dead_letters_and_redrives(
    page: Page, gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver
) -> None:
    receiver.behaviour.status = 500
    jobs = []
    for n in range(2):
        answer = httpx.post(
            f"{gateway}/v1/webhooks",
            json={"url": receiver.url, "payload": {"n": n, "note": SCRIPT}},
            headers=tenant.headers,
            timeout=10,
        )
        answer.raise_for_status()
        jobs.append(answer.json()["id"])
    for job_id in jobs:
        assert wait_for_status(gateway, tenant, job_id)["status"] == "failed"

    await sign_in(page, gateway, operator_token, "/admin/console")
    await expect(page.get_by_role("heading", name="Tenants")).to_be_visible()
    await expect(page.get_by_text(tenant.tenant_id)).to_be_visible()
    # A new tenant's key is shown once, on the answer, and works.
    await page.get_by_text("New tenant").click()
    await page.get_by_label("Name", exact=True).fill("Console <b>Co</b>")
    await page.get_by_role("button", name="Create tenant").click()
    key = remember_secret(await page.locator("#new-api-key").inner_text())
    assert httpx.get(f"{gateway}/v1/usage", headers={"authorization": f"Bearer {key}"}, timeout=10).status_code == 200
    await expect(page.get_by_text("Console <b>Co</b>")).to_be_visible()
    await page.goto(f"{gateway}/admin/console/tenants")
    assert key not in await page.content()
    row = page.locator("tr", has_text=tenant.tenant_id)
    await row.get_by_label("Plan").select_option("indie")
    await row.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("is on the indie plan")
    assert httpx.get(f"{gateway}/v1/usage", headers=tenant.headers, timeout=10).json()["webhooks_limit"] == 4000
    await page.locator("tr", has_text=tenant.tenant_id).get_by_label("Plan").select_option("startup")
    await page.locator("tr", has_text=tenant.tenant_id).get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("is on the startup plan")
    await shot(page, "20-operator-tenants")
    assert await unlabelled_controls(page) == []

    await page.goto(f"{gateway}/admin/console/dead-letters?tenant_id={tenant.tenant_id}")
    for job_id in jobs:
        await expect(page.get_by_role("link", name=job_id)).to_be_visible()
    await shot(page, "21-operator-dead-letters")
    assert await unlabelled_controls(page) == []

    await page.get_by_role("link", name=jobs[0]).click()
    await expect(page.locator("#work-body")).to_have_text('{"n":0,"note":"' + SCRIPT + '"}')
    assert await page.evaluate("window.pwned") is None
    assert await page.locator("main script").count() == 0
    await shot(page, "22-operator-dead-letter")
    assert await unlabelled_controls(page) == []

    receiver.behaviour.status = 200
    await page.get_by_role("button", name="Redrive").click()
    await expect(page.get_by_role("status")).to_contain_text("Redriven: 1 of 1")
    assert wait_for_status(gateway, tenant, jobs[0], {"delivered"})["status"] == "delivered"

    # Many at once: the rest of what waits (since a time long ago).
    await page.get_by_label("Dead-lettered since (UTC, empty: all)").fill("2026-01-01T00:00")
    page.on("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Redrive all").click()
    await expect(page.get_by_role("status")).to_contain_text("Redriven:")
    assert wait_for_status(gateway, tenant, jobs[1], {"delivered"})["status"] == "delivered"

    await page.goto(f"{gateway}/admin/console/platform-emails")
    await expect(page.get_by_role("heading", name="Platform email log")).to_be_visible()
    await shot(page, "23-operator-platform-emails")
    assert await unlabelled_controls(page) == []


async def test_operator_sees_circuits_and_stream_depth(page: Page, gateway: str, operator_token: str) -> None:
    answer = httpx.get(f"{gateway}/admin/v1/streams", headers={"authorization": f"Bearer {operator_token}"}, timeout=10)
    assert answer.status_code == 200
    names = {s["name"] for s in answer.json()["data"]}
    assert any(name.endswith("_WORK") for name in names) and any(name.endswith("_DLQ") for name in names)
    circuits = httpx.get(
        f"{gateway}/admin/v1/circuits", headers={"authorization": f"Bearer {operator_token}"}, timeout=10
    )
    assert circuits.status_code == 200 and isinstance(circuits.json()["data"], list)
    assert httpx.get(f"{gateway}/admin/v1/streams", timeout=10).status_code == 401

    await sign_in(page, gateway, operator_token, "/admin/console")
    await page.get_by_role("link", name="Circuits and streams").click()
    await expect(page.locator("#streams tr", has_text="_WORK")).to_have_count(1)
    await expect(page.get_by_role("heading", name="Provider circuits")).to_be_visible()
    await shot(page, "24-operator-circuits-streams")
    assert await unlabelled_controls(page) == []


async def test_an_open_circuit_shows_for_the_operator_and_providers_for_the_tenant(
    page: Page, gateway: str, operator_token: str, tenant: TenantKey, sendgrid: SendGridStandIn, resend: ResendStandIn
) -> None:
    dead = add_provider(gateway, tenant, sendgrid, priority=10)
    add_provider(gateway, tenant, resend, priority=5)
    sendgrid.fail_with = 503
    for _ in range(int(TEST_ENV["HERALD_EMAIL_BREAKER_FAILURES"])):
        job = wait_for_status(gateway, tenant, sent_id(send(gateway, tenant, email())))
        assert job["status"] == "delivered"

    # The tenant's view: the walk order and masked keys, never a key itself.
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/email")
    rows = page.locator("table", has_text="Masked").locator("tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0)).to_contain_text("sendgrid")
    await expect(rows.nth(1)).to_contain_text("resend")
    await expect(rows.nth(0)).to_contain_text("****")
    await shot(page, "10-email-providers")

    await sign_in(page, gateway, operator_token, "/admin/console")
    await page.goto(f"{gateway}/admin/console/system")
    circuit = page.locator("#circuits tr", has_text=dead)
    await expect(circuit).to_contain_text("sendgrid")
    assert (await circuit.locator(".badge").inner_text()) in {"open", "half_open"}
    await expect(circuit).to_contain_text(tenant.tenant_id)
    await shot(page, "25-operator-open-circuit")
