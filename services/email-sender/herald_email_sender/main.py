"""`herald run email-sender`.

Delivers tenant email and platform email (Herald's own mail) from JetStream through the
providers (`worker`), checks provider credentials for the gateway before they are stored,
and registers and verifies sending domains with the providers' domain APIs. /metrics
carries the circuit breakers' state (`herald_provider_circuit_state{provider}`).
"""

from __future__ import annotations

from typing import Any, NoReturn

import grpc
import httpx
import orjson
from nats.aio.msg import Msg

from herald.bus.connection import close as close_bus
from herald.bus.connection import connect_with_retry
from herald.bus.fair import FairFetcher
from herald.bus.streams import ensure_streams
from herald.bus.subjects import WorkClass
from herald.dead_letters import Alerter, ledger_mailer
from herald.grpcio.client import open_channel
from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found, abort_unavailable
from herald.secrets import SecretUnavailable
from herald.service import ServiceRuntime, run_service
from herald.v1 import common_pb2, email_sender_pb2, email_sender_pb2_grpc, ledger_pb2_grpc
from herald_email_sender import domains
from herald_email_sender.breaker import DEFAULT_METRICS, BreakerBoard, BreakerPolicy
from herald_email_sender.credentials import ProviderSet, TenantProviders, platform_providers
from herald_email_sender.dispatch import NAMES, Senders
from herald_email_sender.providers import postmark, resend, sendgrid, smtp
from herald_email_sender.providers.validation import VALIDATION_TIMEOUT_S, Validation
from herald_email_sender.worker import Counters, EmailWorker, WorkerConfig

Context = grpc.aio.ServicerContext[Any, Any]


class EmailSenderServicer(email_sender_pb2_grpc.EmailSenderServiceServicer):
    def __init__(
        self, concurrency: int, http: httpx.AsyncClient, providers: TenantProviders, counters: Counters
    ) -> None:
        self.concurrency = concurrency
        self.http = http
        self.providers = providers
        self.counters = counters

    async def ValidateCredential(
        self, request: email_sender_pb2.ValidateCredentialRequest, context: Context
    ) -> email_sender_pb2.ValidateCredentialResponse:
        credential = request.credential
        provider = credential.provider
        if provider == common_pb2.EMAIL_PROVIDER_SENDGRID:
            verdict = await sendgrid.validate(self.http, credential.api_key, request.base_url)
        elif provider == common_pb2.EMAIL_PROVIDER_RESEND:
            verdict = await resend.validate(self.http, credential.api_key, request.base_url)
        elif provider == common_pb2.EMAIL_PROVIDER_POSTMARK:
            # The server token (sending) and, when given, the account token (domains). A
            # credential carrying only an account token is a change of that token alone.
            verdict = Validation(True)
            if credential.api_key or not credential.account_token:
                verdict = await postmark.validate(self.http, credential.api_key, request.base_url)
            if verdict.valid and credential.account_token:
                verdict = await postmark.validate_account_token(self.http, credential.account_token, request.base_url)
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
        context: Context,
    ) -> email_sender_pb2.GetEmailWorkerStatusResponse:
        counters = self.counters
        return email_sender_pb2.GetEmailWorkerStatusResponse(
            concurrency=self.concurrency,
            in_flight=counters.in_flight,
            delivered_total=counters.delivered,
            failed_total=counters.failed,
            dead_lettered_total=counters.dead_lettered,
        )

    async def _provider(
        self, context: Context, tenant_id: str, provider_id: str
    ) -> tuple[common_pb2.ProviderConfig, common_pb2.ProviderCredential]:
        try:
            found: ProviderSet = await self.providers.for_tenant(tenant_id, fresh=True)
        except grpc.aio.AioRpcError:
            await abort_unavailable(context, "the ledger is unavailable; retry shortly")
        config = found.by_id(provider_id)
        if config is None:
            await abort_not_found(context, "provider")
        try:
            return config, found.open(config)
        except SecretUnavailable:
            await abort_failed_precondition(context, "the provider's stored credential cannot be opened")

    async def RegisterDomain(
        self, request: email_sender_pb2.RegisterDomainRequest, context: Context
    ) -> email_sender_pb2.RegisterDomainResponse:
        config, credential = await self._provider(context, request.tenant_id, request.provider_id)
        try:
            state = await domains.register(self.http, config, credential, request.domain)
        except domains.DomainError as error:
            await _abort_domain(context, error)
        finally:
            del credential
        return email_sender_pb2.RegisterDomainResponse(domain=domain_proto(state, config, request.domain))

    async def VerifyDomain(
        self, request: email_sender_pb2.VerifyDomainRequest, context: Context
    ) -> email_sender_pb2.VerifyDomainResponse:
        config, credential = await self._provider(context, request.tenant_id, request.provider_id)
        try:
            state = await domains.verify(self.http, config, credential, request.provider_domain_id)
        except domains.DomainError as error:
            await _abort_domain(context, error)
        finally:
            del credential
        return email_sender_pb2.VerifyDomainResponse(domain=domain_proto(state, config, state.name))


