"""AdminService over gRPC: the operator's calls, over the same operations as /v1/admin."""

from __future__ import annotations

from datetime import UTC

from herald.grpcio.context import Context
from herald.ids import TenantId
from herald.plans import TENANT_OVERRIDES
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, ledger_tenants_pb2
from herald_gateway.audit import CURRENT_ACTOR, entry_by
from herald_gateway.auth import OperatorAuthenticator
from herald_gateway.errors import Invalid
from herald_gateway.grpc.errors import answers_errors
from herald_gateway.grpc.metadata import authorization
from herald_gateway.grpc.unary import operator_rpc
from herald_gateway.operations import Operations


@answers_errors("AdminService")
class AdminServicer(gateway_pb2_grpc.AdminServiceServicer):
    def __init__(self, operations: Operations, operators: OperatorAuthenticator) -> None:
        self.operations = operations
        self.operators = operators

    async def CreateTenant(
        self, request: gateway_pb2.AdminServiceCreateTenantRequest, context: Context
    ) -> gateway_pb2.AdminServiceCreateTenantResponse:
        await self._operator(context)
        if request.plan == common_pb2.PLAN_UNSPECIFIED or not request.name.strip():
            raise Invalid([("name/plan", "a name and a plan are required")])
        tenant, api_key = await self.operations.create_tenant(
            request.name, request.plan, request.contact_email, request.allow_duplicate_name
        )
        return gateway_pb2.AdminServiceCreateTenantResponse(tenant=tenant, api_key=api_key)

    async def _operator(self, context: Context) -> None:
        CURRENT_ACTOR.set(await self.operators.authenticate(authorization(context)))

    # The RPCs that are one operation (`operator_rpc`); the others check or convert first.

    GetTenant = operator_rpc(
        lambda operations, request: operations.get_tenant(request.tenant_id),
        gateway_pb2.AdminServiceGetTenantResponse,
        "tenant",
    )

    ListApiKeys = operator_rpc(
        lambda operations, request: operations.list_api_keys(TenantId(request.tenant_id)),
        gateway_pb2.AdminServiceListApiKeysResponse,
        "keys",
        of_tenant=True,
    )

    RevokeApiKey = operator_rpc(
        lambda operations, request: operations.revoke_api_key(TenantId(request.tenant_id), request.key_id),
        gateway_pb2.AdminServiceRevokeApiKeyResponse,
        "key",
        of_tenant=True,
    )

    GetTenantUsage = operator_rpc(
        lambda operations, request: operations.usage(request.tenant_id),
        gateway_pb2.GetTenantUsageResponse,
        "usage",
        of_tenant=True,
    )

    async def ListTenants(
        self, request: gateway_pb2.AdminServiceListTenantsRequest, context: Context
    ) -> gateway_pb2.AdminServiceListTenantsResponse:
        await self._operator(context)
        tenants, cursor = await self.operations.list_tenants(request.page_size or 50, request.cursor)
        return gateway_pb2.AdminServiceListTenantsResponse(tenants=tenants, next_cursor=cursor)

    async def UpdateTenant(
        self, request: gateway_pb2.AdminServiceUpdateTenantRequest, context: Context
    ) -> gateway_pb2.AdminServiceUpdateTenantResponse:
        await self._operator(context)
        disabled = request.disabled if request.HasField("disabled") else None
        contact = request.contact_email if request.HasField("contact_email") else None
        tenant = await self.operations.update_tenant(request.tenant_id, request.plan, disabled, contact)
        return gateway_pb2.AdminServiceUpdateTenantResponse(tenant=tenant)

    async def CreateApiKey(
        self, request: gateway_pb2.AdminServiceCreateApiKeyRequest, context: Context
    ) -> gateway_pb2.AdminServiceCreateApiKeyResponse:
        await self._operator(context)
        await self.operations.get_tenant(request.tenant_id)
        key, plaintext = await self.operations.create_api_key(
            request.tenant_id, request.name or "default", request.scopes
        )
        return gateway_pb2.AdminServiceCreateApiKeyResponse(key=key, api_key=plaintext)

    async def EraseTenant(
        self, request: gateway_pb2.AdminServiceEraseTenantRequest, context: Context
    ) -> gateway_pb2.AdminServiceEraseTenantResponse:
        await self._operator(context)
        operator = CURRENT_ACTOR.get()
        assert operator is not None
        erased_by = entry_by(operator, "grpc AdminService/EraseTenant", context.peer() or "")
        return gateway_pb2.AdminServiceEraseTenantResponse(
            receipt=await self.operations.erase_tenant(request.tenant_id, erased_by)
        )

    async def RotateMasterKey(
        self, request: gateway_pb2.RotateMasterKeyRequest, context: Context
    ) -> gateway_pb2.RotateMasterKeyResponse:
        await self._operator(context)
        result = await self.operations.rotate_master_key()
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
        forward = ledger_tenants_pb2.SetTenantLimitsRequest()
        for field in TENANT_OVERRIDES:
            if request.HasField(field):
                setattr(forward, field, getattr(request, field))
        tenant = await self.operations.set_limits(request.tenant_id, forward)
        return gateway_pb2.AdminServiceSetTenantLimitsResponse(tenant=tenant)

    async def ListDeadLetters(
        self, request: gateway_pb2.AdminServiceListDeadLettersRequest, context: Context
    ) -> gateway_pb2.AdminServiceListDeadLettersResponse:
        await self._operator(context)
        since = request.since.ToDatetime(tzinfo=UTC) if request.HasField("since") else None
        entries, cursor = await self.operations.list_dead_letters(
            request.tenant_id, since, request.include_retried, request.page_size or 50, request.cursor
        )
        return gateway_pb2.AdminServiceListDeadLettersResponse(entries=entries, next_cursor=cursor)

    async def GetDeadLetter(
        self, request: gateway_pb2.AdminServiceGetDeadLetterRequest, context: Context
    ) -> gateway_pb2.AdminServiceGetDeadLetterResponse:
        await self._operator(context)
        entry, job = await self.operations.get_dead_letter(request.job_id)
        return gateway_pb2.AdminServiceGetDeadLetterResponse(entry=entry, job=job)

    async def RetryDeadLetters(
        self, request: gateway_pb2.RetryDeadLettersRequest, context: Context
    ) -> gateway_pb2.RetryDeadLettersResponse:
        await self._operator(context)
        since = request.since.ToDatetime(tzinfo=UTC) if request.HasField("since") else None
        outcomes = await self.operations.retry_dead_letters(list(request.job_ids), request.all, since)
        return gateway_pb2.RetryDeadLettersResponse(outcomes=outcomes)

    async def ListPlatformEmails(
        self, request: gateway_pb2.AdminServiceListPlatformEmailsRequest, context: Context
    ) -> gateway_pb2.AdminServiceListPlatformEmailsResponse:
        await self._operator(context)
        entries, cursor = await self.operations.list_platform_emails(
            request.tenant_id, request.kind, request.page_size or 50, request.cursor
        )
        return gateway_pb2.AdminServiceListPlatformEmailsResponse(entries=entries, next_cursor=cursor)

    # ---- the audit log and named operators ------------------------------

    async def ListAuditLog(
        self, request: gateway_pb2.AdminServiceListAuditLogRequest, context: Context
    ) -> gateway_pb2.AdminServiceListAuditLogResponse:
        await self._operator(context)
        entries, cursor = await self.operations.auditor.page(request.tenant_id, request.page_size or 50, request.cursor)
        return gateway_pb2.AdminServiceListAuditLogResponse(entries=entries, next_cursor=cursor)

    async def CreateOperator(
        self, request: gateway_pb2.AdminServiceCreateOperatorRequest, context: Context
    ) -> gateway_pb2.AdminServiceCreateOperatorResponse:
        await self._operator(context)
        operator, token = await self.operations.create_operator(request.name)
        return gateway_pb2.AdminServiceCreateOperatorResponse(operator=operator, token=token)

    ListOperators = operator_rpc(
        lambda operations, _request: operations.list_operators(),
        gateway_pb2.AdminServiceListOperatorsResponse,
        "operators",
    )

    RevokeOperator = operator_rpc(
        lambda operations, request: operations.revoke_operator(request.name),
        gateway_pb2.AdminServiceRevokeOperatorResponse,
        "operator",
    )
