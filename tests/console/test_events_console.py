"""The console's event log and what a job sent, in a real browser: an event listed and found by
type and id, its payload (markup shown as text), a delivered and a skipped delivery, a replay to
every target and to one; a job's page showing its request (masked headers, payload, event, the
signature headers' id and timestamp) and resending it; a test event from the webhooks page."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import httpx
from playwright.async_api import Page, expect

from tests.console.conftest import shot, sign_in, unlabelled_controls
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import subscribe

SCRIPT = "<script>window.pwned=1</script>"
# An event id is the tenant's own text (printable ASCII without spaces): markup in it stays text.
EVENT_ID = "order-42<b>bold<i>"


def api(gateway: str, tenant: TenantKey, method: str, path: str, body: Any = None) -> Any:
    answer = httpx.request(method, f"{gateway}{path}", json=body, headers=tenant.headers, timeout=30)
    assert answer.status_code < 300, answer.text
    return answer.json() if answer.content else None


async def test_events_page_lists_opens_and_replays_an_event(
    page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    live = subscribe(gateway, tenant, f"{receiver.url}/live", ["orders.*"])["target"]
    subscribe(gateway, tenant, f"{receiver.url}/off", ["orders.*"], enabled=False)
    published = api(
        gateway,
        tenant,
        "POST",
        "/v1/events",
        {"event_type": "orders.created.v1", "event_id": EVENT_ID, "payload": {"note": SCRIPT, "n": 42}},
    )
    (delivery,) = published["deliveries"]
    wait_for_status(gateway, tenant, delivery["job_id"], {"delivered"})

    await sign_in(page, gateway, tenant.api_key)
    await page.get_by_role("link", name="Events").click()
    await expect(page.locator("#events-rows")).to_contain_text(EVENT_ID)
    await expect(page.locator("#events-rows")).to_contain_text("orders.created.v1")
    assert await page.locator("main b, main i").count() == 0
    await page.get_by_label("Event type").fill("refunds.*")
    await page.get_by_role("button", name="Search").click()
    await expect(page.get_by_text("No events.")).to_be_visible()
    await page.get_by_label("Event type").fill("orders.*")
    await page.get_by_role("button", name="Search").click()
    await expect(page.locator("#events-rows")).to_contain_text(EVENT_ID)
    await shot(page, "20-events")
    assert await unlabelled_controls(page) == []

    # Found by its id: the event's page, the payload as text (the markup in it never runs).
    await page.get_by_label("Event type").fill("")
    await page.get_by_label("Event id").fill(EVENT_ID)
    await page.get_by_role("button", name="Search").click()
    await expect(page.get_by_role("heading", name="Event orders.created.v1")).to_be_visible()
    await expect(page.locator("#payload")).to_contain_text(f'"note": "{SCRIPT}"')
    assert await page.evaluate("window.pwned") is None
    assert await page.locator("main script, main b, main i").count() == 0
    deliveries = page.locator("#deliveries tr")
    await expect(deliveries.filter(has_text="/live")).to_contain_text("delivered")
    skipped = deliveries.filter(has_text="/off")
    await expect(skipped).to_contain_text("skipped")
    await expect(skipped).to_contain_text("disabled")
    await shot(page, "21-event")
    assert await unlabelled_controls(page) == []

    # Replayed to every subscription matching it today, then to the live target only.
    await page.get_by_role("button", name="Replay").click()
    await expect(page.get_by_role("status")).to_contain_text("Replayed to")
    await expect(deliveries.filter(has_text="/live")).to_have_count(2)
    await page.get_by_label("Send to").select_option(label=f"{receiver.url}/live")
    await page.get_by_role("button", name="Replay").click()
    await expect(page.get_by_role("status")).to_contain_text("Replayed to 1 target(s)")
    await expect(deliveries.filter(has_text="/live")).to_have_count(3)
    jobs = [r.headers["webhook-id"] for r in receiver.requests if r.path.endswith("/live")]
    for job_id in jobs:
        wait_for_status(gateway, tenant, job_id, {"delivered"})
    assert len(receiver.wait_for(delivery["job_id"])) == 1
    replays = api(gateway, tenant, "GET", f"/v1/jobs?target_id={live}&limit=10")["data"]
    assert len(replays) == 3

    # Enabled again, the target's page offers to recover what it missed: the skipped deliveries.
    await page.get_by_role("link", name=f"{receiver.url}/off").first.click()
    await expect(page.locator("#target-health")).to_contain_text("disabled")
    await page.get_by_role("button", name="Enable").click()
    await expect(page.get_by_role("status")).to_contain_text("Target enabled. Recover below")
    await page.get_by_label("Failed since (UTC)").fill("2026-01-01T00:00:00")
    await page.get_by_role("button", name="Recover").click()
    await expect(page.get_by_role("status")).to_contain_text("Recovering")
    event = api(gateway, tenant, "GET", f"/v1/events/{quote(EVENT_ID)}")
    missed = [d["job_id"] for d in event["deliveries"] if d["target_id"] != live]
    assert missed and all(len(receiver.wait_for(job_id)) == 1 for job_id in missed)


async def test_job_page_shows_what_was_sent_and_resends_it(
    page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    headers = {"Authorization": "Bearer sk_live_abcdef123456"}
    subscribe(gateway, tenant, f"{receiver.url}/orders", ["orders.*"], headers=headers)
    published = api(
        gateway, tenant, "POST", "/v1/events", {"event_type": "orders.paid.v1", "payload": {"note": SCRIPT}}
    )
    job_id = published["deliveries"][0]["job_id"]
    wait_for_status(gateway, tenant, job_id, {"delivered"})
    (sent,) = receiver.wait_for(job_id)

    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/jobs/{job_id}")
    facts = page.locator("#sent-facts")
    await expect(facts).to_contain_text("orders.paid.v1")
    await expect(facts.get_by_role("link", name=published["event_id"])).to_be_visible()
    # The headers as the API reads them back: the credential masked, never in the page.
    await expect(page.locator("#sent-headers")).to_contain_text("Authorization")
    assert "sk_live_abcdef123456" not in await page.content()
    await expect(page.locator("#sent-payload")).to_contain_text(SCRIPT)
    assert await page.evaluate("window.pwned") is None
    # The signature headers' id and timestamp, as the receiver got them.
    signature = page.locator("#signature-headers tr").first
    await expect(signature).to_contain_text(sent.headers["webhook-id"])
    shown = (await signature.locator("td").nth(2).inner_text()).strip()
    assert int(shown) - int(sent.headers["webhook-timestamp"]) in (0, 1), (shown, sent.headers)
    await shot(page, "22-job-sent")
    assert await unlabelled_controls(page) == []

    await page.get_by_role("button", name="Resend").click()
    await expect(page.get_by_role("status")).to_contain_text("Resent as this job")
    await expect(page.locator("#sent-facts").get_by_role("link", name=job_id)).to_be_visible()
    resent = page.url.rsplit("/", 1)[1]
    assert resent != job_id
    assert len(receiver.wait_for(resent)) == 1
    await expect(page.locator("#job-live .badge").first).to_have_text("delivered", timeout=30_000)


async def test_a_retry_shows_when_it_is_due(page: Page, gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    api(gateway, tenant, "PUT", "/v1/webhooks/retry-schedule", {"delays_s": [3600]})
    receiver.behaviour.status = 503
    job = api(gateway, tenant, "POST", "/v1/webhooks", {"url": receiver.url, "payload": {"n": 1}})
    receiver.wait_for(job["id"])
    waiting: dict[str, Any] = {}
    for _ in range(150):
        waiting = api(gateway, tenant, "GET", f"/v1/jobs/{job['id']}")
        if waiting.get("next_attempt_at"):
            break
        time.sleep(0.2)
    assert waiting["status"] == "queued" and waiting["next_attempt_at"], waiting
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/jobs/{job['id']}")
    due = page.locator("#job-facts time").filter(has_text=waiting["next_attempt_at"][:10])
    await expect(page.locator("#job-facts")).to_contain_text("Next attempt")
    assert await due.count() >= 1


async def test_test_event_from_the_webhooks_page(
    page: Page, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    subscribe(gateway, tenant, f"{receiver.url}/hooks", ["orders.*"])
    receiver.behaviour.body = f"pong {SCRIPT}".encode()
    await sign_in(page, gateway, tenant.api_key)
    await page.goto(f"{gateway}/console/webhooks")
    row = page.locator("tr", has_text="/hooks")
    await expect(row.locator(".badge", has_text="closed")).to_be_visible()
    await row.get_by_role("button", name="Send test").click()
    notice = page.get_by_role("status")
    await expect(notice).to_contain_text("Test event sent")
    await expect(notice).to_contain_text("the receiver answered 200 in")
    await expect(notice).to_contain_text(f"pong {SCRIPT}")
    assert await page.evaluate("window.pwned") is None
    pings = [r for r in receiver.requests if r.headers.get("x-herald-event-type") == "herald.ping"]
    assert len(pings) == 1
    await shot(page, "23-webhooks-test-event")
