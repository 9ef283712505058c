"""A pull consumer that comes back when the bus loses it.

A work stream deleted and recreated (or a consumer deleted by hand) leaves a service pulling
from a consumer that no longer exists: the pulls time out or fail for good, and the service
looked alive while it took nothing. `HealingPull` keeps a pull subscription bound to a
consumer that exists: after an error it waits (backing off, logging the first failure and
then every `LOG_EVERY`th), then ensures the stream and the consumer the patient way a start
does (`herald.bus.streams`) and binds afresh; after a quiet spell (pulls that time out) it
asks the server whether the consumer is still there, and restores it if not. The jobs whose
messages went with a stream are the ledger's reconciler's (herald_ledger.reconciler).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, StreamConfig
from nats.js.errors import NotFoundError

from herald.bus.streams import ensure_consumer, ensure_stream

log = logging.getLogger("herald.bus.healing")

# A pull that has found nothing for this long checks that its consumer still exists.
# (One consumer-info request per lane and period: 48 lanes a sender at the default 16 lanes, a
# couple of requests a second, for a recovery within the period.)
CHECK_AFTER_QUIET_S = 30.0
MAX_BACKOFF_S = 5.0
LOG_EVERY = 20


class HealingPull:
    def __init__(self, js: JetStreamContext, stream: StreamConfig, consumer: ConsumerConfig, what: str) -> None:
        self.js = js
        self.stream = stream
        self.consumer = consumer
        self.what = what
        self.subscription: JetStreamContext.PullSubscription | None = None
        self.failures = 0
        self.restored = 0
        self._quiet_since = time.monotonic()

    @property
    def stream_name(self) -> str:
        return self.stream.name or ""

    async def bind(self) -> JetStreamContext.PullSubscription:
        """Binds to the consumer (ensured by the caller at start, or by `restore`)."""
        old, self.subscription = (
            self.subscription,
            await self.js.pull_subscribe_bind(self.consumer.durable_name or "", stream=self.stream_name),
        )
        if old is not None:
            with contextlib.suppress(Exception):
                await old.unsubscribe()
        return self.subscription

    def fetched(self) -> None:
        """Messages came: the consumer is there."""
        self.failures = 0
        self._quiet_since = time.monotonic()

    async def quiet(self) -> None:
        """A pull timed out; after a quiet spell, checks that the consumer still exists."""
        if time.monotonic() - self._quiet_since < CHECK_AFTER_QUIET_S:
            return
        self._quiet_since = time.monotonic()
        try:
            await self.js.consumer_info(self.stream_name, self.consumer.durable_name or "")
        except NotFoundError:
            log.warning("consumer gone; recreating it", extra={"consumer": self.what})
            await self.restore()
        except Exception as error:  # the bus is away: the pulls say so, and reconnect
            log.info("consumer not checked", extra={"consumer": self.what, "error": repr(error)})

    async def failed(self, error: Exception) -> None:
        """A pull failed: backs off, then restores the stream, the consumer and the binding."""
        self.failures += 1
        if self.failures == 1 or self.failures % LOG_EVERY == 0:
            log.warning(
                "pull failed; restoring the consumer",
                extra={"consumer": self.what, "failures": self.failures, "error": repr(error)},
            )
        await asyncio.sleep(min(0.5 * self.failures, MAX_BACKOFF_S))
        await self.restore()

    async def restore(self) -> None:
        """Ensures the stream and the consumer (patiently, as at start) and binds again."""
        try:
            await ensure_stream(self.js, self.stream)
            await ensure_consumer(self.js, self.stream_name, self.consumer)
            await self.bind()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.warning("consumer not restored yet", extra={"consumer": self.what, "error": repr(error)})
            return
        self.restored += 1
        self._quiet_since = time.monotonic()
        log.warning("consumer restored", extra={"consumer": self.what, "restored": self.restored})
