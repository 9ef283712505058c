"""The tenant console in a real browser: sign in, send a webhook and watch it become
delivered without reloading, open its attempt, retry a failed one, rotate the secret,
markup shown as text, one tenant's session never showing another's data."""

from __future__ import annotations

import re

import httpx
from playwright.async_api import BrowserContext, Page, expect

from herald.webhooks.sealed_headers import mask_header_value
from tests.console.conftest import shot, sign_in, unlabelled_controls
from tests.standins.resend import ResendStandIn
from tests.support.api import TenantKey, create_tenant, remember_secret, wait_for_status
from tests.support.receiver import Receiver

# Markup a hostile payload, header or receiver answer might carry. The console must show it as
# text; if it ran, window.pwned would be set (and the CSP would refuse it besides).
SCRIPT = "<script>window.pwned=1</script>"
IMAGE = '<img src=x onerror="window.pwned=2">'


async def send_from_console(page: Page, gateway: str, url: str, payload: str = '{"n": 1}', headers: str = "") -> str:
    await page.goto(f"{gateway}/console/jobs")
    await page.get_by_text("Send a webhook").click()
    await page.get_by_label("URL", exact=True).fill(url)
    await page.get_by_label("Payload (JSON)").fill(payload)
    await page.get_by_label("Headers").fill(headers)
    await page.get_by_role("button", name="Send").click()
    notice = page.get_by_role("status")
    await expect(notice).to_contain_text("Webhook accepted")
    found = re.search(r"job (\S+) \(", await notice.inner_text())
    assert found, await notice.inner_text()
    return found.group(1)


def row_status(page: Page, job_id: str):  # type: ignore[no-untyped-def]
    return page.locator("#jobs-rows tr", has_text=job_id).locator(".badge")


