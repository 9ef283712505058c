"""NotificationService and AdminService over gRPC: the same handlers as HTTP."""

from __future__ import annotations

from datetime import UTC
from typing import Any, NoReturn

import grpc

from herald.grpcio.errors import (
    abort_aborted,
    abort_already_exists,
    abort_failed_precondition,
    abort_invalid,
    abort_not_found,
    abort_resource_exhausted,
    abort_unauthenticated,
    abort_unavailable,
)
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, ledger_pb2
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator, Principal
from herald_gateway.errors import (
    Conflict,
    GatewayError,
    IdempotencyConflict,
    IdempotencyMismatch,
    Invalid,
    InvalidCredential,
    NotFound,
    NotRetryable,
    ProviderRefused,
    QuotaExceeded,
    RateLimited,
    SenderDomainUnverified,
    TargetDisabled,
    Unauthenticated,
)
from herald_gateway.grpc_batch import BatchGrpc
from herald_gateway.grpc_subscriptions import SubscriptionGrpc
from herald_gateway.handlers import Handlers, WebhookInput
from herald_gateway.http.admission import rate_headers
from herald_gateway.idempotency import Idempotency, check_idempotency_key, request_hash
from herald_gateway.rate_limit import RateLimiter, RateLimiterUnavailable

Context = grpc.aio.ServicerContext[Any, Any]


def _authorization(context: Context) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value
    return None


async def _abort(context: Context, error: GatewayError) -> NoReturn:
    if isinstance(error, QuotaExceeded | RateLimited):
        await abort_resource_exhausted(context, error.detail, getattr(error, "retry_after_s", 0))
    if isinstance(error, IdempotencyConflict):
        await abort_aborted(context, error.detail)
    if isinstance(error, IdempotencyMismatch):
        await abort_failed_precondition(context, error.detail)
    if isinstance(error, Invalid):
        await abort_invalid(context, error.violations)
    if isinstance(error, SenderDomainUnverified | NotRetryable | ProviderRefused | InvalidCredential | TargetDisabled):
        await abort_failed_precondition(context, error.detail)
    if isinstance(error, NotFound):
        await abort_not_found(context, error.detail.removesuffix(" not found"))
    if isinstance(error, Unauthenticated):
        await abort_unauthenticated(context, error.detail)
    if isinstance(error, Conflict):
        await abort_already_exists(context, error.detail)
    await abort_unavailable(context, error.detail)


