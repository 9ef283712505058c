"""`herald run webhook-sender`."""

from __future__ import annotations

import logging
from typing import Any

import grpc
import orjson
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from herald.bus.fair import FairFetcher
from herald.bus.streams import keep_replicated
from herald.bus.subjects import Subjects, WorkClass
from herald.config import Settings
from herald.dead_letters import Alerter, ledger_mailer
from herald.grpcio.errors import abort_not_found
from herald.links import open_links
from herald.service import ServiceRuntime, run_service
from herald.v1 import webhook_sender_pb2, webhook_sender_pb2_grpc
from herald_webhook_sender.pacing import STATE_TTL_S, Pacer
from herald_webhook_sender.ping import TargetMissing, ping_target
from herald_webhook_sender.signing import Signer
from herald_webhook_sender.worker import WebhookWorker

log = logging.getLogger("herald.webhook_sender")


class WebhookSenderServicer(webhook_sender_pb2_grpc.WebhookSenderServiceServicer):
    def __init__(self, worker: WebhookWorker) -> None:
        self.worker = worker

    async def GetWorkerStatus(
        self, request: webhook_sender_pb2.GetWorkerStatusRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> webhook_sender_pb2.GetWorkerStatusResponse:
        counters = self.worker.counters
        return webhook_sender_pb2.GetWorkerStatusResponse(
            concurrency=self.worker.settings.webhook_concurrency,
            in_flight=counters.in_flight,
            delivered_total=counters.delivered,
            failed_total=counters.failed,
        )

    async def PingTarget(
        self, request: webhook_sender_pb2.PingTargetRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> webhook_sender_pb2.PingTargetResponse:
        try:
            return await ping_target(
                self.worker.ledger, self.worker.signer, self.worker.http, request.tenant_id, request.target_id
            )
        except TargetMissing:
            await abort_not_found(context, "target")


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    _channel, ledger, nc, js = await open_links(runtime)
    fetcher = FairFetcher(
        js,
        settings,
        WorkClass.WEBHOOK,
        settings.webhook_ack_wait_s,
        # Refilled at half (herald.bus.fair): a pull brings a target's bound of messages at
        # least, and a lane's buffer stays small beside the many slots.
        buffer_per_lane=max(2, min(settings.webhook_concurrency, settings.webhook_target_in_flight) * 2),
    )
    await fetcher.start()
    signer = Signer(ledger, settings.key_ring() if settings.master_keys else None)

    async def on_secret_change(message: Msg) -> None:
        signer.forget(str(orjson.loads(message.data).get("tenant_id", "")))

    await nc.subscribe(Subjects(settings.bus_prefix).control("webhook_secrets"), cb=on_secret_change)
    alerter = Alerter.from_settings(settings, "webhook-sender", mail=ledger_mailer(ledger))
    worker = WebhookWorker(settings, fetcher, ledger, signer, js, alerter, Pacer(await pacing_state(js, settings)))

    async def on_config_change(message: Msg) -> None:
        await worker.config_changed(str(orjson.loads(message.data).get("tenant_id", "")))

    for topic in ("subscriptions", "webhook_settings"):
        await nc.subscribe(Subjects(settings.bus_prefix).control(topic), cb=on_config_change)
    await nc.subscribe(Subjects(settings.bus_prefix).control("tenants"), cb=worker.erased.on_notice)
    webhook_sender_pb2_grpc.add_WebhookSenderServiceServicer_to_server(
        WebhookSenderServicer(worker), runtime.grpc.server
    )
    runtime.grpc.register([webhook_sender_pb2.DESCRIPTOR.services_by_name["WebhookSenderService"].full_name])
    runtime.add_loop(lambda: worker.run(runtime.stopping))

    async def close() -> None:
        await alerter.close()
        await worker.close()

    runtime.on_stop(close)


async def pacing_state(js: JetStreamContext, settings: Settings) -> KeyValue | None:
    """The KV bucket targets' rate limits are paced in (shared by every replica); None when
    it cannot be opened, and each replica paces on its own (see herald_webhook_sender.pacing)."""
    bucket = settings.stream_name("target_pace")
    try:
        try:
            found = await js.key_value(bucket)
            await keep_replicated(js, f"KV_{bucket}", settings.stream_replicas)
            return found
        except BucketNotFoundError:
            return await js.create_key_value(
                bucket=bucket, history=1, ttl=STATE_TTL_S, replicas=settings.stream_replicas
            )
    except Exception as error:
        log.warning("target pacing bucket unavailable; pacing per replica", extra={"error": repr(error)})
        return None


def run() -> None:
    run_service("webhook-sender", build)
