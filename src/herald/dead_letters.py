"""Dead letters: jobs that exhausted their attempts, shared by the senders.

A sender that gives up on a job (after its last attempt) does three things, in this order:

1. `publish` the entry to the dead-letter stream (`<PREFIX>_DLQ`, subject
   `<prefix>.dlq.<class>.<tenant>`): a `herald.v1.DeadLetter` protobuf carrying the job id,
   tenant, channel, last error, time, attempts spent and the work message exactly as it
   was queued. `Nats-Msg-Id` is `dlq.<job id>.<run>`, so a sender that crashes after
   publishing and runs the last attempt again stores nothing new, while the same job
   dead-lettered again after an explicit retry (the next run) gets an entry of its own.
2. Records the attempt with `next_status` FAILED and `dead_lettered` set (with the stream
   sequence): the ledger marks the row FAILED with the same reason and writes its
   dead-letter row. The ledger is the source of truth for what is dead-lettered; the
   stream holds the payload for operators.
3. Acknowledges the work message, then `Alerter.notify`: operators hear about it.

Nothing leaves the dead-letter queue by itself: `POST /v1/jobs/{id}/retry` and
`herald dlq retry` move the job back to PENDING and run it again.

Alerts go to a Slack-compatible incoming webhook (`{"text": ...}`), an operational
webhook (JSON, see `Alerter`) and/or operators' email addresses as platform email (queued
in the ledger through `ledger_mailer`), rate-limited per process: the first dead letter alerts at
once; any that follow within `window_s` wait and go out together as one summary at the
end of the window (counts by channel and tenant, the first few jobs). A failed alert is
logged and counted, never retried in a loop. Posting needs httpx (both senders have it).
`Alerter.announce` sends other operational events (a webhook target disabled automatically)
to the same destinations, at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter as Tally
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from nats.js import JetStreamContext
from prometheus_client import Counter

from herald.bus.subjects import CHANNEL_CLASSES, Subjects
from herald.grpcio.ledger import Ledger
from herald.v1 import common_pb2, ledger_providers_pb2

if TYPE_CHECKING:
    from herald.config import Settings

log = logging.getLogger("herald.dead_letters")

CONTENT_TYPE = "application/x-protobuf; messageType=herald.v1.DeadLetter"
# Entries named in a summary; the rest are counted.
SUMMARY_LISTED = 10

DEAD_LETTERS = Counter(
    "herald_dead_letters_total", "Jobs published to the dead-letter stream after their last attempt.", ["channel"]
)
ALERTS = Counter(
    "herald_dead_letter_alerts_total",
    "Operator alerts about dead letters, by destination (slack, webhook, email) and result (sent, failed).",
    ["destination", "result"],
)

Poster = Callable[[str, dict[str, Any]], Awaitable[None]]
# (recipients, subject, text, dedupe key): queues one platform email.
Mailer = Callable[[list[str], str, str, str], Awaitable[None]]


def channel_name(channel: int) -> str:
    work_class = CHANNEL_CLASSES.get(channel)
    return work_class.value if work_class is not None else "unknown"


def msg_id(entry: common_pb2.DeadLetter) -> str:
    return f"dlq.{entry.job_id}.{entry.run}"


def entry_for(
    *,
    job_id: str,
    tenant_id: str,
    channel: int,
    error: str,
    attempts: int,
    run: int,
    work_message: bytes,
    work_subject: str,
    at: datetime | None = None,
) -> common_pb2.DeadLetter:
    entry = common_pb2.DeadLetter(
        job_id=job_id,
        tenant_id=tenant_id,
        channel=channel,  # type: ignore[arg-type]
        error=error,
        attempts=attempts,
        run=run,
        work_message=work_message,
        work_subject=work_subject,
    )
    entry.dead_lettered_at.FromDatetime(at or datetime.now(UTC))
    return entry


async def publish(
    js: JetStreamContext, subjects: Subjects, entry: common_pb2.DeadLetter, ack_timeout_s: float = 5.0
) -> int:
    """Stores the entry in the dead-letter stream; returns its stream sequence. Raises
    when the bus does not acknowledge (the caller then hands the work message back)."""
    work_class = CHANNEL_CLASSES[entry.channel]
    ack = await js.publish(
        subjects.dead_letter(work_class, entry.tenant_id),
        entry.SerializeToString(),
        timeout=ack_timeout_s,
        headers={"Nats-Msg-Id": msg_id(entry), "Herald-Job-Id": entry.job_id, "Content-Type": CONTENT_TYPE},
    )
    if not ack.duplicate:
        DEAD_LETTERS.labels(work_class.value).inc()
    return int(ack.seq)


def parse(data: bytes) -> common_pb2.DeadLetter:
    entry = common_pb2.DeadLetter()
    entry.ParseFromString(data)
    return entry


@dataclass
class _Pending:
    entries: list[common_pb2.DeadLetter] = field(default_factory=list)
    count: int = 0


async def _post_with_httpx(url: str, body: dict[str, Any]) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=10.0, follow_redirects=False) as client:
        response = await client.post(url, json=body)
        response.raise_for_status()


def ledger_mailer(ledger: Ledger) -> Mailer:
    """Dead-letter alerts by email: the ledger writes them as platform email (its own work
    class, CRITICAL, logged), delivered by the email-sender's platform worker."""

    async def mail(to: list[str], subject: str, text: str, dedupe_key: str) -> None:
        await ledger.providers.QueueOperatorEmail(
            ledger_providers_pb2.QueueOperatorEmailRequest(
                kind="dlq_alert", to=to, subject=subject, text=text, dedupe_key=dedupe_key
            ),
            timeout=10,
        )

    return mail


