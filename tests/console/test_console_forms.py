"""How the consoles' forms behave in a real browser: a form that worked redirects to its page
(reloading repeats nothing) and shows its outcome once; a refused one keeps what was typed;
a secret shown once has a copy button; no word is broken mid-line; a session outlives a
restart of the gateway; the operator sees one tenant and disables and enables it."""

from __future__ import annotations

import re
import time

import httpx
from playwright.async_api import BrowserContext, Page, expect

from herald.cli.stack import Stack
from tests.console.conftest import sign_in, unlabelled_controls
from tests.support.api import TenantKey, remember_secret
from tests.support.receiver import Receiver


async def test_a_form_that_worked_redirects_and_a_refused_one_keeps_the_input(
    page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/webhooks")
    await page.get_by_text("New target").click()
    await page.locator("#target-url").fill("http://10.0.0.1/refused")
    await page.locator("#target-description").fill("Kept after the error")
    await page.get_by_role("button", name="Create target").click()
    await expect(page.get_by_role("alert")).to_be_visible()
    await expect(page.locator("#target-url")).to_have_value("http://10.0.0.1/refused")
    await expect(page.locator("#target-description")).to_have_value("Kept after the error")

    await page.locator("#target-url").fill(f"{receiver.url}/ok")
    await page.get_by_role("button", name="Create target").click()
    await expect(page.get_by_role("status")).to_have_text("Target created.")
    # Redirected to the page itself (a GET): reloading shows the page, creates nothing, and the
    # outcome was shown once.
    await expect(page).to_have_url(re.compile(r"/console/webhooks$"))
    await page.reload()
    await expect(page.get_by_role("status")).to_have_count(0)
    targets = httpx.get(f"{gateway}/v1/webhooks/targets", headers=tenant.headers, timeout=10).json()["data"]
    assert [t["url"] for t in targets].count(f"{receiver.url}/ok") == 1


async def test_no_word_is_broken_mid_line(page: Page, gateway: str, tenant: TenantKey) -> None:
    await sign_in(page, gateway, tenant.api_key)
    for path in ("/console/jobs", "/console/webhooks", "/console/secret", "/console/usage"):
        await page.goto(f"{gateway}{path}")
        breaking = await page.evaluate(
            "[...document.querySelectorAll('*')].filter(e => getComputedStyle(e).wordBreak === 'break-all')"
            ".map(e => e.tagName)"
        )
        assert breaking == [], path


async def test_a_secret_shown_once_has_a_copy_button(
    context: BrowserContext, page: Page, gateway: str, tenant: TenantKey
) -> None:
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=gateway)
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/secret")
    await page.get_by_role("button", name="Generate secret").click()
    secret = remember_secret(await page.locator("#new-secret").inner_text())
    await page.get_by_role("button", name="Copy").click()
    await expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert await page.evaluate("navigator.clipboard.readText()") == secret


async def test_a_session_outlives_a_restart_of_the_gateway(
    page: Page, stack: Stack, gateway: str, tenant: TenantKey
) -> None:
    await sign_in(page, gateway, tenant.api_key)
    await expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    stack.restart("gateway")
    await page.goto(f"{gateway}/console/jobs")
    await expect(page).to_have_url(re.compile(r"/console/jobs$"))
    await expect(page.get_by_role("heading", name="Jobs")).to_be_visible()


async def test_the_operator_shows_disables_and_enables_a_tenant(
    page: Page, gateway: str, operator_token: str, tenant: TenantKey
) -> None:
    await sign_in(page, gateway, operator_token, "/admin/console")
    await page.get_by_role("link", name=tenant.tenant_id).click()
    await expect(page).to_have_url(re.compile(f"/admin/console/tenants/{tenant.tenant_id}$"))
    await expect(page.locator("dl.facts")).to_contain_text("enabled")
    await expect(page.get_by_role("table")).to_contain_text("initial")
    assert await unlabelled_controls(page) == []

    await page.get_by_role("button", name="Disable tenant").click()
    await expect(page.get_by_role("status")).to_contain_text("is disabled")
    refused = until_status(gateway, tenant, 401)
    assert "tenant is disabled" in refused.json()["detail"]

    await page.get_by_role("button", name="Enable tenant").click()
    await expect(page.get_by_role("status")).to_contain_text("is enabled again")
    until_status(gateway, tenant, 200)


def until_status(gateway: str, tenant: TenantKey, status: int) -> httpx.Response:
    """The gateways hear of the change over the bus, a moment after the ledger made it."""
    deadline = time.monotonic() + 10
    while (answer := httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers, timeout=10)).status_code != status:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.1)
    return answer


async def test_a_second_tenant_of_the_same_name_is_refused_unless_asked_for(
    page: Page, gateway: str, operator_token: str
) -> None:
    await sign_in(page, gateway, operator_token, "/admin/console")

    async def create(name: str) -> None:
        if not await page.get_by_label("Name", exact=True).is_visible():
            await page.get_by_text("New tenant", exact=True).click()
        await page.get_by_label("Name", exact=True).fill(name)
        await page.get_by_role("button", name="Create tenant").click()

    await create("Twice Co")
    remember_secret(await page.locator("#new-api-key").inner_text())
    await create("Twice Co")
    await expect(page.get_by_role("alert")).to_contain_text("A tenant named 'Twice Co' exists already")
    await expect(page.get_by_label("Name", exact=True)).to_have_value("Twice Co")
    await page.get_by_label("Create it even if another tenant has this name").check()
    await page.get_by_role("button", name="Create tenant").click()
    await expect(page.get_by_role("status")).to_contain_text("created")
    remember_secret(await page.locator("#new-api-key").inner_text())
