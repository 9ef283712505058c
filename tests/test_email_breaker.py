"""The per-tenant, per-provider circuit breaker: after repeated transient failures a dead
provider is skipped (no call, no timeout paid), then probed again after the cool-down and
brought back once it answers. Its state is on the email-sender's /metrics."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest

from herald.cli.stack import Stack
from tests.conftest import TEST_ENV
from tests.standins.herald_email import add_provider, attempts_of, email, send, sent_id
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SEND_PATH as SENDGRID_SEND
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, wait_for_status

SETTLED = {"delivered", "failed"}
FAILURES = int(TEST_ENV["HERALD_EMAIL_BREAKER_FAILURES"])
# This test's own cool-down, longer than the suite's: the breaker must still be open when the
# send after the streak is taken, and a loaded machine (CI, two lanes) once took longer than
# the suite's 3 s to deliver it (it met a half-open breaker, probing, instead of a skip).
COOL_DOWN_S = 10.0
COOL_DOWN = "HERALD_EMAIL_BREAKER_COOL_DOWN_S"


def circuit_state(stack: Stack, provider: str) -> float | None:
    port = stack.services["email-sender"].env["HERALD_METRICS_PORT"]
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    found = re.search(rf'^herald_provider_circuit_state\{{provider="{provider}"\}} (\S+)$', text, re.MULTILINE)
    return float(found.group(1)) if found else None


def deliveries(stack: Stack, outcome: str, provider: str) -> float:
    """herald_deliveries_total for email, by outcome and provider kind (0 before the first one)."""
    port = stack.services["email-sender"].env["HERALD_METRICS_PORT"]
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    series = rf'herald_deliveries_total\{{channel="email",outcome="{outcome}",provider="{provider}"\}}'
    found = re.search(rf"^{series} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


@pytest.fixture
def long_cool_down(stack: Stack) -> Iterator[None]:
    stack.restart("email-sender", {COOL_DOWN: str(COOL_DOWN_S)})
    try:
        yield
    finally:
        stack.restart("email-sender", {COOL_DOWN: TEST_ENV[COOL_DOWN]})


@pytest.mark.usefixtures("long_cool_down")
def test_breaker_skips_a_dead_provider_and_brings_it_back_after_it_recovers(
    stack: Stack, gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, resend: ResendStandIn
) -> None:
    dead = add_provider(gateway, tenant, sendgrid, priority=10)
    healthy = add_provider(gateway, tenant, resend, priority=5)
    # Every kind is exported from the start, closed unless some tenant's breaker is not.
    assert circuit_state(stack, "postmark") is not None
    sendgrid.fail_with = 503
    counted = {
        key: deliveries(stack, *key)
        for key in [("transient_failure", "sendgrid"), ("skipped", "sendgrid"), ("succeeded", "resend")]
    }

    def deliver() -> dict[str, object]:
        job = wait_for_status(gateway, tenant, sent_id(send(gateway, tenant, email())), SETTLED)
        assert job["status"] == "delivered"
        return job

    # Each send pays the dead provider's failure, then falls back; the streak opens the breaker.
    for _ in range(FAILURES):
        job = deliver()
        assert attempts_of(job) == [(dead, "transient_failure", 1), (healthy, "succeeded", 1)]
    assert len(sendgrid.received("POST", SENDGRID_SEND)) == FAILURES

    # Open: skipped without a call.
    job = deliver()
    assert attempts_of(job) == [(dead, "skipped", 1), (healthy, "succeeded", 1)]
    assert "circuit open" in str(job["attempts"][0]["error"])  # type: ignore[index]
    assert len(sendgrid.received("POST", SENDGRID_SEND)) == FAILURES
    assert circuit_state(stack, "sendgrid") == 2
    # Deliveries are counted by provider too: the failures and the skip against SendGrid, the fallbacks.
    assert deliveries(stack, "transient_failure", "sendgrid") - counted["transient_failure", "sendgrid"] == FAILURES
    assert deliveries(stack, "skipped", "sendgrid") - counted["skipped", "sendgrid"] == 1
    assert deliveries(stack, "succeeded", "resend") - counted["succeeded", "resend"] == FAILURES + 1

    # It recovers; after the cool-down one probe goes through, succeeds, and closes the breaker.
    sendgrid.fail_with = None
    time.sleep(COOL_DOWN_S + 0.2)
    before = len(resend.received("POST", RESEND_SEND))
    job = deliver()
    assert attempts_of(job) == [(dead, "succeeded", 1)]
    job = deliver()
    assert attempts_of(job) == [(dead, "succeeded", 1)]
    assert len(resend.received("POST", RESEND_SEND)) == before
