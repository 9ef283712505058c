"""`herald run email-sender`.

Delivers tenant email and platform email (Herald's own mail) from JetStream through the
providers (`worker`), checks provider credentials for the gateway before they are stored,
and registers and verifies sending domains with the providers' domain APIs. /metrics
carries the circuit breakers' state (`herald_provider_circuit_state{provider}`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import NoReturn

import grpc
import orjson
from nats.aio.msg import Msg

from herald.bus.fair import FairFetcher
from herald.bus.subjects import WorkClass
from herald.dead_letters import Alerter, ledger_mailer
from herald.grpcio.context import Context
from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found, abort_unavailable
from herald.links import open_links
from herald.names import PROVIDER_NAMES
from herald.secrets import SecretUnavailable
from herald.sender.erased import ErasedTenants
from herald.service import ServiceRuntime, run_service
from herald.v1 import common_pb2, email_sender_pb2, email_sender_pb2_grpc
from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.target_guard import AllowList, TargetGuard
from herald_email_sender import domains
from herald_email_sender.breaker import DEFAULT_METRICS, LABELS, BreakerBoard, BreakerPolicy
from herald_email_sender.credentials import ProviderSet, TenantProviders, platform_providers
from herald_email_sender.dispatch import Senders
from herald_email_sender.providers import postmark, resend, sendgrid, smtp
from herald_email_sender.providers.validation import VALIDATION_TIMEOUT_S, Validation
from herald_email_sender.worker import Counters, EmailWorker, WorkerConfig

# Credential checks and domain calls at once (they come from tenants' API calls, a few at a time).
CHECK_CONNECTIONS = 20


@dataclass(eq=False)
class EmailSenderServicer(email_sender_pb2_grpc.EmailSenderServiceServicer):
    """`http` connects through the target guard (tenants aim base URLs); `guard` checks SMTP relays."""

    concurrency: int
    http: ReceiverClient
    providers: TenantProviders
    counters: Counters
    breakers: BreakerBoard | None = None
    guard: TargetGuard | None = None

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
            verdict = await smtp.validate(credential.smtp, guard=self.guard)
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
            circuits=[
                email_sender_pb2.ProviderCircuit(
                    tenant_id=tenant_id, provider_id=provider_id, provider=kind, state=LABELS[state]
                )
                for tenant_id, provider_id, kind, state in (self.breakers.not_closed() if self.breakers else [])
            ],
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

    async def _on_domain(
        self,
        context: Context,
        request: email_sender_pb2.RegisterDomainRequest | email_sender_pb2.VerifyDomainRequest,
        call: DomainCall,
        name: str,
    ) -> tuple[domains.DomainState, common_pb2.ProviderConfig]:
        """One domain call to the request's provider with its opened credential, a DomainError aborting the RPC."""
        config, credential = await self._provider(context, request.tenant_id, request.provider_id)
        try:
            return await call(self.http, config, credential, name), config
        except domains.DomainError as error:
            await _abort_domain(context, error)
        finally:
            del credential

    async def RegisterDomain(
        self, request: email_sender_pb2.RegisterDomainRequest, context: Context
    ) -> email_sender_pb2.RegisterDomainResponse:
        state, config = await self._on_domain(context, request, domains.register, request.domain)
        return email_sender_pb2.RegisterDomainResponse(domain=domain_proto(state, config, request.domain))

    async def VerifyDomain(
        self, request: email_sender_pb2.VerifyDomainRequest, context: Context
    ) -> email_sender_pb2.VerifyDomainResponse:
        state, config = await self._on_domain(context, request, domains.verify, request.provider_domain_id)
        return email_sender_pb2.VerifyDomainResponse(domain=domain_proto(state, config, state.name))