class Alerter:
    """Tells operators about dead letters, at most once per `window_s` after the first.

    The Slack-compatible body is `{"text": "..."}`. The operational webhook receives
    `{"type": "herald.dead_letters", "source": ..., "count": N, "summary": "...",
    "by_channel": {...}, "by_tenant": {...}, "entries": [{job_id, tenant_id, channel,
    error, dead_lettered_at, attempts}, ...]}` (at most SUMMARY_LISTED entries).

    By email (`email_to` with a `mail` function, see `ledger_mailer`): one platform email
    per alert, subject and text naming every job (up to SUMMARY_LISTED). Dead letters of
    platform email itself are left out of the mail (the platform provider is what failed;
    mailing through it again would loop) but still reach Slack and the webhook.

    Rate limiting is per process: with several sender replicas, each sends at most one
    alert per window. `clock` is monotonic seconds, injectable for tests."""

    def __init__(
        self,
        slack_url: str = "",
        webhook_url: str = "",
        window_s: float = 300.0,
        *,
        source: str = "herald",
        post: Poster | None = None,
        clock: Callable[[], float] = time.monotonic,
        email_to: list[str] | None = None,
        mail: Mailer | None = None,
    ) -> None:
        self.email_to = list(email_to or [])
        self.mail = mail
        self.slack_url = slack_url
        self.webhook_url = webhook_url
        self.window_s = window_s
        self.source = source
        self.post = post or _post_with_httpx
        self.clock = clock
        self._last_sent: float | None = None
        self._pending = _Pending()
        self._timer: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    @classmethod
    def from_settings(cls, settings: Settings, source: str, *, mail: Mailer | None = None) -> Alerter:
        """A sender's alerter: Slack and webhook URLs, window and mail recipients from settings."""
        return cls(
            settings.alert_slack_url,
            settings.alert_webhook_url,
            settings.alert_window_s,
            source=source,
            email_to=settings.alert_email_recipients(),
            mail=mail,
        )

    @property
    def enabled(self) -> bool:
        return bool(self.slack_url or self.webhook_url or self.mails)

    @property
    def mails(self) -> bool:
        return bool(self.email_to and self.mail is not None)

    def notify(self, entry: common_pb2.DeadLetter) -> None:
        """Never blocks and never raises: sending happens in the background."""
        if not self.enabled:
            return
        now = self.clock()
        if self._timer is None and (self._last_sent is None or now - self._last_sent >= self.window_s):
            self._last_sent = now
            self._spawn([entry], 1)
            return
        self._pending.entries.append(entry)
        self._pending.count += 1
        if self._timer is None:
            assert self._last_sent is not None
            delay = max(self._last_sent + self.window_s - now, 0.0)
            self._timer = asyncio.create_task(self._flush_after(delay))

    async def _flush_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._timer = None
        self.flush_now()

    def flush_now(self) -> None:
        """Sends what waits as one summary now (the window's end, shutdown, tests)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending.count == 0:
            return
        pending, self._pending = self._pending, _Pending()
        self._last_sent = self.clock()
        self._spawn(pending.entries, pending.count)

    def _spawn(self, entries: list[common_pb2.DeadLetter], count: int) -> None:
        task = asyncio.create_task(self._send(entries, count))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def close(self) -> None:
        """Sends a waiting summary now and waits (briefly) for alerts in flight."""
        self.flush_now()
        if self._sending:
            await asyncio.wait(self._sending, timeout=10.0)

    def body(self, entries: list[common_pb2.DeadLetter], count: int) -> tuple[str, dict[str, Any]]:
        """The Slack text and the operational webhook's JSON for these entries."""
        by_channel = Tally(channel_name(e.channel) for e in entries)
        by_tenant = Tally(e.tenant_id for e in entries)
        listed = [
            {
                "job_id": e.job_id,
                "tenant_id": e.tenant_id,
                "channel": channel_name(e.channel),
                "error": e.error,
                "dead_lettered_at": e.dead_lettered_at.ToJsonString(),
                "attempts": e.attempts,
            }
            for e in entries[:SUMMARY_LISTED]
        ]
        if count == 1:
            e = entries[0]
            summary = (
                f"Job {e.job_id} ({channel_name(e.channel)}, tenant {e.tenant_id}) reached the dead-letter queue "
                f"after {e.attempts} attempts. Last error: {e.error}"
            )
        else:
            channels = ", ".join(f"{n} {c}" for c, n in sorted(by_channel.items()))
            summary = (
                f"{count} jobs reached the dead-letter queue in the last {self.window_s:g} s ({channels}; "
                f"{len(by_tenant)} tenants). First: " + "; ".join(f"{d['job_id']} ({d['error']})" for d in listed[:3])
            )
        hint = "Inspect with `herald dlq list`; rerun with `herald dlq retry`."
        text = f":rotating_light: Herald ({self.source}): {summary}\n{hint}"
        payload = {
            "type": "herald.dead_letters",
            "source": self.source,
            "count": count,
            "summary": summary,
            "by_channel": dict(by_channel),
            "by_tenant": dict(by_tenant),
            "entries": listed,
        }
        return text, payload

    def announce(self, kind: str, summary: str, details: dict[str, Any]) -> None:
        """Another operational event on the same destinations, sent at once (not batched:
        these are rare, e.g. a webhook target disabled automatically). The operational
        webhook receives `{"type": "herald.<kind>", "source": ..., "summary": ..., **details}`.
        Never blocks and never raises."""
        if not self.enabled:
            return
        text = f":warning: Herald ({self.source}): {summary}"
        payload = {"type": f"herald.{kind}", "source": self.source, "summary": summary, **details}
        task = asyncio.create_task(self._post_both(text, payload, kind))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, entries: list[common_pb2.DeadLetter], count: int) -> None:
        text, payload = self.body(entries, count)
        await self._post_both(text, payload, "dead_letters", count)
        if self.mails:
            await self._send_mail(entries, count)

    async def _post_both(self, text: str, payload: dict[str, Any], kind: str, count: int = 1) -> None:
        targets = [("slack", self.slack_url, {"text": text}), ("webhook", self.webhook_url, payload)]
        for destination, url, body in targets:
            if not url:
                continue
            try:
                await self.post(url, body)
            except Exception as error:
                ALERTS.labels(destination, "failed").inc()
                log.warning(
                    "operator alert not delivered",
                    extra={"kind": kind, "destination": destination, "error": type(error).__name__},
                )
            else:
                ALERTS.labels(destination, "sent").inc()
                log.info("operator alert sent", extra={"kind": kind, "destination": destination, "count": count})

    def mail_body(self, entries: list[common_pb2.DeadLetter], count: int) -> tuple[str, str]:
        """The subject and text of the alert email for these entries."""
        if count == 1:
            e = entries[0]
            subject = f"Herald ({self.source}): job {e.job_id} reached the dead-letter queue"
        else:
            subject = f"Herald ({self.source}): {count} jobs reached the dead-letter queue"
        lines = [
            f"{count} job(s) reached the dead-letter queue"
            + (f" in the last {self.window_s:g} s." if count > 1 else "."),
            "",
        ]
        for e in entries[:SUMMARY_LISTED]:
            lines.append(
                f"- {e.job_id} ({channel_name(e.channel)}, tenant {e.tenant_id}, {e.attempts} attempts, "
                f"{e.dead_lettered_at.ToJsonString()}): {e.error}"
            )
        if count > SUMMARY_LISTED:
            lines.append(f"… and {count - SUMMARY_LISTED} more.")
        lines += ["", "Inspect with `herald dlq list`; rerun with `herald dlq retry`.", "", "— Herald"]
        return subject, "\n".join(lines) + "\n"

    async def _send_mail(self, entries: list[common_pb2.DeadLetter], count: int) -> None:
        mailable = [e for e in entries if e.channel != common_pb2.CHANNEL_PLATFORM_EMAIL]
        count -= len(entries) - len(mailable)
        if not mailable or count <= 0 or self.mail is None:
            return
        subject, text = self.mail_body(mailable, count)
        try:
            await self.mail(self.email_to, subject, text, f"dlq_alert:{msg_id(mailable[0])}")
        except Exception as error:
            ALERTS.labels("email", "failed").inc()
            log.warning("dead-letter alert email not queued", extra={"error": type(error).__name__})
        else:
            ALERTS.labels("email", "sent").inc()
            log.info("dead-letter alert email queued", extra={"count": count})
