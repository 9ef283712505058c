"""Where work stood on the stacks a failed test used, added to its report beside their logs
(`stack_logs`): a job that never started says nothing in a log, and a failure that does not
reproduce alone (a CI run's) must say whether its message sat on the bus (a lane's consumer
with messages pending and no pull waiting for them) or in a sender (its calls and held jobs)."""

from __future__ import annotations

import asyncio

import httpx
import nats

from herald.bus.streams import all_consumers
from herald.cli.stack import Stack
from herald.config import nats_servers
from tests.support.bus_faults import work_stream

# The sender gauges of /metrics worth a look when a job did not move.
_GAUGES = ("herald_sender_", "herald_unsettled_job_age")


async def _consumers(stack: Stack) -> list[str]:
    """Each work-stream consumer with messages not yet delivered or not yet acknowledged."""
    credentials = stack.endpoints.get("nats_credentials_file")
    options = {"user_credentials": credentials} if credentials else {}
    nc = await nats.connect(nats_servers(str(stack.endpoints["nats_url"])), connect_timeout=2, **options)
    try:
        stream = work_stream(stack.config.bus_prefix)
        lines = []
        for info in await all_consumers(nc.jetstream(timeout=2), stream):
            if info.num_pending or info.num_ack_pending or info.num_redelivered:
                lines.append(
                    f"{info.name}: pending {info.num_pending}, unacknowledged {info.num_ack_pending}, "
                    f"redelivered {info.num_redelivered}, pulls waiting {info.num_waiting}"
                )
        return lines or [f"{stream}: no consumer has a message pending or unacknowledged"]
    finally:
        await nc.close()


def _gauges(stack: Stack) -> list[str]:
    lines = []
    for service, url in dict(stack.endpoints.get("metrics", {})).items():
        try:
            text = httpx.get(str(url), timeout=2).text
        except httpx.HTTPError as error:
            lines.append(f"{service}: /metrics unanswered ({error!r})")
            continue
        lines += [f"{service}: {line}" for line in text.splitlines() if line.startswith(_GAUGES)]
    return lines


def sections_for(stacks: list[Stack]) -> list[tuple[str, str]]:
    sections = []
    for stack in stacks:
        try:
            lines = asyncio.run(_consumers(stack)) + _gauges(stack)
        except Exception as error:  # the report must never hide the failure it explains
            lines = [f"not read: {error!r}"]
        sections.append(
            (f"{stack.data_dir.name}: the work stream's consumers and the senders' gauges", "\n".join(lines))
        )
    return sections