async def test_sign_in_send_and_watch_it_delivered(
    page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    await page.goto(f"{gateway}/console/jobs")
    await expect(page).to_have_url(re.compile(r"/console/login$"))
    await shot(page, "01-sign-in")
    # Keyboard only: Tab to the key field (past the skip link), type, Enter.
    for _ in range(5):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.id") == "credential":
            break
    await page.keyboard.type(tenant.api_key)
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    assert tenant.api_key not in page.url

    # A slow receiver keeps the job in flight long enough to see it change in place.
    receiver.behaviour.delay_path = ("/hook", 1.5)
    job_id = await send_from_console(page, gateway, receiver.url)
    assert await row_status(page, job_id).inner_text() in {"pending", "queued", "delivering"}
    await expect(row_status(page, job_id)).to_have_text("delivered", timeout=30_000)
    await shot(page, "02-jobs")

    await page.get_by_role("link", name=job_id).click()
    attempt = page.locator("#attempt-1")
    await expect(attempt).to_contain_text("200")
    await expect(attempt).to_contain_text("succeeded")
    await expect(attempt.get_by_text("Receiver body excerpt")).to_be_visible()
    await shot(page, "03-job-attempts")
    assert await unlabelled_controls(page) == []


async def test_a_failed_job_shows_markup_as_text_and_is_retried(
    page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    receiver.behaviour.status = 500
    receiver.behaviour.body = f"{SCRIPT}<b>bold</b>".encode()
    receiver.behaviour.headers = {"x-reply": IMAGE}
    await sign_in(page, gateway, tenant.api_key)
    job_id = await send_from_console(
        page,
        gateway,
        receiver.url,
        payload='{"note": "' + SCRIPT.replace('"', '\\"') + '"}',
        headers=f"X-Note: {IMAGE}",
    )
    # Three attempts 0.2 s and 0.4 s apart (tests/conftest.py), then failed: seen without a reload.
    await expect(row_status(page, job_id)).to_have_text("failed", timeout=30_000)
    await page.get_by_role("link", name=job_id).click()

    attempt = page.locator("#attempt-1")
    await expect(attempt).to_contain_text("500")
    await expect(attempt.locator("pre.excerpt")).to_have_text(f"{SCRIPT}<b>bold</b>")
    await expect(attempt.get_by_text(IMAGE)).to_be_visible()
    assert await page.evaluate("window.pwned") is None
    assert await page.locator("main b, main img, main script").count() == 0
    await shot(page, "04-failed-job-markup-as-text")

    receiver.behaviour.status = 200
    await page.get_by_role("button", name="Retry").click()
    await expect(page.get_by_role("status")).to_contain_text("Retrying")
    # The job page follows the run live until it is delivered again.
    await expect(page.locator("#job-live .badge").first).to_have_text("delivered", timeout=30_000)
    await expect(page.locator("#job-live")).to_contain_text("Explicit retries1")


async def test_secret_generated_and_rotated_shown_once(page: Page, gateway: str, tenant: TenantKey) -> None:
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/secret")
    await page.get_by_role("button", name="Generate secret").click()
    first = remember_secret(await page.locator("#new-secret").inner_text())
    assert first.startswith("whsec_")
    await page.get_by_role("button", name="Rotate secret").click()
    await expect(page.get_by_role("status")).to_have_text("Secret rotated.")
    second = remember_secret(await page.locator("#new-secret").inner_text())
    assert second.startswith("whsec_") and second != first
    await expect(page.locator("#secret-status")).to_contain_text("UTC")
    await shot(page, "05-secret-rotated")
    assert await unlabelled_controls(page) == []
    # Shown once: the page itself never shows it again.
    await page.goto(f"{gateway}/console/secret")
    assert await page.locator("#new-secret").count() == 0
    assert second not in await page.content()


async def test_other_tenants_session_never_sees_its_data(
    context: BrowserContext, page: Page, gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver
) -> None:
    answer = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"a": 1}}, headers=tenant.headers, timeout=10
    )
    answer.raise_for_status()
    job_of_a = answer.json()["id"]
    httpx.post(
        f"{gateway}/v1/webhooks/targets", json={"url": f"{receiver.url}/only-a"}, headers=tenant.headers, timeout=10
    ).raise_for_status()

    other = create_tenant(gateway, operator_token, "console-tenant-b")
    await sign_in(page, gateway, other.api_key)
    await page.goto(f"{gateway}/console/jobs")
    assert job_of_a not in await page.content()
    opened = await page.goto(f"{gateway}/console/jobs/{job_of_a}")
    assert opened is not None and opened.status == 404
    assert receiver.url not in await page.content()
    await page.goto(f"{gateway}/console/webhooks")
    assert "/only-a" not in await page.content()
    live = await context.request.get(f"{gateway}/console/jobs/{job_of_a}/live")
    assert live.status == 404 and receiver.url not in await live.text()


async def test_cookies_are_httponly_strict_and_posts_need_the_csrf_token(
    context: BrowserContext, page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    await sign_in(page, gateway, tenant.api_key)
    cookies = {c["name"]: c for c in await context.cookies()}
    session = cookies["herald_console"]
    assert session["httpOnly"] and session["sameSite"] == "Strict" and session["path"] == "/console"
    assert tenant.api_key not in session["value"]
    assert await page.evaluate("document.cookie") == ""

    before = httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers, timeout=10).json()["data"]
    for form in ({"url": receiver.url}, {"url": receiver.url, "csrf": "not-the-token"}):
        refused = await context.request.post(f"{gateway}/console/jobs/send", form=form)
        assert refused.status == 403
    rotate = await context.request.post(f"{gateway}/console/secret/generate", form={})
    assert rotate.status == 403
    after = httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers, timeout=10).json()["data"]
    assert after == before
    assert httpx.get(f"{gateway}/v1/webhook-secret", headers=tenant.headers, timeout=10).json()["exists"] is False

    # Signing out ends the session in this browser.
    await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(re.compile(r"/console/login$"))
    assert "herald_console" not in {c["name"] for c in await context.cookies()}
    await page.goto(f"{gateway}/console/jobs")
    await expect(page).to_have_url(re.compile(r"/console/login$"))

    # Signing in needs the sign-in form's own token too (no login CSRF).
    with httpx.Client(base_url=gateway, timeout=10) as client:
        bare = client.post("/console/login", data={"credential": tenant.api_key})
        assert bare.status_code == 403 and "herald_console=" not in bare.headers.get("set-cookie", "")
        # Behind a TLS-terminating Ingress (X-Forwarded-Proto: https) the cookies are Secure.
        shown = client.get("/console/login", headers={"x-forwarded-proto": "https"})
        token = re.search(r'name="csrf" value="([^"]+)"', shown.text)
        assert token and "secure" in shown.headers["set-cookie"].lower()
        # (A Secure cookie is not sent back over plain http: hand it over as the TLS hop would.)
        pre = shown.cookies["herald_console_login"]
        signed = client.post(
            "/console/login",
            data={"csrf": token.group(1), "credential": tenant.api_key},
            headers={"x-forwarded-proto": "https", "cookie": f"herald_console_login={pre}"},
        )
        assert signed.status_code == 303
        assert "; secure" in signed.headers["set-cookie"].lower()
        assert "httponly" in signed.headers["set-cookie"].lower()


