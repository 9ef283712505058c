"""What the services say about themselves: their /metrics, and where the bus puts a stream.

Read before and after the measured window, so the figures are the window's own: gRPC calls per
job and their mean duration per method, and how the webhook-senders shared the deliveries.
"""

# A harness: it talks to the services' metrics on 127.0.0.1 by design.
# ruff: noqa: S310

from __future__ import annotations

import asyncio
import re
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from harness.config import log
from harness.herald_code import nats_servers
from herald.cli.stack import Stack

RPC_LINE = re.compile(r"^herald_rpc_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$")
# The HTTP requests a service answered, by route: beside the client's latency, the share of it
# spent inside the service's app (from its HTTP parser's hand-over to its answer).
HTTP_LINE = re.compile(r"^herald_http_request_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$")
# The senders' calls to receivers and providers, by channel: the outbound share of a delivery.
ATTEMPT_LINE = re.compile(r"^herald_delivery_attempt_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$")
# Their histograms' cumulative buckets: an upper bound on the window's p99 inside the service.
BUCKET_LINE = re.compile(
    r"^herald_(?:rpc|http_request|delivery_attempt)_duration_seconds_bucket\{([^}]*)\} ([0-9.eE+-]+)$"
)


def metrics_urls(metrics: str | dict[str, str]) -> list[str]:
    """endpoints.json's `metrics`: an object of service -> URL, or (older commits, measured with
    REV=) one string of `service=URL` joined by commas."""
    if isinstance(metrics, dict):
        return list(metrics.values())
    return [entry.partition("=")[2] for entry in metrics.split(",")]


@dataclass
class CallTotals:
    """One service method's (or HTTP route's) histogram as /metrics showed it at one moment."""

    calls: float = 0.0
    seconds: float = 0.0
    # Cumulative count of calls at or under each bucket bound (s), every status and code summed.
    by_bound: dict[float, float] = field(default_factory=dict)


def _call_key(labels_text: str) -> tuple[str, dict[str, str]]:
    """`service.method` for a gRPC method, `service.http METHOD route` for an HTTP route."""
    labels = dict(re.findall(r'(\w+)="([^"]*)"', labels_text))
    if "channel" in labels:
        return f"{labels['channel']}-sender.delivery attempt", labels
    if "route" in labels:
        return f"{labels.get('service', '?')}.http {labels.get('method', '?')} {labels['route']}", labels
    return f"{labels.get('service', '?')}.{labels.get('method', '?').rsplit('/', 1)[-1]}", labels


def rpc_totals(metrics: str | dict[str, str]) -> dict[str, CallTotals]:
    """Server-side gRPC calls, seconds and buckets per service method, from every service's
    /metrics (herald_rpc_duration_seconds, recorded by the services' own interceptor), and the
    same per HTTP route (herald_http_request_duration_seconds) as `service.http METHOD route`."""
    totals: dict[str, CallTotals] = {}
    for url in metrics_urls(metrics):
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                text = response.read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            if bucket := BUCKET_LINE.match(line):
                key, labels = _call_key(bucket[1])
                by_bound = totals.setdefault(key, CallTotals()).by_bound
                bound = float(labels.get("le", "inf"))
                by_bound[bound] = by_bound.get(bound, 0.0) + float(bucket[2])
                continue
            found = RPC_LINE.match(line) or HTTP_LINE.match(line) or ATTEMPT_LINE.match(line)
            if not found:
                continue
            key, _ = _call_key(found[2])
            slot = totals.setdefault(key, CallTotals())
            if found[1] == "count":
                slot.calls += float(found[3])
            else:
                slot.seconds += float(found[3])
    return totals


def _window(before: dict[str, CallTotals], after: dict[str, CallTotals]) -> dict[str, tuple[CallTotals, CallTotals]]:
    """Each key called between the two readings, with its reading before (empty if none)."""
    return {
        key: (before.get(key, CallTotals()), now)
        for key, now in sorted(after.items())
        if now.calls > before.get(key, CallTotals()).calls
    }


def rpc_per_job(before: dict[str, CallTotals], after: dict[str, CallTotals], jobs: int) -> dict[str, float]:
    """The window's calls per job, per service method that was called in it."""
    return {k: round((now.calls - then.calls) / jobs, 3) for k, (then, now) in _window(before, after).items()}


def rpc_mean_ms(before: dict[str, CallTotals], after: dict[str, CallTotals]) -> dict[str, float]:
    """The window's mean call duration in ms, per service method that was called in it."""
    return {
        k: round((now.seconds - then.seconds) * 1000 / (now.calls - then.calls), 2)
        for k, (then, now) in _window(before, after).items()
    }


def p99_bound_ms(before: dict[str, CallTotals], after: dict[str, CallTotals]) -> dict[str, float | None]:
    """Per service method called in the window: the upper bound of the histogram bucket that holds
    the window's 99th percentile, in ms (None past the last finite bucket). The buckets are coarse
    (25, 50, 100 ms...): enough to say how much of a client's p99 the service itself accounts for."""
    bounds: dict[str, float | None] = {}
    for key, (then, now) in _window(before, after).items():
        calls = now.calls - then.calls
        bounds[key] = None
        for bound, count in sorted(now.by_bound.items()):
            if count - then.by_bound.get(bound, 0.0) >= 0.99 * calls:
                bounds[key] = None if bound == float("inf") else round(bound * 1000, 1)
                break
    return bounds


def deliveries_per_sender(stack: Stack) -> dict[str, float]:
    """herald_deliveries_total of each webhook-sender process (all runs of this stack so far)."""
    found: dict[str, float] = {}
    for name, process in stack.services.items():
        if process.name != "webhook-sender":
            continue
        try:
            url = f"http://127.0.0.1:{process.env['HERALD_METRICS_PORT']}/metrics"
            with urllib.request.urlopen(url, timeout=10) as response:
                text = response.read().decode()
        except OSError:
            continue
        found[name] = sum(
            float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("herald_deliveries_total{")
        )
    return found


def stream_leader(nats_url: str, stream: str, options: dict[str, Any]) -> str | None:
    """The node leading `stream` (`n0`...), the one whose CPU a single stream's writes load;
    `options`: the connection's credentials (Infra.nats_options)."""
    import nats

    async def ask() -> str | None:
        nc = await nats.connect(nats_servers(nats_url), connect_timeout=5, **options)
        try:
            info = await nc.jetstream(timeout=10).stream_info(stream)
            return info.cluster.leader if info.cluster else None
        finally:
            await nc.close()

    try:
        return asyncio.run(ask())
    except Exception as error:
        log(f"the leader of {stream}: {error!r}")
        return None