# domains.register and domains.verify: the provider's answer for one domain name or id.
DomainCall = Callable[
    [ReceiverClient, common_pb2.ProviderConfig, common_pb2.ProviderCredential, str], Awaitable[domains.DomainState]
]


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
    _channel, ledger, nc, js = await open_links(runtime)
    ring = settings.key_ring() if settings.master_keys else None
    # Tenants aim their providers (base URL, SMTP host): every connection for a tenant goes
    # through the target guard, with the webhooks' allow-list (HERALD_TARGET_ALLOW; loopback
    # with HERALD_WEBHOOK_ALLOW_LOOPBACK, which `herald up` sets).
    guard = TargetGuard(AllowList.parse(settings.target_allow, loopback=settings.webhook_allow_loopback))
    # Credential checks and domain calls; sends have a client of their own, sized for them.
    # Both are the guarded receiver client the webhook-sender uses (a thirtieth of httpx's CPU a call).
    http = ReceiverClient(guard, timeout_s=VALIDATION_TIMEOUT_S, connections=CHECK_CONNECTIONS)
    send_http = ReceiverClient(
        guard, timeout_s=settings.email_send_timeout_s, connections=settings.email_concurrency * 2
    )
    senders = Senders(
        send_http,
        timeout_s=settings.email_send_timeout_s,
        smtp_timeout_s=settings.email_send_timeout_s,
        smtp_ca_file=settings.email_smtp_ca_file,
        guard=guard,
    )
    # Platform email: the operator's own provider from settings, which may well sit on a
    # private network; it is not tenant-aimed, so it connects without the guard.
    platform_http = ReceiverClient(
        None, timeout_s=settings.email_send_timeout_s, connections=settings.platform_email_concurrency * 2
    )
    platform_senders = replace(senders, http=platform_http, guard=None)
    breakers = BreakerBoard(
        BreakerPolicy(
            failures=settings.email_breaker_failures,
            window_s=settings.email_breaker_window_s,
            cool_down_s=settings.email_breaker_cool_down_s,
            probe_timeout_s=max(2 * settings.email_send_timeout_s, 1.0),
        )
    )
    # Every provider kind reads 0 (closed) from the start, so the gauge exists before any trouble.
    for kind in PROVIDER_NAMES.values():
        DEFAULT_METRICS.seen(kind)
    providers = TenantProviders(ledger, ring, settings.email_provider_cache_ttl_s)

    async def on_provider_change(message: Msg) -> None:
        providers.forget(str(orjson.loads(message.data).get("tenant_id", "")))

    await nc.subscribe(settings.subjects().control("providers"), cb=on_provider_change)
    alerter = Alerter.from_settings(settings, "email-sender", mail=ledger_mailer(ledger))
    counters = Counters()
    platform = platform_providers(settings)

    async def platform_lookup(tenant_id: str) -> ProviderSet:
        return platform

    workers = []
    erased = ErasedTenants()
    await nc.subscribe(settings.subjects().control("tenants"), cb=erased.on_notice)
    for work_class, config, lookup, class_senders in (
        (
            WorkClass.EMAIL,
            WorkerConfig(
                channel=common_pb2.CHANNEL_EMAIL,
                concurrency=settings.email_concurrency,
                retry_schedule_s=tuple(settings.email_retry_schedule_s),
                park_from_s=settings.park_retries_from_s,
            ),
            providers.for_tenant,
            senders,
        ),
        (
            WorkClass.PLATFORM_EMAIL,
            WorkerConfig(
                channel=common_pb2.CHANNEL_PLATFORM_EMAIL,
                concurrency=settings.platform_email_concurrency,
                retry_schedule_s=tuple(settings.platform_email_retry_schedule_s),
                breaker_tenant="herald-platform",
                no_provider_error="no platform email provider is configured (HERALD_PLATFORM_EMAIL_PROVIDER)",
                park_from_s=settings.park_retries_from_s,
            ),
            platform_lookup,
            platform_senders,
        ),
    ):
        fetcher = FairFetcher(
            js, settings, work_class, settings.email_ack_wait_s, buffer_per_lane=max(2, config.concurrency)
        )
        await fetcher.start()
        worker = EmailWorker(
            config, fetcher, ledger, lookup, class_senders, breakers, js, settings.subjects(), alerter, counters
        )
        worker.erased = erased
        workers.append(worker)
        runtime.add_loop(lambda worker=worker: worker.run(runtime.stopping))  # type: ignore[misc]

    email_sender_pb2_grpc.add_EmailSenderServiceServicer_to_server(
        EmailSenderServicer(settings.email_concurrency, http, providers, counters, breakers, guard),
        runtime.grpc.server,
    )
    runtime.grpc.register([email_sender_pb2.DESCRIPTOR.services_by_name["EmailSenderService"].full_name])

    async def close() -> None:
        await alerter.close()
        await http.close()
        await send_http.close()
        await platform_http.close()

    runtime.on_stop(close)


def run() -> None:
    run_service("email-sender", build)
