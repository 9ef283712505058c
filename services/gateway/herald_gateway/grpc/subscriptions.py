"""NotificationService's event and subscription methods: the gRPC twins of POST /v1/events
and /v1/webhooks/{targets,filters,subscriptions,retry-schedule}, over the same operations."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING

from herald.grpcio.context import Context
from herald.v1 import gateway_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import Invalid
from herald_gateway.grpc.crud import crud_rpcs
from herald_gateway.grpc.events import event_of
from herald_gateway.grpc.unary import tenant_rpc
from herald_gateway.operations import Operations
from herald_gateway.operations.subscriptions import FILTERS, SUBSCRIPTIONS, TARGETS

_TARGETS, _FILTERS, _SUBSCRIPTIONS = crud_rpcs(TARGETS), crud_rpcs(FILTERS), crud_rpcs(SUBSCRIPTIONS)


class SubscriptionGrpc:
    """Mixed into NotificationServicer, which provides authentication and the rate limit.
    The CRUD of targets, filters and subscriptions is `crud_rpcs`', named here one by one."""

    operations: Operations

    CreateWebhookTarget = _TARGETS["CreateWebhookTarget"]
    GetWebhookTarget = _TARGETS["GetWebhookTarget"]
    ListWebhookTargets = _TARGETS["ListWebhookTargets"]
    UpdateWebhookTarget = _TARGETS["UpdateWebhookTarget"]
    DeleteWebhookTarget = _TARGETS["DeleteWebhookTarget"]
    CreateEventFilter = _FILTERS["CreateEventFilter"]
    GetEventFilter = _FILTERS["GetEventFilter"]
    ListEventFilters = _FILTERS["ListEventFilters"]
    UpdateEventFilter = _FILTERS["UpdateEventFilter"]
    DeleteEventFilter = _FILTERS["DeleteEventFilter"]
    CreateSubscription = _SUBSCRIPTIONS["CreateSubscription"]
    GetSubscription = _SUBSCRIPTIONS["GetSubscription"]
    ListSubscriptions = _SUBSCRIPTIONS["ListSubscriptions"]
    UpdateSubscription = _SUBSCRIPTIONS["UpdateSubscription"]
    DeleteSubscription = _SUBSCRIPTIONS["DeleteSubscription"]

    if TYPE_CHECKING:  # provided by NotificationServicer; declared here for the type checker only

        async def _principal(self, context: Context) -> Principal: ...

        async def _spend_rate(self, context: Context, principal: Principal) -> None: ...

    async def PublishEvent(
        self, request: gateway_pb2.NotificationServicePublishEventRequest, context: Context
    ) -> gateway_pb2.NotificationServicePublishEventResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        accepted = await self.operations.publish_event(principal, event_of(request))
        return gateway_pb2.NotificationServicePublishEventResponse(
            event_id=accepted.event_id, replayed=accepted.replayed, deliveries=accepted.deliveries
        )

    async def RecoverWebhookTarget(
        self, request: gateway_pb2.RecoverWebhookTargetRequest, context: Context
    ) -> gateway_pb2.RecoverWebhookTargetResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        if not request.HasField("since"):
            raise Invalid([("since", "is required")])
        until = request.until.ToDatetime(tzinfo=UTC) if request.HasField("until") else None
        job_ids = await self.operations.recover_target(
            principal.tenant_id, request.target_id, request.since.ToDatetime(tzinfo=UTC), until
        )
        return gateway_pb2.RecoverWebhookTargetResponse(job_ids=job_ids)

    # A target's signing secret

    async def GetWebhookTargetSecret(
        self, request: gateway_pb2.GetWebhookTargetSecretRequest, context: Context
    ) -> gateway_pb2.GetWebhookTargetSecretResponse:
        principal = await self._principal(context)
        found = await self.operations.target_secret(principal.tenant_id, request.target_id)
        return gateway_pb2.GetWebhookTargetSecretResponse(key=found.key, public_key=found.public_key)

    async def RotateWebhookTargetSecret(
        self, request: gateway_pb2.RotateWebhookTargetSecretRequest, context: Context
    ) -> gateway_pb2.RotateWebhookTargetSecretResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        key = await self.operations.rotate_target_secret(
            principal.tenant_id,
            request.target_id,
            request.key if request.HasField("key") else None,
            request.overlap_s if request.HasField("overlap_s") else None,
            request.algorithm,
        )
        return gateway_pb2.RotateWebhookTargetSecretResponse(key=key)

    async def TestWebhookTarget(
        self, request: gateway_pb2.TestWebhookTargetRequest, context: Context
    ) -> gateway_pb2.TestWebhookTargetResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        return gateway_pb2.TestWebhookTargetResponse(
            ping=await self.operations.ping_target(principal.tenant_id, request.target_id)
        )

    # Retry schedule

    GetWebhookRetrySchedule = tenant_rpc(
        lambda operations, tenant_id, _request: operations.retry_schedule(tenant_id),
        gateway_pb2.GetWebhookRetryScheduleResponse,
        "schedule",
    )
    SetWebhookRetrySchedule = tenant_rpc(
        lambda operations, tenant_id, request: operations.set_retry_schedule(
            tenant_id, list(request.delays_s), list(request.retry_statuses)
        ),
        gateway_pb2.SetWebhookRetryScheduleResponse,
        "schedule",
    )
