"""Faults under load (tests/resilience/README.md). Runs last in the package: it kills everything.

Several tenants (no rate limit, no quota) send webhooks, and emails when the email-sender
delivers them, to receivers and SendGrid stand-ins of their own that fail some of the time
(503 once or twice, 500 always, 400, slow answers). Meanwhile every service is SIGKILLed in
turn and restarted by the supervisor, the nats-server and PostgreSQL are restarted (both
private to this suite, on fixed ports), and one tenant's receiver hangs past the webhook
timeout. The load generator retries what a client should retry (same Idempotency-Key) and
records every response with its time; every fault is recorded with its window.

Then, against the database, the streams and the receivers:
- every job answered 202 exists, for the tenant that sent it (lost = 0);
- every job is DELIVERED or FAILED, or still legitimately retrying (recently moving);
- no request reached another tenant's receiver, and every request a receiver got belongs to a
  job of that tenant;
- every DELIVERED job was answered 2xx by its receiver (or accepted by its provider);
- duplicates are counted (delivery is at least once) and are zero where de-duplication is
  promised: one Idempotency-Key never yields two jobs answered 202, a replay answers the
  same job, and nothing is delivered again after the ledger recorded it DELIVERED;
- jobs sharing an ordering key were delivered in submission order;
- no 5xx but 503, and 503 (or a refused connection) only inside a fault window.

The faults are in faults.py; the known defects problems may be put down to, in known_defects.py.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.resilience.audit import TERMINAL, Audit, Windows
from tests.resilience.conftest import Resilient, remember
from tests.resilience.faults import Faults, impact, keep_records, kill_groups
from tests.resilience.known_defects import classify
from tests.resilience.load import LoadGenerator, plan_jobs
from tests.resilience.logs import error_sites
from tests.resilience.profile import PROFILE
from tests.resilience.receivers import FlakyReceiver, FlakySendGrid
from tests.resilience.report import REPORT
from tests.support.api import TenantKey
from tests.support.infra import query


@dataclass
class Outcome:
    """What the fault test measured, for the email test that follows it."""

    email_reason: str = ""  # why emails were not part of the run ("" when they were)
    email_checks: list[str] = field(default_factory=list)
    email_figures: dict[str, int] = field(default_factory=dict)


OUTCOME = Outcome()


@dataclass
class Cast:
    tenants: list[TenantKey]
    receivers: list[FlakyReceiver]
    sendgrids: list[FlakySendGrid]


@pytest.fixture(scope="module")
def cast(resilient: Resilient) -> Iterator[Cast]:
    receivers = [FlakyReceiver(f"tenant-{i}") for i in range(PROFILE.tenants)]
    sendgrids = [FlakySendGrid(failure_rate=0.05, seed=i) for i in range(PROFILE.tenants)]
    try:
        tenants = [resilient.tenant(f"load-{i}") for i in range(PROFILE.tenants)]
        yield Cast(tenants, receivers, sendgrids)
    finally:
        for receiver in receivers:
            receiver.close()
        for sendgrid in sendgrids:
            sendgrid.close()


def email_delivery_works(resilient: Resilient, cast: Cast) -> tuple[str, str]:
    """Registers each tenant's SendGrid stand-in and sends one email: ('', its job id) if it is delivered,
    else (why not, its job id or '')."""
    gateway = resilient.gateway
    for i, (tenant, sendgrid) in enumerate(zip(cast.tenants, cast.sendgrids, strict=True)):
        key = remember(sendgrid.add_key(f"SG.load-{i}-{resilient.run_id}-abcdefghij.klmnopqrstuvwxyz{i:04d}"))
        response = httpx.post(
            f"{gateway}/v1/providers",
            json={"provider": "sendgrid", "api_key": key, "priority": 1, "base_url": sendgrid.base_url},
            headers=tenant.headers,
            timeout=30,
        )
        if response.status_code != 201:
            return f"registering a SendGrid provider answered {response.status_code}: {response.text[:200]}", ""
    tenant, sendgrid = cast.tenants[0], cast.sendgrids[0]
    failure_rate, sendgrid.failure_rate = sendgrid.failure_rate, 0.0
    try:
        response = httpx.post(
            f"{gateway}/v1/emails",
            json={"from": "Probe <probe@acme.example>", "to": ["probe@example.com"], "subject": "probe", "text": "p"},
            headers={**tenant.headers, "Idempotency-Key": f"{resilient.run_id}-probe"},
            timeout=30,
        )
        if response.status_code != 202:
            return f"POST /v1/emails answered {response.status_code}: {response.text[:200]}", ""
        job_id = response.json()["id"]
        deadline = time.monotonic() + 20
        status = ""
        while time.monotonic() < deadline:
            status = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers, timeout=10).json()["status"]
            if status in ("delivered", "failed"):
                break
            time.sleep(0.2)
        if status != "delivered" or not sendgrid.sent:
            return f"emails are accepted but not delivered (a probe email ended {status!r} after 20s)", job_id
        return "", job_id
    finally:
        sendgrid.failure_rate = failure_rate


def run_faults(faults: Faults, cast: Cast, gap: float, load: LoadGenerator, jobs: int) -> None:
    """The faults in turn, each given its share of the jobs as it starts (and a share before the first)."""
    share = math.ceil(jobs / (len(kill_groups()) + 3))
    load.release(share)
    time.sleep(gap)
    load.release(share)
    stalled = faults.stall(cast.receivers[0], for_s=4.0)
    if PROFILE.kills_at_once == 1:
        stalled.join()
        time.sleep(gap)
    for n, group in enumerate(kill_groups()):
        if n:
            load.release(share)
        faults.kill(group)
        time.sleep(gap)
    load.release(share)
    faults.restart_nats()
    time.sleep(gap)
    load.release(share)
    faults.restart_postgres()
    stalled.join()
    time.sleep(gap)


# --- the audit -------------------------------------------------------------------------------


def load_jobs(database_url: str, tenant_ids: list[str], but: str) -> list[Any]:
    return query(
        database_url,
        "SELECT id::text, tenant_id::text, channel, status, idempotency_key, attempt_count, last_error,"
        " ordering_key, provider_message_id, extract(epoch FROM now() - updated_at) AS idle_s"
        " FROM jobs WHERE tenant_id = ANY($1::uuid[]) AND id::text <> $2",
        tenant_ids,
        but,
    )


def drain(resilient: Resilient, tenant_ids: list[str], timeout: float, but: str) -> list[Any]:
    deadline = time.monotonic() + timeout
    while True:
        rows = load_jobs(resilient.database_url, tenant_ids, but)
        open_rows = [r for r in rows if r["status"] not in TERMINAL]
        if not open_rows or time.monotonic() > deadline:
            return rows
        time.sleep(1.0)


@pytest.mark.timeout(PROFILE.timeout_s)
def test_faults_under_load(resilient: Resilient, cast: Cast) -> None:
    tenant_ids = [t.tenant_id for t in cast.tenants]
    OUTCOME.email_reason, probe_id = email_delivery_works(resilient, cast)
    jobs = plan_jobs(
        resilient.run_id,
        tenant_ids,
        [r.base_url for r in cast.receivers],
        PROFILE.webhook_jobs,
        PROFILE.email_jobs if not OUTCOME.email_reason else 0,
    )
    # Each fault's share of the jobs goes out over about the time the fault takes on a quiet machine
    # (the shares are released as the faults start, see run_faults).
    expected_fault_s = 8 * PROFILE.fault_gap_s + len(kill_groups()) * 6.0 + 8.0
    generator = LoadGenerator(
        resilient.gateway,
        [t.headers for t in cast.tenants],
        jobs,
        rate_per_s=len(jobs) / expected_fault_s,
        retry_for_s=PROFILE.client_retry_for_s,
    )
    generator.start()
    faults = Faults(resilient, generator.started_at)
    try:
        run_faults(faults, cast, PROFILE.fault_gap_s, generator, len(jobs))
    finally:
        generator.faults_done.set()
    generator.join(timeout=PROFILE.client_retry_for_s + 300)
    rows = drain(resilient, tenant_ids, PROFILE.drain_timeout_s, but=probe_id)

    audit = Audit(
        jobs,
        generator,
        Windows(faults.windows),
        rows,
        tenant_ids,
        cast.receivers,
        cast.sendgrids,
        resilient.database_url,
        resilient.infra.nats_url,
        resilient.bus_prefix,
    )
    audit.run()
    OUTCOME.email_checks = audit.email_problems
    OUTCOME.email_figures = audit.email_figures

    REPORT.faults = [impact(w, generator) for w in faults.windows]
    REPORT.add("faults under load: raw records", str(keep_records(resilient, generator, faults)))
    REPORT.figures = {"tenants": PROFILE.tenants, **audit.figures}
    if OUTCOME.email_reason:
        REPORT.figures["emails"] = f"not part of this run: {OUTCOME.email_reason}"
    for name, value in audit.email_figures.items():
        REPORT.figures[f"emails: {name}"] = value
    section = "faults under load: findings (nothing the design promises; to decide)"
    for line in audit.findings[:12]:
        REPORT.add(section, line)
    if len(audit.findings) > 12:
        REPORT.add(section, f"... and {len(audit.findings) - 12} more like these")
    sites = error_sites(resilient.stack.data_dir / "logs")
    for (service, where, raised), count in sites.most_common(12):
        REPORT.add(
            "errors the services logged with a traceback (top 12, whole run)",
            f"{count:>4}x {service}: {where}: {raised}",
        )

    assert audit.accepted, "nothing was accepted"
    unexplained, explained = classify(audit.problems, sites)
    for defect, lines in explained.items():
        REPORT.add(
            "faults under load: KNOWN DEFECTS seen in this run (the test ends xfail)", f"{len(lines)}x {defect.name}"
        )
    assert not unexplained, f"{len(unexplained)} problems:\n" + "\n".join(unexplained[:60])
    if explained:
        pytest.xfail("known defects: " + "; ".join(f"{d.name} ({len(lines)}x)" for d, lines in explained.items()))


def test_emails_under_faults() -> None:
    """The email half of the fault test: its checks ran there; they are reported here on their own."""
    if OUTCOME.email_reason:
        pytest.skip(f"emails were not part of the fault run: {OUTCOME.email_reason}")
    if not OUTCOME.email_figures:
        pytest.skip("the fault test did not run")
    assert not OUTCOME.email_checks, "\n".join(OUTCOME.email_checks[:40])
    assert OUTCOME.email_figures["delivered"] > 0
