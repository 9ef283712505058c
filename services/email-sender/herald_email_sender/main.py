"""`herald run email-sender`.

It runs as a full service (health, metrics, its status RPC, bus connection);
delivery through providers arrives with the email issue, so it declares no
consumer yet and leaves email work, if any, untouched on the stream.
"""

from __future__ import annotations

from typing import Any

import grpc

from herald.bus.connection import close as close_bus
from herald.bus.connection import connect_with_retry
from herald.bus.streams import ensure_streams
from herald.service import ServiceRuntime, run_service
from herald.v1 import email_sender_pb2, email_sender_pb2_grpc


class EmailSenderServicer(email_sender_pb2_grpc.EmailSenderServiceServicer):
    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency

    async def GetEmailWorkerStatus(
        self,
        request: email_sender_pb2.GetEmailWorkerStatusRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> email_sender_pb2.GetEmailWorkerStatusResponse:
        return email_sender_pb2.GetEmailWorkerStatusResponse(concurrency=self.concurrency, in_flight=0)


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    nc = await connect_with_retry(settings.nats_url, "email-sender", runtime.stopping)
    await ensure_streams(nc.jetstream(timeout=5), settings)
    email_sender_pb2_grpc.add_EmailSenderServiceServicer_to_server(
        EmailSenderServicer(settings.email_concurrency), runtime.grpc.server
    )
    runtime.grpc.register([email_sender_pb2.DESCRIPTOR.services_by_name["EmailSenderService"].full_name])
    runtime.on_stop(lambda: close_bus(nc))


def run() -> None:
    run_service("email-sender", build)