class NotificationServicer(SubscriptionGrpc, BatchGrpc, gateway_pb2_grpc.NotificationServiceServicer):
    def __init__(
        self, handlers: Handlers, tenants: ApiKeyAuthenticator, limiter: RateLimiter, idempotency: Idempotency
    ) -> None:
        self.handlers = handlers
        self.tenants = tenants
        self.limiter = limiter
        self.idempotency = idempotency

    async def _spend_rate(self, context: Context, principal: Principal) -> None:
        """The same per-tenant limit as HTTP; the state travels in trailing metadata."""
        if principal.rate_per_min is None:
            return
        try:
            state = await self.limiter.consume(principal.tenant_id, principal.rate_per_min)
        except RateLimiterUnavailable:
            await abort_unavailable(context, "the rate limiter is unavailable; retry shortly")
        context.set_trailing_metadata(tuple((k.lower(), v) for k, v in rate_headers(state).items()))
        if not state.allowed:
            await abort_resource_exhausted(
                context, f"rate limit of {state.limit} requests per minute reached", state.retry_after_s
            )

    async def _fail(self, context: Context, error: GatewayError) -> NoReturn:
        await _abort(context, error)

    async def _principal(self, context: Context) -> Principal:
        try:
            return await self.tenants.authenticate(_authorization(context))
        except GatewayError as error:
            await _abort(context, error)

    async def SendWebhook(
        self, request: gateway_pb2.SendWebhookRequest, context: Context
    ) -> gateway_pb2.SendWebhookResponse:
        """An idempotency key is written with the job (see herald_gateway.idempotency): a
        repeat answers with the first job."""
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        try:
            item = WebhookInput(
                url=request.url,
                body=request.body,
                content_type=request.content_type or "application/json",
                headers=dict(request.headers),
                priority=request.priority,
                idempotency_key=request.idempotency_key,
                ordering_key=request.ordering_key,
                request_hash=self._digest("SendWebhook", request),
            )
            sent = await self.handlers.send_webhook(principal, item)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.SendWebhookResponse(id=sent.job.id, status=sent.job.status)

    async def SendEmail(self, request: gateway_pb2.SendEmailRequest, context: Context) -> gateway_pb2.SendEmailResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        email = common_pb2.EmailRequest()
        email.CopyFrom(request.email)
        try:
            sent = await self.handlers.send_email(
                principal,
                email,
                request.priority,
                request.idempotency_key,
                request.ordering_key,
                self._digest("SendEmail", request),
            )
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.SendEmailResponse(id=sent.job.id, status=sent.job.status)

    @staticmethod
    def _digest(method: str, request: gateway_pb2.SendWebhookRequest | gateway_pb2.SendEmailRequest) -> bytes:
        if not request.idempotency_key:
            return b""
        check_idempotency_key(request.idempotency_key)
        return request_hash("grpc", method, request.SerializeToString(deterministic=True))

    async def RetryJob(self, request: gateway_pb2.RetryJobRequest, context: Context) -> gateway_pb2.RetryJobResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        try:
            outcome = await self.handlers.retry_job(principal, request.id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.RetryJobResponse(id=outcome.job_id, status=outcome.status)

    async def GetJob(
        self, request: gateway_pb2.NotificationServiceGetJobRequest, context: Context
    ) -> gateway_pb2.NotificationServiceGetJobResponse:
        principal = await self._principal(context)
        try:
            job, attempts = await self.handlers.get_job(principal, request.id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.NotificationServiceGetJobResponse(job=job, attempts=attempts)

    async def ListJobs(
        self, request: gateway_pb2.NotificationServiceListJobsRequest, context: Context
    ) -> gateway_pb2.NotificationServiceListJobsResponse:
        principal = await self._principal(context)
        query = ledger_pb2.ListJobsRequest(
            page_size=request.page_size or 50,
            cursor=request.cursor,
            status=request.status,
            channel=request.channel,
        )
        if request.HasField("created_after"):
            query.created_after.CopyFrom(request.created_after)
        if request.HasField("created_before"):
            query.created_before.CopyFrom(request.created_before)
        try:
            page = await self.handlers.list_jobs(principal, query)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.NotificationServiceListJobsResponse(jobs=page.jobs, next_cursor=page.next_cursor)

    # ---- sending domains (the twin of /v1/domains) ------------------------

    async def CreateDomain(
        self, request: gateway_pb2.NotificationServiceCreateDomainRequest, context: Context
    ) -> gateway_pb2.NotificationServiceCreateDomainResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        try:
            domain = await self.handlers.register_domain(principal.tenant_id, request.domain, request.provider_id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.NotificationServiceCreateDomainResponse(domain=domain)

    async def VerifyDomain(
        self, request: gateway_pb2.NotificationServiceVerifyDomainRequest, context: Context
    ) -> gateway_pb2.NotificationServiceVerifyDomainResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        try:
            domain = await self.handlers.verify_domain(principal.tenant_id, request.id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.NotificationServiceVerifyDomainResponse(domain=domain)

    async def GetDomain(
        self, request: gateway_pb2.NotificationServiceGetDomainRequest, context: Context
    ) -> gateway_pb2.NotificationServiceGetDomainResponse:
        principal = await self._principal(context)
        try:
            domain = await self.handlers.get_domain(principal.tenant_id, request.id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.NotificationServiceGetDomainResponse(domain=domain)

    async def ListDomains(
        self, request: gateway_pb2.NotificationServiceListDomainsRequest, context: Context
    ) -> gateway_pb2.NotificationServiceListDomainsResponse:
        principal = await self._principal(context)
        try:
            domains = await self.handlers.list_domains(principal.tenant_id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.NotificationServiceListDomainsResponse(domains=domains)


class AdminServicer(gateway_pb2_grpc.AdminServiceServicer):
    def __init__(self, handlers: Handlers, operators: OperatorAuthenticator) -> None:
        self.handlers = handlers
        self.operators = operators

    async def CreateTenant(
        self, request: gateway_pb2.AdminServiceCreateTenantRequest, context: Context
    ) -> gateway_pb2.AdminServiceCreateTenantResponse:
        try:
            self.operators.authenticate(_authorization(context))
            if request.plan == common_pb2.PLAN_UNSPECIFIED or not request.name.strip():
                raise Invalid([("name/plan", "a name and a plan are required")])
            tenant, api_key = await self.handlers.create_tenant(request.name, request.plan, request.contact_email)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceCreateTenantResponse(tenant=tenant, api_key=api_key)

    async def _operator(self, context: Context) -> None:
        try:
            self.operators.authenticate(_authorization(context))
        except GatewayError as error:
            await _abort(context, error)

    async def ListTenants(
        self, request: gateway_pb2.AdminServiceListTenantsRequest, context: Context
    ) -> gateway_pb2.AdminServiceListTenantsResponse:
        await self._operator(context)
        try:
            tenants, cursor = await self.handlers.list_tenants(request.page_size or 50, request.cursor)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceListTenantsResponse(tenants=tenants, next_cursor=cursor)

    async def GetTenant(
        self, request: gateway_pb2.AdminServiceGetTenantRequest, context: Context
    ) -> gateway_pb2.AdminServiceGetTenantResponse:
        await self._operator(context)
        try:
            tenant = await self.handlers.get_tenant(request.tenant_id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceGetTenantResponse(tenant=tenant)

    async def UpdateTenant(
        self, request: gateway_pb2.AdminServiceUpdateTenantRequest, context: Context
    ) -> gateway_pb2.AdminServiceUpdateTenantResponse:
        await self._operator(context)
        disabled = request.disabled if request.HasField("disabled") else None
        contact = request.contact_email if request.HasField("contact_email") else None
        try:
            tenant = await self.handlers.update_tenant(request.tenant_id, request.plan, disabled, contact)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceUpdateTenantResponse(tenant=tenant)

    async def CreateApiKey(
        self, request: gateway_pb2.AdminServiceCreateApiKeyRequest, context: Context
    ) -> gateway_pb2.AdminServiceCreateApiKeyResponse:
        await self._operator(context)
        try:
            await self.handlers.get_tenant(request.tenant_id)
            key, plaintext = await self.handlers.create_api_key(request.tenant_id, request.name or "default")
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceCreateApiKeyResponse(key=key, api_key=plaintext)

    async def ListApiKeys(
        self, request: gateway_pb2.AdminServiceListApiKeysRequest, context: Context
    ) -> gateway_pb2.AdminServiceListApiKeysResponse:
        await self._operator(context)
        try:
            await self.handlers.get_tenant(request.tenant_id)
            keys = await self.handlers.list_api_keys(request.tenant_id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceListApiKeysResponse(keys=keys)

    async def RevokeApiKey(
        self, request: gateway_pb2.AdminServiceRevokeApiKeyRequest, context: Context
    ) -> gateway_pb2.AdminServiceRevokeApiKeyResponse:
        await self._operator(context)
        try:
            await self.handlers.get_tenant(request.tenant_id)
            key = await self.handlers.revoke_api_key(request.tenant_id, request.key_id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceRevokeApiKeyResponse(key=key)

    async def RotateMasterKey(
        self, request: gateway_pb2.RotateMasterKeyRequest, context: Context
    ) -> gateway_pb2.RotateMasterKeyResponse:
        await self._operator(context)
        try:
            result = await self.handlers.rotate_master_key()
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.RotateMasterKeyResponse(
            reencrypted=result.reencrypted,
            already_current=result.already_current,
            active_key_id=result.active_key_id,
            unreadable_ids=result.unreadable_ids,
        )

    async def SetTenantLimits(
        self, request: gateway_pb2.AdminServiceSetTenantLimitsRequest, context: Context
    ) -> gateway_pb2.AdminServiceSetTenantLimitsResponse:
        await self._operator(context)
        forward = ledger_pb2.SetTenantLimitsRequest()
        for field in ("rate_per_min", "webhooks_per_month", "emails_per_month"):
            if request.HasField(field):
                setattr(forward, field, getattr(request, field))
        try:
            tenant = await self.handlers.set_limits(request.tenant_id, forward)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceSetTenantLimitsResponse(tenant=tenant)

    async def GetTenantUsage(
        self, request: gateway_pb2.GetTenantUsageRequest, context: Context
    ) -> gateway_pb2.GetTenantUsageResponse:
        await self._operator(context)
        try:
            await self.handlers.get_tenant(request.tenant_id)
            usage = await self.handlers.usage(request.tenant_id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.GetTenantUsageResponse(usage=usage)

    async def ListDeadLetters(
        self, request: gateway_pb2.AdminServiceListDeadLettersRequest, context: Context
    ) -> gateway_pb2.AdminServiceListDeadLettersResponse:
        await self._operator(context)
        since = request.since.ToDatetime(tzinfo=UTC) if request.HasField("since") else None
        try:
            entries, cursor = await self.handlers.list_dead_letters(
                request.tenant_id, since, request.include_retried, request.page_size or 50, request.cursor
            )
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceListDeadLettersResponse(entries=entries, next_cursor=cursor)

    async def GetDeadLetter(
        self, request: gateway_pb2.AdminServiceGetDeadLetterRequest, context: Context
    ) -> gateway_pb2.AdminServiceGetDeadLetterResponse:
        await self._operator(context)
        try:
            entry, job = await self.handlers.get_dead_letter(request.job_id)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceGetDeadLetterResponse(entry=entry, job=job)

    async def RetryDeadLetters(
        self, request: gateway_pb2.RetryDeadLettersRequest, context: Context
    ) -> gateway_pb2.RetryDeadLettersResponse:
        await self._operator(context)
        since = request.since.ToDatetime(tzinfo=UTC) if request.HasField("since") else None
        try:
            outcomes = await self.handlers.retry_dead_letters(list(request.job_ids), request.all, since)
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.RetryDeadLettersResponse(outcomes=outcomes)

    async def ListPlatformEmails(
        self, request: gateway_pb2.AdminServiceListPlatformEmailsRequest, context: Context
    ) -> gateway_pb2.AdminServiceListPlatformEmailsResponse:
        await self._operator(context)
        try:
            entries, cursor = await self.handlers.list_platform_emails(
                request.tenant_id, request.kind, request.page_size or 50, request.cursor
            )
        except GatewayError as error:
            await _abort(context, error)
        return gateway_pb2.AdminServiceListPlatformEmailsResponse(entries=entries, next_cursor=cursor)