async def test_main_pages(page: Page, gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/webhooks")
    await page.get_by_text("New target").click()
    await page.locator("#target-url").fill(f"{receiver.url}/orders")
    await page.locator("#target-description").fill("Orders <b>service</b>")
    await page.locator("#target-headers").fill(f"X-Note: {IMAGE}")
    await page.get_by_role("button", name="Create target").click()
    await expect(page.get_by_role("status")).to_have_text("Target created.")
    await expect(page.get_by_text("Orders <b>service</b>")).to_be_visible()
    # Header values are shown masked (sealed at rest): the last four characters of a long one.
    await expect(page.get_by_text(f"X-Note: {mask_header_value(IMAGE)}")).to_be_visible()
    await page.get_by_text("New filter").click()
    await page.locator("#filter-event_types").fill("orders.created.v1, orders.paid.v1")
    await page.get_by_role("button", name="Create filter").click()
    await page.get_by_text("New subscription").click()
    await page.get_by_role("button", name="Subscribe").click()
    await expect(page.get_by_role("status")).to_have_text("Subscribed.")
    subscriptions = page.locator("section", has=page.get_by_role("heading", name="Subscriptions"))
    await subscriptions.get_by_role("button", name="Disable").click()
    await expect(subscriptions.locator(".badge")).to_have_text("disabled")
    await subscriptions.get_by_role("button", name="Enable").click()
    await expect(subscriptions.locator(".badge")).to_have_text("enabled")
    # Edit: move the subscription to a second filter.
    await page.get_by_text("New filter").click()
    await page.locator("#filter-event_types").fill("refunds.created.v1")
    await page.get_by_role("button", name="Create filter").click()
    subscriptions = page.locator("section", has=page.get_by_role("heading", name="Subscriptions"))
    await subscriptions.get_by_role("link", name="Edit").click()
    await page.get_by_label("Filter").select_option(label="refunds.created.v1")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_have_text("Subscription saved.")
    await expect(subscriptions.locator("tbody tr")).to_contain_text("refunds.created.v1")
    assert await page.evaluate("window.pwned") is None
    await shot(page, "06-webhooks")
    assert await unlabelled_controls(page) == []

    await page.get_by_role("link", name="Edit / recover").click()
    await page.get_by_label("Description").fill("Orders")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_have_text("Target saved.")
    await page.get_by_label("Failed since (UTC)").fill("2026-01-01T00:00:00")
    await page.get_by_role("button", name="Recover").click()
    await expect(page.get_by_role("status")).to_contain_text("Recovering 0 deliveries")
    await page.get_by_role("button", name="Send a test event").click()
    await expect(page.get_by_role("status")).to_contain_text("the receiver answered 200")
    # Saved from the form as shown (masked), the header kept its value: the ping carried it.
    pings = [r for r in receiver.requests if r.headers.get("x-herald-event-type") == "herald.ping"]
    assert [r.headers.get("x-note") for r in pings] == [IMAGE]
    await shot(page, "07-target")
    assert await unlabelled_controls(page) == []

    await page.goto(f"{gateway}/console/suppressions")
    await page.get_by_label("Address").fill("gone@example.com")
    await page.get_by_role("button", name="Suppress").click()
    await expect(page.get_by_role("status")).to_have_text("Suppressed.")
    await expect(page.get_by_text("gone@example.com")).to_be_visible()
    await shot(page, "08-suppressions")
    assert await unlabelled_controls(page) == []

    await page.goto(f"{gateway}/console/usage")
    await expect(page.locator("#rate-limit")).to_contain_text("of 200 requests left")
    await shot(page, "09-usage")
    assert await unlabelled_controls(page) == []
    await page.goto(f"{gateway}/console/email")
    await expect(page.get_by_role("heading", name="Providers")).to_be_visible()
    await shot(page, "10-email")
    assert await unlabelled_controls(page) == []
    await page.goto(f"{gateway}/console/dead-letters")
    await shot(page, "11-dead-letters")
    assert await unlabelled_controls(page) == []

    # Readable on a phone: nothing wider than the screen.
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(f"{gateway}/console/jobs")
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    await shot(page, "12-jobs-phone")
    assert await unlabelled_controls(page) == []


async def test_jobs_are_searched_by_target_status_channel_and_time(
    page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    sent = {}
    for path in ("/a", "/b"):
        answer = httpx.post(
            f"{gateway}/v1/webhooks",
            json={"url": receiver.url + path, "payload": {}},
            headers=tenant.headers,
            timeout=10,
        )
        answer.raise_for_status()
        sent[path] = answer.json()["id"]
    for job_id in sent.values():
        wait_for_status(gateway, tenant, job_id)
    # The API the console uses: ?url= selects one target's jobs, and a listed job names its URL.
    listed = httpx.get(f"{gateway}/v1/jobs", params={"url": receiver.url + "/b"}, headers=tenant.headers, timeout=10)
    assert [(j["id"], j["url"]) for j in listed.json()["data"]] == [(sent["/b"], receiver.url + "/b")]

    await sign_in(page, gateway, tenant.api_key)
    await page.get_by_label("Target URL").fill(receiver.url + "/b")
    await page.get_by_label("Status").select_option("delivered")
    await page.get_by_label("Channel").select_option("webhook")
    await page.get_by_label("Created after (UTC)").fill("2026-01-01T00:00")
    await page.get_by_role("button", name="Search").click()
    rows = page.locator("#jobs-rows tr")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text(sent["/b"])
    await expect(rows.first).to_contain_text(receiver.url + "/b")
    await page.get_by_label("Status").select_option("failed")
    await page.get_by_role("button", name="Search").click()
    await expect(page.get_by_text("No jobs.")).to_be_visible()
    await page.get_by_label("Status").select_option("")
    await page.get_by_label("Target URL").fill("")
    await page.get_by_label("Created after (UTC)").fill("2999-01-01T00:00")
    await page.get_by_role("button", name="Search").click()
    await expect(page.get_by_text("No jobs.")).to_be_visible()


async def test_providers_and_sending_domains_from_the_console(
    page: Page, gateway: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    key = remember_secret(resend.add_key("re_ConsoleTest_000001_abcdefghijkl"))
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/email")
    await page.get_by_text("Add a provider").click()
    await page.get_by_label("Provider", exact=True).select_option("resend")
    await page.get_by_label("API key").fill(key)
    await page.get_by_label("Priority", exact=True).fill("3")
    await page.get_by_label("Base URL").fill(resend.base_url)
    await page.get_by_role("button", name="Add provider").click()
    await expect(page.get_by_role("status")).to_have_text("resend added.")
    assert key not in await page.content()
    await expect(page.locator("table", has_text="Masked").locator("tbody tr")).to_contain_text("re_****ijkl")

    await page.get_by_text("Register a sending domain").click()
    await page.get_by_label("Domain").fill("mail.console.example")
    await page.get_by_role("button", name="Register domain").click()
    await expect(page.get_by_role("status")).to_contain_text("mail.console.example registered")
    records = page.locator("table", has_text="DNS records for mail.console.example")
    await expect(records.locator("tr", has_text="resend._domainkey.mail.console.example")).to_contain_text("TXT")
    domain = page.locator("article", has_text="mail.console.example")
    await expect(domain.locator(".badge").first).to_have_text("pending")
    resend.publish_dns("mail.console.example")
    await page.get_by_role("button", name="Check DNS now").click()
    await expect(page.get_by_role("status")).to_have_text("mail.console.example: verified.")
    await shot(page, "13-email-domain")
    assert await unlabelled_controls(page) == []
