"""Prometheus metrics shared by every service. Names carry the `herald_` prefix and
base units; tenant ids are never a label (their number is unbounded)."""

from __future__ import annotations

import time
from typing import Protocol

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from herald.ids import created_at_of


class SlotReadings(Protocol):
    def readings(self) -> tuple[int, int, int]: ...


class FetcherReadings(Protocol):
    def holding(self) -> tuple[int, int]: ...


RPC_SECONDS = Histogram(
    "herald_rpc_duration_seconds",
    "Server-side duration of gRPC calls.",
    ["service", "method", "code"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
HTTP_SECONDS = Histogram(
    "herald_http_request_duration_seconds",
    "Duration of HTTP requests by route template.",
    ["service", "method", "route", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
JOBS_ACCEPTED = Counter("herald_jobs_accepted_total", "Jobs accepted and written.", ["channel"])
JOBS_REJECTED = Counter(
    "herald_jobs_rejected_total", "Submissions refused at admission, by reason.", ["channel", "reason"]
)
RATE_LIMITED = Counter("herald_rate_limited_total", "Requests refused by the per-tenant rate limit.", ["route"])
RATE_LIMITER_ERRORS = Counter(
    "herald_rate_limiter_errors_total", "Rate-limit checks that could not reach the shared state.", ["decision"]
)
RATE_LIMITER_KV_OPS = Counter(
    "herald_rate_limiter_kv_ops_total", "Reads and compare-and-sets of the shared rate-limit state (NATS KV)."
)
JOBS_PUBLISHED = Counter("herald_jobs_published_total", "Work messages acknowledged by the bus.", ["channel"])
PUBLISH_FAILURES = Counter("herald_publish_failures_total", "Work messages the bus did not acknowledge.", ["channel"])
JOBS_REPUBLISHED = Counter(
    "herald_jobs_republished_total",
    "Jobs the ledger's reconciler published again: the bus had not acted on them in time.",
    ["channel"],
)
JOBS_PARKED = Gauge(
    "herald_jobs_parked",
    "QUEUED jobs the ledger holds off the bus (a long retry, a target's open circuit) until they are due.",
)
CIRCUITS_HOLDING = Gauge(
    "herald_webhook_circuits_holding",
    "Webhook targets (a target, a direct webhook's origin) with deliveries parked behind their open circuit, "
    "as the ledger last read them: each waits until the target answers or its retry window ends.",
)
JOBS_UNPARKED = Counter(
    "herald_jobs_unparked_total",
    "Parked jobs the ledger's reconciler published again when they came due.",
    ["channel"],
)
PARKED_DELIVERIES = Counter(
    "herald_deliveries_parked_total",
    "Work messages a sender acknowledged for the ledger to hold until due, by channel and why "
    "(retry: a long backoff; circuit_open: the target's breaker).",
    ["channel", "reason"],
)
UNSETTLED_JOB_AGE = Gauge(
    "herald_unsettled_job_age_seconds",
    "How long the oldest job of a non-terminal status has waited for the bus: since its commit, or since "
    "its scheduled retry was due (0 when none waits).",
    ["status"],
)
# provider: the email provider kind (sendgrid, resend, postmark, smtp; "unknown" for a provider the tenant no
# longer has), "webhook" for webhooks: a handful of values, never a tenant's provider config id.
# Per channel only: a target or tenant label would grow without bound (every receiver a tenant
# names); a target's own figures are in the sender's status (GetWorkerStatus) and its logs.
SLOT_CALLS = Gauge("herald_sender_calls_in_flight", "Calls a sender has in flight (herald.sender.slots).", ["channel"])
SLOT_HELD = Gauge(
    "herald_sender_calls_held",
    "Calls waiting for their target or tenant to drop under its bound of calls in flight.",
    ["channel"],
)
SLOT_TARGETS_AT_BOUND = Gauge(
    "herald_sender_targets_at_bound", "Targets with as many calls in flight as their bound allows.", ["channel"]
)
SENDER_IN_HAND = Gauge(
    "herald_sender_jobs_in_hand",
    "Messages a sender has taken from the bus and not yet settled: started, waiting for a call or being "
    "recorded. At herald_sender_window it takes no more, and no tenant's next message starts there.",
    ["channel"],
)
SENDER_WINDOW = Gauge(
    "herald_sender_window", "The most messages a sender holds at once (its window of started jobs).", ["channel"]
)
SENDER_BUFFERED = Gauge(
    "herald_sender_messages_buffered",
    "Messages a sender fetched ahead of their start, in its fairness lanes' buffers.",
    ["channel"],
)
HELD_BACK = Counter(
    "herald_sender_held_back_total",
    "Jobs handed back to the bus without a call or an attempt: their target's (reason target) or tenant's "
    "(tenant) queue full, or their target's circuit open (circuit_open).",
    ["channel", "reason"],
)
DELIVERIES = Counter(
    "herald_deliveries_total",
    "Delivery attempts by channel, outcome and provider.",
    ["channel", "outcome", "provider"],
)
WEBHOOK_PROVIDER = "webhook"
DELIVERY_SECONDS = Histogram(
    "herald_delivery_attempt_duration_seconds",
    "Duration of one call to a receiver or provider.",
    ["channel"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30),
)


ACCEPT_TO_DELIVERED_SECONDS = Histogram(
    "herald_accept_to_delivered_seconds",
    "From the job's acceptance (its committed row) to the receiver's or provider's acceptance.",
    ["channel"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400),
)
ATTEMPTS_PER_JOB = Histogram(
    "herald_attempts_per_job",
    "Attempts a job took to end (delivered or failed).",
    ["channel", "status"],
    buckets=(1, 2, 3, 4, 5, 6, 7, 8, 10, 15),
)


def watch_sender(channel: str, slots: SlotReadings, fetcher: FetcherReadings, window: int) -> None:
    """The sender's gauges read its call slots and its fetcher when scraped."""
    SLOT_CALLS.labels(channel).set_function(lambda: slots.readings()[0])
    SLOT_HELD.labels(channel).set_function(lambda: slots.readings()[1])
    SLOT_TARGETS_AT_BOUND.labels(channel).set_function(lambda: slots.readings()[2])
    SENDER_IN_HAND.labels(channel).set_function(lambda: fetcher.holding()[0])
    SENDER_BUFFERED.labels(channel).set_function(lambda: fetcher.holding()[1])
    SENDER_WINDOW.labels(channel).set(window)


def observe_finished(channel: str, job_id: str, attempts: int, delivered: bool) -> None:
    """Records a job that just ended; accept-to-delivery comes from the UUIDv7 id."""
    ATTEMPTS_PER_JOB.labels(channel, "delivered" if delivered else "failed").observe(attempts)
    if delivered:
        created = created_at_of(job_id)
        if created is not None:
            ACCEPT_TO_DELIVERED_SECONDS.labels(channel).observe(max(time.time() - created, 0.0))


def label(enum_value_name: str) -> str:
    """A proto enum value name as a short label: ATTEMPT_OUTCOME_SUCCEEDED -> succeeded."""
    for prefix in ("ATTEMPT_OUTCOME_", "CHANNEL_", "JOB_STATUS_", "PRIORITY_", "PLAN_"):
        if enum_value_name.startswith(prefix):
            return enum_value_name[len(prefix) :].lower()
    return enum_value_name.lower()


def start_metrics_server(port: int, host: str = "127.0.0.1") -> int:
    """Serves /metrics on its own port; returns the port (useful when 0 asked for a free one)."""
    server, _thread = start_http_server(port, addr=host)
    return int(server.server_address[1])
