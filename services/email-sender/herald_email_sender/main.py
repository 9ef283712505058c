"""`herald run email-sender`.

It runs as a full service (health, metrics, its status RPC, bus connection) and
checks provider credentials for the gateway before they are stored; delivery
through providers arrives with the email issue, so it declares no consumer yet
and leaves email work, if any, untouched on the stream.
"""

from __future__ import annotations

from typing import Any

import grpc
import httpx

from herald.bus.connection import close as close_bus
from herald.bus.connection import connect_with_retry
from herald.bus.streams import ensure_streams
from herald.grpcio.errors import abort_invalid
from herald.service import ServiceRuntime, run_service
from herald.v1 import common_pb2, email_sender_pb2, email_sender_pb2_grpc
from herald_email_sender.providers import postmark, resend, sendgrid, smtp
from herald_email_sender.providers.validation import VALIDATION_TIMEOUT_S


class EmailSenderServicer(email_sender_pb2_grpc.EmailSenderServiceServicer):
    def __init__(self, concurrency: int, http: httpx.AsyncClient) -> None:
        self.concurrency = concurrency
        self.http = http

    async def ValidateCredential(
        self, request: email_sender_pb2.ValidateCredentialRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> email_sender_pb2.ValidateCredentialResponse:
        credential = request.credential
        provider = credential.provider
        if provider == common_pb2.EMAIL_PROVIDER_SENDGRID:
            verdict = await sendgrid.validate(self.http, credential.api_key, request.base_url)
        elif provider == common_pb2.EMAIL_PROVIDER_RESEND:
            verdict = await resend.validate(self.http, credential.api_key, request.base_url)
        elif provider == common_pb2.EMAIL_PROVIDER_POSTMARK:
            verdict = await postmark.validate(self.http, credential.api_key, request.base_url)
        elif provider == common_pb2.EMAIL_PROVIDER_SMTP:
            verdict = await smtp.validate(credential.smtp)
        else:
            await abort_invalid(context, [("credential.provider", "must be sendgrid, resend, postmark or smtp")])
        return email_sender_pb2.ValidateCredentialResponse(
            valid=verdict.valid, reason=verdict.reason, provider_unreachable=verdict.unreachable
        )

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
    http = httpx.AsyncClient(timeout=VALIDATION_TIMEOUT_S, follow_redirects=False)
    email_sender_pb2_grpc.add_EmailSenderServiceServicer_to_server(
        EmailSenderServicer(settings.email_concurrency, http), runtime.grpc.server
    )
    runtime.on_stop(http.aclose)
    runtime.grpc.register([email_sender_pb2.DESCRIPTOR.services_by_name["EmailSenderService"].full_name])
    runtime.on_stop(lambda: close_bus(nc))


def run() -> None:
    run_service("email-sender", build)
