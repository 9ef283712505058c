"""Queue depth, consumer lag and dead-letter depth, read from JetStream.

The router runs `JetStreamCollector.run`: every few seconds it asks JetStream for
the info of Herald's streams and of every consumer on them, and keeps the answer
as one immutable snapshot. A Prometheus scrape reads that snapshot and never
waits on the bus. Every router replica exports the same numbers (they describe the
shared streams, not the replica), so dashboards and alerts aggregate them with
`max`, never `sum`.

Consumer metrics are labelled {stream, consumer, channel, priority}: `channel` and
`priority` are read from the consumer's filter subject (`<prefix>.work.<class>.<priority>...`,
herald.bus.subjects), so a sender's many consumers (one per fairness lane) add up per
channel and priority; both are empty for a consumer that filters anything else.

When JetStream cannot be read, the collector exports `herald_jetstream_up 0` and no
stream or consumer samples (stale numbers would hide a growing queue), and
`herald_jetstream_last_success_timestamp_seconds` says how old the last good read is.

Exported (all gauges unless named `_total`):

    herald_stream_messages{stream}                      messages stored now
    herald_stream_bytes{stream}                         bytes stored now
    herald_stream_stored_messages_total{stream}         messages ever stored (the stream's last sequence)
    herald_consumer_pending_messages{...}               not yet delivered to the consumer (its lag)
    herald_consumer_ack_pending_messages{...}           delivered, not yet acknowledged (in flight or
                                                        waiting out a retry delay)
    herald_consumer_max_ack_pending{...}                the consumer's limit of those: at it, the consumer
                                                        delivers nothing new, to any tenant of its lane
    herald_consumer_redelivered_messages{...}           of those, delivered more than once
    herald_consumer_waiting_pulls{...}                  pull requests waiting for messages (idle senders)
    herald_dead_letter_messages                         messages in the dead-letter stream
    herald_jetstream_up                                 1 if the last read succeeded
    herald_jetstream_last_success_timestamp_seconds     when it last did
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector, CollectorRegistry

from herald.bus.streams import all_consumers, topology
from herald.config import Settings

log = logging.getLogger("herald.telemetry.jetstream")

DEFAULT_INTERVAL_S = 5.0


@dataclass(frozen=True)
class StreamSample:
    name: str
    messages: int
    bytes: int
    last_sequence: int


@dataclass(frozen=True)
class ConsumerSample:
    stream: str
    name: str
    pending: int
    ack_pending: int
    redelivered: int
    waiting: int
    channel: str = ""
    priority: str = ""
    max_ack_pending: int = 0  # the consumer's limit (-1 or 0: none)


@dataclass(frozen=True)
class Snapshot:
    up: bool = False
    last_success: float = 0.0
    streams: tuple[StreamSample, ...] = ()
    consumers: tuple[ConsumerSample, ...] = ()
    dead_letter_messages: int | None = None


class JetStreamCollector(Collector):
    """A Prometheus collector over a snapshot that `refresh` (or `run`) keeps current."""

    def __init__(
        self,
        streams: Sequence[str],
        dead_letter_stream: str,
        interval_s: float = DEFAULT_INTERVAL_S,
        bus_prefix: str = "herald",
    ) -> None:
        self.streams = tuple(streams)
        self.dead_letter_stream = dead_letter_stream
        self.interval_s = interval_s
        self._work_prefix = f"{bus_prefix}.work."
        # Replaced whole by each refresh, so a scrape (another thread) reads one consistent read.
        self.snapshot = Snapshot()

    @classmethod
    def for_settings(cls, settings: Settings, interval_s: float = DEFAULT_INTERVAL_S) -> JetStreamCollector:
        names = topology(settings)
        return cls(
            streams=(names.work_stream, names.dead_letter_stream),
            dead_letter_stream=names.dead_letter_stream,
            interval_s=interval_s,
            bus_prefix=settings.bus_prefix,
        )

    def register(self, registry: CollectorRegistry = REGISTRY) -> JetStreamCollector:
        registry.register(self)
        return self

    # ---- reading JetStream ---------------------------------------------

    async def refresh(self, js: Any) -> Snapshot:
        """Reads every stream and consumer once; on failure exports `up 0` and no samples."""
        try:
            self.snapshot = await self._read(js)
        except Exception as error:
            log.warning("cannot read JetStream info", extra={"error": repr(error)})
            self.snapshot = Snapshot(up=False, last_success=self.snapshot.last_success)
        return self.snapshot

    async def _read(self, js: Any) -> Snapshot:
        from nats.js.errors import NotFoundError

        streams: list[StreamSample] = []
        consumers: list[ConsumerSample] = []
        dead_letters: int | None = None
        for name in self.streams:
            try:
                info = await js.stream_info(name)
            except NotFoundError:
                continue  # not created yet: nothing to report for it
            state = info.state
            streams.append(StreamSample(name, int(state.messages), int(state.bytes), int(state.last_seq)))
            if name == self.dead_letter_stream:
                dead_letters = int(state.messages)
            for consumer in await all_consumers(js, name):
                channel, priority = self._class_and_priority(consumer.config.filter_subject)
                consumers.append(
                    ConsumerSample(
                        stream=name,
                        name=consumer.name,
                        pending=int(consumer.num_pending or 0),
                        ack_pending=int(consumer.num_ack_pending or 0),
                        redelivered=int(consumer.num_redelivered or 0),
                        waiting=int(consumer.num_waiting or 0),
                        max_ack_pending=int(consumer.config.max_ack_pending or 0),
                        channel=channel,
                        priority=priority,
                    )
                )
        return Snapshot(
            up=True,
            last_success=time.time(),
            streams=tuple(streams),
            consumers=tuple(sorted(consumers, key=lambda c: (c.stream, c.name))),
            dead_letter_messages=dead_letters,
        )

    def _class_and_priority(self, filter_subject: str | None) -> tuple[str, str]:
        if not filter_subject or not filter_subject.startswith(self._work_prefix):
            return "", ""
        tokens = [t if t not in ("*", ">") else "" for t in filter_subject[len(self._work_prefix) :].split(".")]
        return tokens[0], tokens[1] if len(tokens) > 1 else ""

    async def run(self, js: Any, stopping: asyncio.Event) -> None:
        """Refreshes every `interval_s` until `stopping` is set (a ServiceRuntime loop)."""
        while not stopping.is_set():
            await self.refresh(js)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=self.interval_s)

    # ---- Prometheus ----------------------------------------------------

    def describe(self) -> Iterator[Metric]:
        # The families without samples: lets the registry check names at
        # registration without a read of the (maybe not yet connected) bus.
        return self._families(Snapshot(), with_status=False)

    def collect(self) -> Iterator[Metric]:
        return self._families(self.snapshot, with_status=True)

    def _families(self, snap: Snapshot, with_status: bool) -> Iterator[Metric]:
        stream_messages = GaugeMetricFamily(
            "herald_stream_messages", "Messages stored in a JetStream stream.", labels=["stream"]
        )
        stream_bytes = GaugeMetricFamily(
            "herald_stream_bytes", "Bytes stored in a JetStream stream.", labels=["stream"]
        )
        stored = CounterMetricFamily(
            "herald_stream_stored_messages",
            "Messages ever stored in a JetStream stream (its last sequence number).",
            labels=["stream"],
        )
        for stream in snap.streams:
            stream_messages.add_metric([stream.name], stream.messages)
            stream_bytes.add_metric([stream.name], stream.bytes)
            stored.add_metric([stream.name], stream.last_sequence)

        labels = ["stream", "consumer", "channel", "priority"]
        pending = GaugeMetricFamily(
            "herald_consumer_pending_messages", "Messages not yet delivered to a consumer (its lag).", labels=labels
        )
        ack_pending = GaugeMetricFamily(
            "herald_consumer_ack_pending_messages",
            "Messages delivered to a consumer and not yet acknowledged (in flight or waiting out a retry delay).",
            labels=labels,
        )
        ack_limit = GaugeMetricFamily(
            "herald_consumer_max_ack_pending",
            "A consumer's limit of unacknowledged messages: at it, it delivers nothing new to any tenant of its lane.",
            labels=labels,
        )
        redelivered = GaugeMetricFamily(
            "herald_consumer_redelivered_messages",
            "Unacknowledged messages that were delivered more than once.",
            labels=labels,
        )
        waiting = GaugeMetricFamily(
            "herald_consumer_waiting_pulls", "Pull requests waiting for messages (idle workers).", labels=labels
        )
        for consumer in snap.consumers:
            key = [consumer.stream, consumer.name, consumer.channel, consumer.priority]
            pending.add_metric(key, consumer.pending)
            ack_pending.add_metric(key, consumer.ack_pending)
            if consumer.max_ack_pending > 0:
                ack_limit.add_metric(key, consumer.max_ack_pending)
            redelivered.add_metric(key, consumer.redelivered)
            waiting.add_metric(key, consumer.waiting)

        dead_letters = GaugeMetricFamily("herald_dead_letter_messages", "Messages in the dead-letter stream.")
        if snap.dead_letter_messages is not None:
            dead_letters.add_metric([], snap.dead_letter_messages)
        up = GaugeMetricFamily("herald_jetstream_up", "1 if the last read of JetStream stream info succeeded.")
        last = GaugeMetricFamily(
            "herald_jetstream_last_success_timestamp_seconds", "Unix time of the last successful JetStream read."
        )
        if with_status:
            up.add_metric([], 1.0 if snap.up else 0.0)
            last.add_metric([], snap.last_success)
        yield from (
            stream_messages,
            stream_bytes,
            stored,
            pending,
            ack_pending,
            ack_limit,
            redelivered,
            waiting,
            dead_letters,
        )
        yield from (up, last)
