"""Retries across walks and the dead-letter queue: three walks, then the DLQ entry, the
FAILED row and one operator alert; nothing leaves by itself; a manual retry (tenant API
or `herald dlq`) runs the job again."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import nats

from herald import dead_letters
from herald.cli.stack import Stack
from herald.config import nats_servers
from herald.v1 import common_pb2
from tests.standins.alerts import AlertReceiver
from tests.standins.herald_email import add_provider, attempts_of, email, send, sent_id, wait_until
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, wait_for_status
from tests.support.infra import query

SETTLED = {"delivered", "failed"}


def dead_letter_rows(infra: dict[str, str], job_id: str) -> list[Any]:
    return query(
        infra["database_url"],
        "SELECT error, attempts, run, stream_sequence, retried_at FROM dead_letters"
        " WHERE job_id = $1::uuid ORDER BY id",
        job_id,
    )


def stream_entry(infra: dict[str, str], sequence: int) -> common_pb2.DeadLetter | None:
    async def read() -> common_pb2.DeadLetter | None:
        nc = await nats.connect(nats_servers(infra["nats_url"]))
        try:
            stored = await nc.jetstream().get_msg(f"{infra['bus_prefix']}_DLQ".upper(), sequence)
            return dead_letters.parse(stored.data)
        except Exception:
            return None
        finally:
            await nc.close()

    return asyncio.run(read())


def admin(operator_token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {operator_token}"}


def test_three_walks_then_dead_letter_one_alert_and_a_manual_retry_succeeds(
    gateway: str,
    tenant: TenantKey,
    sendgrid: SendGridStandIn,
    resend: ResendStandIn,
    alerts: AlertReceiver,
    operator_token: str,
    infra: dict[str, str],
) -> None:
    first = add_provider(gateway, tenant, sendgrid, priority=10)
    second = add_provider(gateway, tenant, resend, priority=5)
    sendgrid.fail_with = 503
    resend.fail_with = 502

    job_id = sent_id(send(gateway, tenant, email(to="fay@example.com")))
    job = wait_for_status(gateway, tenant, job_id, SETTLED)

    # Three walks, each over both providers: six attempt rows, three attempts spent.
    assert job["status"] == "failed" and job["attempt_count"] == 3
    assert attempts_of(job) == [
        (first, "transient_failure", 1),
        (second, "transient_failure", 1),
        (first, "transient_failure", 2),
        (second, "transient_failure", 2),
        (first, "transient_failure", 3),
        (second, "transient_failure", 3),
    ]
    assert "503" in job["last_error"] and "502" in job["last_error"]
    assert len(sendgrid.received("POST", "/v3/mail/send")) == 3

    # The ledger says dead-lettered, with the same reason as the row; the stream holds the job.
    [row] = dead_letter_rows(infra, job_id)
    assert row["error"] == job["last_error"] and row["attempts"] == 3 and row["retried_at"] is None
    entry = stream_entry(infra, row["stream_sequence"])
    assert entry is not None and entry.job_id == job_id and entry.error == job["last_error"]
    assert entry.channel == common_pb2.CHANNEL_EMAIL and entry.HasField("dead_lettered_at")
    assert entry.work_subject.split(".")[2] == "email" and entry.work_subject.endswith(tenant.tenant_id)

    # Exactly one alert for it (Slack and the operational webhook), even after the window.
    assert alerts.wait_for(job_id), "no Slack alert"
    wait_until(lambda: False, timeout=2.5)
    slack = [a for a in alerts.slack() if job_id in a["text"]]
    ops = [a for a in alerts.ops() if any(e["job_id"] == job_id for e in a.get("entries", []))]
    assert len(slack) == 1 and len(ops) == 1
    assert ops[0]["type"] == "herald.dead_letters" and ops[0]["source"] == "email-sender"

    # Operators see it; nothing leaves by itself.
    listed = httpx.get(f"{gateway}/admin/v1/dead-letters", headers=admin(operator_token)).json()["data"]
    assert job_id in [e["job_id"] for e in listed]
    detail = httpx.get(f"{gateway}/admin/v1/dead-letters/{job_id}", headers=admin(operator_token)).json()
    assert detail["payload"]["request"]["to"] == [{"email": "fay@example.com"}]
    assert detail["job"]["status"] == "failed"

    # The provider recovers; the tenant retries: a fresh run with a full attempt budget.
    resend.fail_with = None
    retried = httpx.post(f"{gateway}/v1/jobs/{job_id}/retry", headers=tenant.headers)
    assert retried.status_code == 202, retried.text
    assert retried.json()["status"] in {"queued", "pending"}
    job = wait_for_status(gateway, tenant, job_id, SETTLED)
    assert job["status"] == "delivered" and job["run"] == 1 and job["attempt_count"] == 1
    assert attempts_of(job)[-2:] == [(first, "transient_failure", 1), (second, "succeeded", 1)]
    assert len(job["attempts"]) == 8 and job["last_error"] is None
    [row] = dead_letter_rows(infra, job_id)
    assert row["retried_at"] is not None
    assert wait_until(lambda: stream_entry(infra, row["stream_sequence"]) is None, timeout=5)
    listed = httpx.get(f"{gateway}/admin/v1/dead-letters", headers=admin(operator_token)).json()["data"]
    assert job_id not in [e["job_id"] for e in listed]

    # Only a failed job can be retried.
    again = httpx.post(f"{gateway}/v1/jobs/{job_id}/retry", headers=tenant.headers)
    assert again.status_code == 409 and again.json()["type"].endswith("/not-retryable")


def test_operator_cli_lists_shows_and_retries_dead_letters(
    stack: Stack, gateway: str, tenant: TenantKey, resend: ResendStandIn, infra: dict[str, str]
) -> None:
    add_provider(gateway, tenant, resend, priority=1)
    resend.fail_with = 500
    job_id = sent_id(send(gateway, tenant, email(to="gus@example.com")))
    assert wait_for_status(gateway, tenant, job_id, SETTLED)["status"] == "failed"
    assert dead_letter_rows(infra, job_id)

    env = {
        **os.environ,
        "HERALD_GATEWAY_GRPC": stack.endpoints["gateway_grpc"],
        "HERALD_OPERATOR_TOKEN": Path(stack.endpoints["operator_token_file"]).read_text().strip(),
    }
    herald = str(Path(sys.executable).parent / "herald")

    def cli(*args: str) -> dict[str, Any]:
        done = subprocess.run([herald, "dlq", *args, "--json"], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    listed = cli("list", "--since", "10m", "--tenant", tenant.tenant_id)["dead_letters"]
    assert [e["job_id"] for e in listed] == [job_id]
    assert listed[0]["attempts"] == 3 and listed[0]["channel"] == "email"
    shown = cli("show", job_id)
    assert shown["status"] == "failed" and shown["payload"]["request"]["to"] == [{"email": "gus@example.com"}]
    assert shown["payload"]["job_id"] == job_id

    resend.fail_with = None
    retried = cli("retry", "--all", "--since", "10m")["retried"]
    assert {"job_id": job_id, "retried": True} in [{k: r[k] for k in ("job_id", "retried")} for r in retried]
    job = wait_for_status(gateway, tenant, job_id, SETTLED)
    assert job["status"] == "delivered" and job["run"] == 1
    assert cli("list", "--tenant", tenant.tenant_id)["dead_letters"] == []
    history = cli("list", "--tenant", tenant.tenant_id, "--include-retried")["dead_letters"]
    assert [e["job_id"] for e in history] == [job_id] and history[0]["retried_at"]
    assert len(resend.received("POST", RESEND_SEND)) == 4


async def test_alerts_are_rate_limited_into_one_summary() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def post(url: str, body: dict[str, Any]) -> None:
        sent.append((url, body))

    now = [100.0]
    alerter = dead_letters.Alerter(
        "https://slack.test/hook", "https://ops.test/hook", 60.0, post=post, clock=lambda: now[0]
    )

    def entry(n: int, tenant: str = "t1") -> common_pb2.DeadLetter:
        return dead_letters.entry_for(
            job_id=f"job-{n}",
            tenant_id=tenant,
            channel=common_pb2.CHANNEL_EMAIL,
            error=f"error {n}",
            attempts=3,
            run=0,
            work_message=b"",
            work_subject="x",
        )

    alerter.notify(entry(1))
    await asyncio.sleep(0.01)
    assert [url for url, _ in sent] == ["https://slack.test/hook", "https://ops.test/hook"]
    assert "job-1" in sent[0][1]["text"] and sent[1][1]["count"] == 1

    # A burst inside the window: nothing now, one summary when it closes.
    for n in range(2, 27):
        alerter.notify(entry(n, tenant=f"t{n % 3}"))
    await asyncio.sleep(0.01)
    assert len(sent) == 2
    alerter.flush_now()  # the window's end
    await asyncio.sleep(0.01)
    assert len(sent) == 4
    summary = sent[3][1]
    assert summary["count"] == 25 and len(summary["entries"]) == dead_letters.SUMMARY_LISTED
    assert summary["by_channel"] == {"email": 25} and len(summary["by_tenant"]) == 3
    assert "25 jobs" in sent[2][1]["text"]

    # After a quiet window, the next one alerts at once again.
    now[0] += 61
    alerter.notify(entry(99))
    await asyncio.sleep(0.01)
    assert len(sent) == 6 and "job-99" in sent[4][1]["text"]
    await alerter.close()


async def test_alert_emails_follow_the_same_window_and_never_mail_about_platform_email() -> None:
    mails: list[tuple[list[str], str, str, str]] = []

    async def mail(to: list[str], subject: str, text: str, dedupe_key: str) -> None:
        mails.append((to, subject, text, dedupe_key))

    now = [100.0]
    alerter = dead_letters.Alerter(
        window_s=60.0, source="webhook-sender", clock=lambda: now[0], email_to=["oncall@ops.test"], mail=mail
    )
    assert alerter.enabled  # email alone is enough

    def entry(n: int, channel: int = common_pb2.CHANNEL_WEBHOOK) -> common_pb2.DeadLetter:
        return dead_letters.entry_for(
            job_id=f"job-{n}",
            tenant_id="t1",
            channel=channel,
            error=f"error {n}",
            attempts=3,
            run=0,
            work_message=b"",
            work_subject="x",
        )

    alerter.notify(entry(1))
    await asyncio.sleep(0.01)
    [(to, subject, text, key)] = mails
    assert to == ["oncall@ops.test"] and "job job-1" in subject and "error 1" in text
    assert key == "dlq_alert:dlq.job-1.0"

    # A burst, with a platform email among it: one summary mail that leaves that one out.
    for n in range(2, 15):
        alerter.notify(entry(n))
    alerter.notify(entry(50, common_pb2.CHANNEL_PLATFORM_EMAIL))
    alerter.flush_now()
    await asyncio.sleep(0.01)
    assert len(mails) == 2
    _, subject, text, key = mails[1]
    assert "13 jobs" in subject and "job-2 " in text and "job-50" not in text
    assert f"… and {13 - dead_letters.SUMMARY_LISTED} more." in text and key == "dlq_alert:dlq.job-2.0"

    # A window holding only platform email dead letters sends no mail at all.
    now[0] += 61
    alerter.notify(entry(51, common_pb2.CHANNEL_PLATFORM_EMAIL))
    await asyncio.sleep(0.01)
    assert len(mails) == 2
    await alerter.close()
