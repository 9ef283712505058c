"""NotificationService over gRPC: the twin of the tenant HTTP routes, over the same operations.
Submits, jobs and domains here; events and subscriptions in `grpc.subscriptions`, the event
log, replay and resend in `grpc.events`, the streamed batches in `grpc.batch`."""

from __future__ import annotations

from herald.grpcio.context import Context
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, ledger_jobs_pb2
from herald_gateway.access import rate_headers, refuse_spent, spend
from herald_gateway.audit import CURRENT_ACTOR, Actor
from herald_gateway.auth import ApiKeyAuthenticator, Principal
from herald_gateway.grpc.batch import BatchGrpc
from herald_gateway.grpc.errors import answers_errors
from herald_gateway.grpc.events import EventGrpc
from herald_gateway.grpc.metadata import CURRENT_RPC, authorization
from herald_gateway.grpc.subscriptions import SubscriptionGrpc
from herald_gateway.grpc.unary import tenant_rpc
from herald_gateway.idempotency import check_idempotency_key, request_hash
from herald_gateway.operations import Operations
from herald_gateway.operations.submit import WebhookInput
from herald_gateway.rate_limit import RateLimiter
from herald_gateway.scopes import require_rpc_scope


@answers_errors("NotificationService")
class NotificationServicer(SubscriptionGrpc, EventGrpc, BatchGrpc, gateway_pb2_grpc.NotificationServiceServicer):
    """Every RPC authenticates (`_principal`); those that create work spend the rate limit too
    (`_spend_rate`), as the HTTP routes that depend on `Counted` do. A GatewayError raised in
    any of them ends the call with its status (`answers_errors`)."""

    def __init__(self, operations: Operations, tenants: ApiKeyAuthenticator, limiter: RateLimiter) -> None:
        # No Idempotency here: a gRPC submit's key is written with its job (`_digest`), not held in front of it.
        self.operations = operations
        self.tenants = tenants
        self.limiter = limiter

    async def _spend_rate(self, context: Context, principal: Principal) -> None:
        """The same per-tenant limit as HTTP (`herald_gateway.access`); the state travels in trailing metadata."""
        state = await spend(self.limiter, principal)
        if state is not None:
            context.set_trailing_metadata(tuple((k.lower(), v) for k, v in rate_headers(state).items()))
            refuse_spent(state)

    async def _principal(self, context: Context) -> Principal:
        """The calling key, which must have the scope this RPC needs (herald_gateway.scopes)."""
        principal = await self.tenants.authenticate(authorization(context))
        require_rpc_scope(CURRENT_RPC.get(), principal.scopes)
        CURRENT_ACTOR.set(Actor("key", principal.key_id, principal.key_name, principal.tenant_id))
        return principal

    async def SendWebhook(
        self, request: gateway_pb2.SendWebhookRequest, context: Context
    ) -> gateway_pb2.SendWebhookResponse:
        """An idempotency key is written with the job (see herald_gateway.idempotency): a
        repeat answers with the first job."""
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        item = WebhookInput.of_grpc(request, self._digest("SendWebhook", request))
        sent = await self.operations.send_webhook(principal, item)
        return gateway_pb2.SendWebhookResponse(id=sent.job.id, status=sent.job.status)

    async def SendEmail(self, request: gateway_pb2.SendEmailRequest, context: Context) -> gateway_pb2.SendEmailResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        email = common_pb2.EmailRequest()
        email.CopyFrom(request.email)
        sent = await self.operations.send_email(
            principal,
            email,
            request.priority,
            request.idempotency_key,
            request.ordering_key,
            self._digest("SendEmail", request),
        )
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
        outcome = await self.operations.retry_job(principal, request.id)
        return gateway_pb2.RetryJobResponse(id=outcome.job_id, status=outcome.status)

    async def GetJob(
        self, request: gateway_pb2.NotificationServiceGetJobRequest, context: Context
    ) -> gateway_pb2.NotificationServiceGetJobResponse:
        principal = await self._principal(context)
        job, attempts = await self.operations.get_job(principal, request.id)
        return gateway_pb2.NotificationServiceGetJobResponse(job=job, attempts=attempts)

    async def ListJobs(
        self, request: gateway_pb2.NotificationServiceListJobsRequest, context: Context
    ) -> gateway_pb2.NotificationServiceListJobsResponse:
        principal = await self._principal(context)
        query = ledger_jobs_pb2.ListJobsRequest(
            page_size=request.page_size or 50,
            cursor=request.cursor,
            status=request.status,
            channel=request.channel,
            event_id=request.event_id,
            target_id=request.target_id,
        )
        if request.HasField("created_after"):
            query.created_after.CopyFrom(request.created_after)
        if request.HasField("created_before"):
            query.created_before.CopyFrom(request.created_before)
        page = await self.operations.list_jobs(principal, query)
        return gateway_pb2.NotificationServiceListJobsResponse(jobs=page.jobs, next_cursor=page.next_cursor)

    # ---- sending domains (the twin of /v1/domains) ------------------------

    CreateDomain = tenant_rpc(
        lambda operations, tenant_id, request: operations.register_domain(
            tenant_id, request.domain, request.provider_id
        ),
        gateway_pb2.NotificationServiceCreateDomainResponse,
        "domain",
        spends=True,
    )
    VerifyDomain = tenant_rpc(
        lambda operations, tenant_id, request: operations.verify_domain(tenant_id, request.id),
        gateway_pb2.NotificationServiceVerifyDomainResponse,
        "domain",
        spends=True,
    )
    GetDomain = tenant_rpc(
        lambda operations, tenant_id, request: operations.get_domain(tenant_id, request.id),
        gateway_pb2.NotificationServiceGetDomainResponse,
        "domain",
    )
    ListDomains = tenant_rpc(
        lambda operations, tenant_id, _request: operations.list_domains(tenant_id),
        gateway_pb2.NotificationServiceListDomainsResponse,
        "domains",
    )