async def _abort_domain(context: Context, error: domains.DomainError) -> NoReturn:
    if error.transient:
        await abort_unavailable(context, str(error))
    await abort_failed_precondition(context, str(error))


def domain_proto(state: domains.DomainState, config: common_pb2.ProviderConfig, name: str) -> common_pb2.SendingDomain:
    return common_pb2.SendingDomain(
        name=(state.name or name).lower(),
        provider_id=config.id,
        provider=config.provider,
        provider_domain_id=state.provider_domain_id,
        verified=state.verified,
        records=[
            common_pb2.DnsRecord(
                type=r.type,
                name=r.name,
                value=r.value,
                status=r.status.value,
                purpose=r.purpose,
                priority=r.priority or 0,
            )
            for r in state.records
        ],
        provider_status=state.provider_status,
    )


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    channel = open_channel(settings.ledger_addr)
    ledger = ledger_pb2_grpc.LedgerServiceStub(channel)
    nc = await connect_with_retry(settings.nats_url, "email-sender", runtime.stopping)
    js = nc.jetstream(timeout=5)
    await ensure_streams(js, settings)
    ring = settings.key_ring() if settings.master_keys else None
    # Credential checks and domain calls; sends have a client of their own, sized for them.
    http = httpx.AsyncClient(timeout=VALIDATION_TIMEOUT_S, follow_redirects=False)
    send_http = httpx.AsyncClient(
        timeout=settings.email_send_timeout_s,
        follow_redirects=False,
        limits=httpx.Limits(max_connections=(settings.email_concurrency + settings.platform_email_concurrency) * 2),
    )
    senders = Senders(
        send_http,
        timeout_s=settings.email_send_timeout_s,
        smtp_timeout_s=settings.email_send_timeout_s,
        smtp_ca_file=settings.email_smtp_ca_file,
    )
    breakers = BreakerBoard(
        BreakerPolicy(
            failures=settings.email_breaker_failures,
            window_s=settings.email_breaker_window_s,
            cool_down_s=settings.email_breaker_cool_down_s,
            probe_timeout_s=max(2 * settings.email_send_timeout_s, 1.0),
        )
    )
    # Every provider kind reads 0 (closed) from the start, so the gauge exists before any trouble.
    for kind in NAMES.values():
        DEFAULT_METRICS.seen(kind)
    providers = TenantProviders(ledger, ring, settings.email_provider_cache_ttl_s)

    async def on_provider_change(message: Msg) -> None:
        providers.forget(str(orjson.loads(message.data).get("tenant_id", "")))

    await nc.subscribe(settings.subjects().control("providers"), cb=on_provider_change)
    alerter = Alerter(
        settings.alert_slack_url,
        settings.alert_webhook_url,
        settings.alert_window_s,
        source="email-sender",
        email_to=settings.alert_email_recipients(),
        mail=ledger_mailer(ledger),
    )
    counters = Counters()
    platform = platform_providers(settings)

    async def platform_lookup(tenant_id: str) -> ProviderSet:
        return platform

    workers = []
    for work_class, config, lookup in (
        (
            WorkClass.EMAIL,
            WorkerConfig(
                channel=common_pb2.CHANNEL_EMAIL,
                concurrency=settings.email_concurrency,
                retry_schedule_s=tuple(settings.email_retry_schedule_s),
            ),
            providers.for_tenant,
        ),
        (
            WorkClass.PLATFORM_EMAIL,
            WorkerConfig(
                channel=common_pb2.CHANNEL_PLATFORM_EMAIL,
                concurrency=settings.platform_email_concurrency,
                retry_schedule_s=tuple(settings.platform_email_retry_schedule_s),
                breaker_tenant="herald-platform",
                no_provider_error="no platform email provider is configured (HERALD_PLATFORM_EMAIL_PROVIDER)",
            ),
            platform_lookup,
        ),
    ):
        fetcher = FairFetcher(
            js, settings, work_class, settings.email_ack_wait_s, buffer_per_lane=max(1, config.concurrency // 2)
        )
        await fetcher.start()
        worker = EmailWorker(
            config, fetcher, ledger, lookup, senders, breakers, js, settings.subjects(), alerter, counters
        )
        workers.append(worker)
        runtime.add_loop(lambda worker=worker: worker.run(runtime.stopping))  # type: ignore[misc]

    email_sender_pb2_grpc.add_EmailSenderServiceServicer_to_server(
        EmailSenderServicer(settings.email_concurrency, http, providers, counters), runtime.grpc.server
    )
    runtime.grpc.register([email_sender_pb2.DESCRIPTOR.services_by_name["EmailSenderService"].full_name])

    async def close() -> None:
        await alerter.close()
        await http.aclose()
        await send_http.aclose()
        await close_bus(nc)
        await channel.close()

    runtime.on_stop(close)


def run() -> None:
    run_service("email-sender", build)
