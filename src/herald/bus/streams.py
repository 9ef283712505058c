"""Streams and durable consumers, declared in code and created or updated
idempotently at start, so a deployment needs no manual JetStream setup."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TypeVar

from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    ConsumerInfo,
    DeliverPolicy,
    PersistMode,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import NotFoundError, ServiceUnavailableError

from herald.bus.subjects import Subjects
from herald.config import Settings

log = logging.getLogger("herald.bus")
T = TypeVar("T")

# How long a starting service waits out a JetStream that does not answer its API yet (a
# cluster electing its meta leader after a node restart answers nothing for a few seconds).
START_PATIENCE_S = 30.0
# The JetStream API's answers that mean "not now": no meta leader, no responder, no answer.
_NOT_NOW = (NatsTimeoutError, NoRespondersError, ServiceUnavailableError)

_RETENTION = {
    "workqueue": RetentionPolicy.WORK_QUEUE,
    "limits": RetentionPolicy.LIMITS,
    "interest": RetentionPolicy.INTEREST,
}


@dataclass(frozen=True)
class Topology:
    work_stream: str
    dead_letter_stream: str
    inbound_stream: str = ""
    webhook_consumer: str = "webhook-sender"
    email_consumer: str = "email-sender"


def topology(settings: Settings) -> Topology:
    return Topology(
        work_stream=settings.stream_name("work"),
        dead_letter_stream=settings.stream_name("dlq"),
        inbound_stream=settings.stream_name("inbound"),
    )


def work_stream_config(settings: Settings) -> StreamConfig:
    # JetStream refuses an "async" stream with replicas (settings.work_stream_persist).
    persist = settings.work_stream_persist == "async" and settings.stream_replicas == 1
    return StreamConfig(
        name=topology(settings).work_stream,
        subjects=[Subjects(settings.bus_prefix).all_work()],
        retention=_RETENTION[settings.stream_retention],
        storage=StorageType.FILE,
        num_replicas=settings.stream_replicas,
        max_age=settings.stream_max_age_s,
        duplicate_window=settings.stream_duplicate_window_s,
        persist_mode=PersistMode.ASYNC if persist else None,
    )


def stream_configs(settings: Settings) -> list[StreamConfig]:
    subjects = Subjects(settings.bus_prefix)
    names = topology(settings)
    return [
        work_stream_config(settings),
        StreamConfig(
            name=names.dead_letter_stream,
            subjects=[subjects.all_dead_letters()],
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            num_replicas=settings.stream_replicas,
            max_age=max(settings.stream_max_age_s, 30 * 24 * 3600),
            duplicate_window=settings.stream_duplicate_window_s,
        ),
        # Verified, normalised provider events (`Nats-Msg-Id` = provider:event id), a feed for consumers and
        # an audit trail; the ledger's copy (recorded before the provider gets its 200) is the canonical one.
        StreamConfig(
            name=names.inbound_stream,
            subjects=[subjects.all_inbound()],
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            num_replicas=settings.stream_replicas,
            max_age=settings.stream_max_age_s,
            duplicate_window=settings.stream_duplicate_window_s,
        ),
    ]


def lane_consumer_config(settings: Settings, durable: str, filter_subject: str, ack_wait_s: float) -> ConsumerConfig:
    return ConsumerConfig(
        durable_name=durable,
        ack_policy=AckPolicy.EXPLICIT,
        deliver_policy=DeliverPolicy.ALL,
        ack_wait=ack_wait_s,
        # Attempts are counted in the ledger, not by redelivery count: a crash
        # redelivers without spending one of the job's attempts.
        max_deliver=-1,
        max_ack_pending=settings.consumer_max_ack_pending,
        filter_subject=filter_subject,
    )


# CONSUMER.LIST answers at most this many consumers a page.
CONSUMER_PAGE = 256


async def all_consumers(js: JetStreamContext, stream: str) -> list[ConsumerInfo]:
    """Every consumer of `stream`, page after page."""
    found: list[ConsumerInfo] = []
    while True:
        page = await js.consumers_info(stream, offset=len(found))
        found.extend(page)
        if len(page) < CONSUMER_PAGE:
            return found


async def patiently(what: str, call: Callable[[], Awaitable[T]], patience_s: float = START_PATIENCE_S) -> T:
    """`call()`, again after a pause while JetStream answers "not now", for up to `patience_s`:
    a service restarted while its cluster elects a leader starts once the election is over,
    instead of exiting and being restarted. Any other error, or the last "not now", is raised."""
    deadline, pause = time.monotonic() + patience_s, 0.25
    while True:
        try:
            return await call()
        except _NOT_NOW as error:
            if time.monotonic() + pause > deadline:
                raise
            log.warning("JetStream not ready; retrying", extra={"step": what, "error": repr(error)})
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)


async def ensure_streams(js: JetStreamContext, settings: Settings) -> None:
    for config in stream_configs(settings):
        await ensure_stream(js, config)


async def ensure_stream(js: JetStreamContext, config: StreamConfig) -> None:
    """Creates the stream, or brings an existing one to `config`, patiently."""
    await patiently(f"stream {config.name}", partial(_ensure_stream, js, config))


async def _ensure_stream(js: JetStreamContext, config: StreamConfig) -> None:
    try:
        info = await js.stream_info(config.name or "")
    except NotFoundError:
        await js.add_stream(config)
        log.info("stream created", extra={"stream": config.name})
    else:
        held = info.config.retention
        if held != config.retention and RetentionPolicy.WORK_QUEUE in (held, config.retention):
            # JetStream refuses the change: the stream keeps what it has, said once per start.
            log.warning(
                "stream keeps its retention: JetStream cannot change it to or from a work queue",
                extra={"stream": config.name, "retention": str(held), "configured": str(config.retention)},
            )
            config = replace(config, retention=held)
        config = _keeping_persist_mode(config, info.config)
        await js.update_stream(config)


def _mode(config: StreamConfig) -> PersistMode:
    """The stream's mode (the server's answer names it as a string, or not at all: the default)."""
    return PersistMode(config.persist_mode or PersistMode.DEFAULT)


def _keeping_persist_mode(config: StreamConfig, held: StreamConfig) -> StreamConfig:
    """`config` with the persistence mode `held` has: JetStream refuses to change it, and an
    "async" stream stays at one replica (it cannot have more). Said once per start; deleting the
    work stream makes the services create it anew, and the reconciler publishes again what it held."""
    if _mode(held) == _mode(config):
        return config
    kept = replace(config, persist_mode=_mode(held) if held.persist_mode else None)
    if _mode(held) == PersistMode.ASYNC:
        kept = replace(kept, num_replicas=1)
    log.warning(
        "stream keeps its persistence mode: JetStream cannot change it (or predates it: 2.12)",
        extra={"stream": config.name, "persist_mode": _mode(held).value, "configured": _mode(config).value},
    )
    return kept


async def keep_replicated(js: JetStreamContext, stream: str, replicas: int) -> None:
    """Raise an existing stream to `replicas` copies, never lower.

    KV buckets and object stores are streams (`KV_<bucket>`, `OBJ_<bucket>`) whose replica
    count is fixed when they are created; without this, raising HERALD_STREAM_REPLICAS on a
    grown cluster (R1 to R3) would leave them on one node, and losing that node would lose
    them. Best effort: a failure is logged and the service goes on with what exists.
    """
    try:
        info = await js.stream_info(stream)
        if (info.config.num_replicas or 1) >= replicas:
            return
        info.config.num_replicas = replicas
        await js.update_stream(info.config)
        log.info("stream replicas raised", extra={"stream": stream, "replicas": replicas})
    except Exception as error:
        log.warning("could not raise a stream's replicas", extra={"stream": stream, "error": repr(error)})


async def ensure_consumer(js: JetStreamContext, stream: str, config: ConsumerConfig) -> None:
    await patiently(f"consumer {config.durable_name}", lambda: js.add_consumer(stream, config))
