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

from harness.config import log
from harness.herald_code import nats_servers
from herald.cli.stack import Stack

RPC_LINE = re.compile(r"^herald_rpc_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$")
# The HTTP requests a service answered, by route: beside the client's latency, the share of it
# spent inside the service's app (from its HTTP parser's hand-over to its answer).
HTTP_LINE = re.compile(r"^herald_http_request_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$")
# Their histograms' cumulative buckets: an upper bound on the window's p99 inside the service.
BUCKET_LINE = re.compile(r"^herald_(?:rpc|http_request)_duration_seconds_bucket\{([^}]*)\} ([0-9.eE+-]+)$")


def metrics_urls(metrics: str | dict[str, str]) -> list[str]:
    """endpoints.json's `metrics`: an object of service -> URL, or (older commits, measured with
    REV=) one string of `service=URL` joined by commas."""
    if isinstance(metrics, dict):
        return list(metrics.values())
    return [entry.partition("=")[2] for entry in metrics.split(",")]


def _call_key(labels_text: str) -> tuple[str, dict[str, str]]:
    """`service.method` for a gRPC method, `service.http METHOD route` for an HTTP route."""
    labels = dict(re.findall(r'(\w+)="([^"]*)"', labels_text))
    if "route" in labels:
        return f"{labels.get('service', '?')}.http {labels.get('method', '?')} {labels['route']}", labels
    return f"{labels.get('service', '?')}.{labels.get('method', '?').rsplit('/', 1)[-1]}", labels


def rpc_totals(metrics: str | dict[str, str]) -> dict[str, list[float]]:
    """Server-side gRPC calls and seconds per service method, from every service's /metrics
    (herald_rpc_duration_seconds, recorded by the services' own interceptor), and HTTP requests
    per route (herald_http_request_duration_seconds) as `service.http METHOD route`. After the
    count and the sum, each key's cumulative histogram buckets as `le:<bound>` -> count (status
    and code summed), for `p99_bound_ms`."""
    totals: dict[str, list[float]] = {}
    buckets: dict[str, dict[float, float]] = {}
    for url in metrics_urls(metrics):
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                text = response.read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            if bucket := BUCKET_LINE.match(line):
                key, labels = _call_key(bucket[1])
                bound = float(labels.get("le", "inf"))
                per_bound = buckets.setdefault(key, {})
                per_bound[bound] = per_bound.get(bound, 0.0) + float(bucket[2])
                continue
            found = RPC_LINE.match(line) or HTTP_LINE.match(line)
            if not found:
                continue
            key, _ = _call_key(found[2])
            slot = totals.setdefault(key, [0.0, 0.0])
            slot[0 if found[1] == "count" else 1] += float(found[3])
    for key, per_bound in buckets.items():
        if key in totals:
            for bound, count in sorted(per_bound.items()):
                totals[key].extend((bound, count))
    return totals


def rpc_per_job(before: dict[str, list[float]], after: dict[str, list[float]], jobs: int) -> dict[str, float]:
    """The window's calls per job, per service method that was called in it."""
    return {
        k: round((v[0] - before.get(k, [0, 0])[0]) / jobs, 3)
        for k, v in sorted(after.items())
        if v[0] > before.get(k, [0, 0])[0]
    }


def rpc_mean_ms(before: dict[str, list[float]], after: dict[str, list[float]]) -> dict[str, float]:
    """The window's mean call duration in ms, per service method that was called in it."""
    return {
        k: round((v[1] - before.get(k, [0, 0])[1]) * 1000 / (v[0] - before.get(k, [0, 0])[0]), 2)
        for k, v in sorted(after.items())
        if v[0] > before.get(k, [0, 0])[0]
    }


def p99_bound_ms(before: dict[str, list[float]], after: dict[str, list[float]]) -> dict[str, float | None]:
    """Per service method called in the window: the upper bound of the histogram bucket that holds
    the window's 99th percentile, in ms (None past the last finite bucket). The buckets are coarse
    (25, 50, 100 ms...): enough to say how much of a client's p99 the service itself accounts for."""
    bounds: dict[str, float | None] = {}
    for key, values in sorted(after.items()):
        calls = values[0] - before.get(key, [0, 0])[0]
        if calls <= 0:
            continue
        earlier = dict(zip(before.get(key, [])[2::2], before.get(key, [])[3::2], strict=True))
        bounds[key] = None
        for bound, count in zip(values[2::2], values[3::2], strict=True):
            if count - earlier.get(bound, 0.0) >= 0.99 * calls:
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


def stream_leader(nats_url: str, stream: str) -> str | None:
    """The node leading `stream` (`n0`...), the one whose CPU a single stream's writes load."""
    import nats

    async def ask() -> str | None:
        nc = await nats.connect(nats_servers(nats_url), connect_timeout=5)
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
