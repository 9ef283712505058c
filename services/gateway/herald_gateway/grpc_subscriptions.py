"""NotificationService's event and subscription methods: the gRPC twins of POST /v1/events
and /v1/webhooks/{targets,filters,subscriptions}, over the same `Subscriptions` calls."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Any, NoReturn

import grpc

from herald.v1 import common_pb2, gateway_pb2, ledger_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import GatewayError, Invalid
from herald_gateway.handlers import Handlers
from herald_gateway.subscriptions import EventInput, Subscriptions

Context = grpc.aio.ServicerContext[Any, Any]


class SubscriptionGrpc:
    """Mixed into NotificationServicer, which provides authentication, the rate limit and
    the translation of gateway errors into statuses."""

    handlers: Handlers
    _subscriptions: Subscriptions | None = None

    if TYPE_CHECKING:  # provided by NotificationServicer; declared here for the type checker only

        async def _principal(self, context: Context) -> Principal: ...

        async def _spend_rate(self, context: Context, principal: Principal) -> None: ...

        async def _fail(self, context: Context, error: GatewayError) -> NoReturn: ...

    @property
    def subscriptions(self) -> Subscriptions:
        if self._subscriptions is None:
            self._subscriptions = Subscriptions(self.handlers.ledger, self.handlers.router, self.handlers.target_check)
        return self._subscriptions

    async def PublishEvent(
        self, request: gateway_pb2.NotificationServicePublishEventRequest, context: Context
    ) -> gateway_pb2.NotificationServicePublishEventResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        event = EventInput(
            event_type=request.event_type,
            payload=request.payload,
            content_type=request.content_type or "application/json",
            event_id=request.event_id,
        )
        try:
            accepted = await self.subscriptions.publish_event(principal, event)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServicePublishEventResponse(
            event_id=accepted.event_id, replayed=accepted.replayed, deliveries=accepted.deliveries
        )

    # Targets

    async def CreateWebhookTarget(
        self, request: gateway_pb2.NotificationServiceCreateWebhookTargetRequest, context: Context
    ) -> gateway_pb2.NotificationServiceCreateWebhookTargetResponse:
        principal = await self._principal(context)
        target = common_pb2.WebhookTarget()
        target.CopyFrom(request.target)
        try:
            created = await self.subscriptions.create_target(principal.tenant_id, target)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceCreateWebhookTargetResponse(target=created)

    async def GetWebhookTarget(
        self, request: gateway_pb2.NotificationServiceGetWebhookTargetRequest, context: Context
    ) -> gateway_pb2.NotificationServiceGetWebhookTargetResponse:
        principal = await self._principal(context)
        try:
            found = await self.subscriptions.get_target(principal.tenant_id, request.target_id)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceGetWebhookTargetResponse(target=found)

    async def ListWebhookTargets(
        self, request: gateway_pb2.NotificationServiceListWebhookTargetsRequest, context: Context
    ) -> gateway_pb2.NotificationServiceListWebhookTargetsResponse:
        principal = await self._principal(context)
        try:
            found, cursor = await self.subscriptions.list_targets(
                principal.tenant_id, request.page_size or 50, request.cursor
            )
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceListWebhookTargetsResponse(targets=found, next_cursor=cursor)

    async def UpdateWebhookTarget(
        self, request: gateway_pb2.NotificationServiceUpdateWebhookTargetRequest, context: Context
    ) -> gateway_pb2.NotificationServiceUpdateWebhookTargetResponse:
        principal = await self._principal(context)
        update = ledger_pb2.UpdateWebhookTargetRequest(
            target_id=request.target_id, replace_headers=request.replace_headers, headers=request.headers
        )
        for name in ("url", "description", "rate_limit_per_min", "enabled", "disabled_reason"):
            if request.HasField(name):
                setattr(update, name, getattr(request, name))
        try:
            updated = await self.subscriptions.update_target(principal.tenant_id, update)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceUpdateWebhookTargetResponse(target=updated)

    async def DeleteWebhookTarget(
        self, request: gateway_pb2.NotificationServiceDeleteWebhookTargetRequest, context: Context
    ) -> gateway_pb2.NotificationServiceDeleteWebhookTargetResponse:
        principal = await self._principal(context)
        try:
            await self.subscriptions.delete_target(principal.tenant_id, request.target_id)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceDeleteWebhookTargetResponse()

    # Filters

    async def CreateEventFilter(
        self, request: gateway_pb2.NotificationServiceCreateEventFilterRequest, context: Context
    ) -> gateway_pb2.NotificationServiceCreateEventFilterResponse:
        principal = await self._principal(context)
        event_filter = common_pb2.EventFilter()
        event_filter.CopyFrom(request.filter)
        try:
            created = await self.subscriptions.create_filter(principal.tenant_id, event_filter)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceCreateEventFilterResponse(filter=created)

    async def GetEventFilter(
        self, request: gateway_pb2.NotificationServiceGetEventFilterRequest, context: Context
    ) -> gateway_pb2.NotificationServiceGetEventFilterResponse:
        principal = await self._principal(context)
        try:
            found = await self.subscriptions.get_filter(principal.tenant_id, request.filter_id)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceGetEventFilterResponse(filter=found)

    async def ListEventFilters(
        self, request: gateway_pb2.NotificationServiceListEventFiltersRequest, context: Context
    ) -> gateway_pb2.NotificationServiceListEventFiltersResponse:
        principal = await self._principal(context)
        try:
            found, cursor = await self.subscriptions.list_filters(
                principal.tenant_id, request.page_size or 50, request.cursor
            )
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceListEventFiltersResponse(filters=found, next_cursor=cursor)

    async def UpdateEventFilter(
        self, request: gateway_pb2.NotificationServiceUpdateEventFilterRequest, context: Context
    ) -> gateway_pb2.NotificationServiceUpdateEventFilterResponse:
        principal = await self._principal(context)
        update = ledger_pb2.UpdateEventFilterRequest(
            filter_id=request.filter_id,
            replace_event_types=request.replace_event_types,
            event_types=request.event_types,
        )
        if request.HasField("description"):
            update.description = request.description
        try:
            updated = await self.subscriptions.update_filter(principal.tenant_id, update)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceUpdateEventFilterResponse(filter=updated)

    async def DeleteEventFilter(
        self, request: gateway_pb2.NotificationServiceDeleteEventFilterRequest, context: Context
    ) -> gateway_pb2.NotificationServiceDeleteEventFilterResponse:
        principal = await self._principal(context)
        try:
            await self.subscriptions.delete_filter(principal.tenant_id, request.filter_id)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceDeleteEventFilterResponse()

    # Subscriptions

    async def CreateSubscription(
        self, request: gateway_pb2.NotificationServiceCreateSubscriptionRequest, context: Context
    ) -> gateway_pb2.NotificationServiceCreateSubscriptionResponse:
        principal = await self._principal(context)
        subscription = common_pb2.Subscription()
        subscription.CopyFrom(request.subscription)
        try:
            created = await self.subscriptions.create_subscription(principal.tenant_id, subscription)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceCreateSubscriptionResponse(subscription=created)

    async def GetSubscription(
        self, request: gateway_pb2.NotificationServiceGetSubscriptionRequest, context: Context
    ) -> gateway_pb2.NotificationServiceGetSubscriptionResponse:
        principal = await self._principal(context)
        try:
            found = await self.subscriptions.get_subscription(principal.tenant_id, request.subscription_id)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceGetSubscriptionResponse(subscription=found)

    async def ListSubscriptions(
        self, request: gateway_pb2.NotificationServiceListSubscriptionsRequest, context: Context
    ) -> gateway_pb2.NotificationServiceListSubscriptionsResponse:
        principal = await self._principal(context)
        try:
            found, cursor = await self.subscriptions.list_subscriptions(
                principal.tenant_id, request.page_size or 50, request.cursor
            )
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceListSubscriptionsResponse(subscriptions=found, next_cursor=cursor)

    async def UpdateSubscription(
        self, request: gateway_pb2.NotificationServiceUpdateSubscriptionRequest, context: Context
    ) -> gateway_pb2.NotificationServiceUpdateSubscriptionResponse:
        principal = await self._principal(context)
        update = ledger_pb2.UpdateSubscriptionRequest(subscription_id=request.subscription_id)
        for name in ("target_id", "filter_id", "active"):
            if request.HasField(name):
                setattr(update, name, getattr(request, name))
        try:
            updated = await self.subscriptions.update_subscription(principal.tenant_id, update)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceUpdateSubscriptionResponse(subscription=updated)

    async def DeleteSubscription(
        self, request: gateway_pb2.NotificationServiceDeleteSubscriptionRequest, context: Context
    ) -> gateway_pb2.NotificationServiceDeleteSubscriptionResponse:
        principal = await self._principal(context)
        try:
            await self.subscriptions.delete_subscription(principal.tenant_id, request.subscription_id)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.NotificationServiceDeleteSubscriptionResponse()

    async def RecoverWebhookTarget(
        self, request: gateway_pb2.RecoverWebhookTargetRequest, context: Context
    ) -> gateway_pb2.RecoverWebhookTargetResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        try:
            if not request.HasField("since"):
                raise Invalid([("since", "is required")])
            job_ids = await self.subscriptions.recover_target(
                principal.tenant_id, request.target_id, request.since.ToDatetime(tzinfo=UTC)
            )
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.RecoverWebhookTargetResponse(job_ids=job_ids)

    # Retry schedule

    async def GetWebhookRetrySchedule(
        self, request: gateway_pb2.GetWebhookRetryScheduleRequest, context: Context
    ) -> gateway_pb2.GetWebhookRetryScheduleResponse:
        principal = await self._principal(context)
        try:
            schedule = await self.subscriptions.retry_schedule(principal.tenant_id)
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.GetWebhookRetryScheduleResponse(schedule=schedule)

    async def SetWebhookRetrySchedule(
        self, request: gateway_pb2.SetWebhookRetryScheduleRequest, context: Context
    ) -> gateway_pb2.SetWebhookRetryScheduleResponse:
        principal = await self._principal(context)
        try:
            schedule = await self.subscriptions.set_retry_schedule(
                principal.tenant_id, list(request.delays_s), list(request.retry_statuses)
            )
        except GatewayError as error:
            await self._fail(context, error)
        return gateway_pb2.SetWebhookRetryScheduleResponse(schedule=schedule)
