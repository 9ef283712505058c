"""NotificationService's event log and sending again: the gRPC twins of GET /v1/events[/{id}],
POST /v1/events/{id}/replay and POST /v1/jobs/{id}/resend, over the same operations."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING

from herald.grpcio.context import Context
from herald.v1 import gateway_pb2
from herald_gateway.auth import Principal
from herald_gateway.operations import Operations
from herald_gateway.operations.events import EventQuery


class EventGrpc:
    """Mixed into NotificationServicer, which provides authentication and the rate limit."""

    operations: Operations

    if TYPE_CHECKING:  # provided by NotificationServicer; declared here for the type checker only

        async def _principal(self, context: Context) -> Principal: ...

        async def _spend_rate(self, context: Context, principal: Principal) -> None: ...

    async def ListEvents(
        self, request: gateway_pb2.NotificationServiceListEventsRequest, context: Context
    ) -> gateway_pb2.NotificationServiceListEventsResponse:
        principal = await self._principal(context)
        query = EventQuery(
            page_size=request.page_size or 50,
            cursor=request.cursor,
            event_type=request.event_type,
            since=request.since.ToDatetime(tzinfo=UTC) if request.HasField("since") else None,
            until=request.until.ToDatetime(tzinfo=UTC) if request.HasField("until") else None,
        )
        page = await self.operations.list_events(principal, query)
        return gateway_pb2.NotificationServiceListEventsResponse(events=page.events, next_cursor=page.next_cursor)

    async def GetEvent(
        self, request: gateway_pb2.NotificationServiceGetEventRequest, context: Context
    ) -> gateway_pb2.NotificationServiceGetEventResponse:
        principal = await self._principal(context)
        return gateway_pb2.NotificationServiceGetEventResponse(
            event=await self.operations.get_event(principal, request.id)
        )

    async def ReplayEvent(
        self, request: gateway_pb2.NotificationServiceReplayEventRequest, context: Context
    ) -> gateway_pb2.NotificationServiceReplayEventResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        replayed = await self.operations.replay_event(principal, request.id, request.target_id)
        return gateway_pb2.NotificationServiceReplayEventResponse(
            event_id=replayed.event_id, deliveries=replayed.deliveries
        )

    async def ResendJob(
        self, request: gateway_pb2.NotificationServiceResendJobRequest, context: Context
    ) -> gateway_pb2.NotificationServiceResendJobResponse:
        principal = await self._principal(context)
        await self._spend_rate(context, principal)
        return gateway_pb2.NotificationServiceResendJobResponse(
            job=await self.operations.resend_job(principal, request.id)
        )
