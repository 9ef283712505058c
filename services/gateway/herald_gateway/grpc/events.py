"""NotificationService's event log, sending again, expunging and the event stream: the gRPC
twins of GET /v1/events[/{id}], POST /v1/events/{id}/replay, POST /v1/jobs/{id}/resend, DELETE
/v1/events/{id}/payload and /v1/jobs/{id}/payload, and POST /v1/events/batch, over the same
operations."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC
from typing import TYPE_CHECKING

from herald.grpcio.context import Context
from herald.v1 import gateway_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import GatewayError, Unavailable
from herald_gateway.grpc.errors import item_error
from herald_gateway.operations import Operations
from herald_gateway.operations.events import EventOutcome, EventQuery
from herald_gateway.operations.subscriptions import EventInput


def event_of(request: gateway_pb2.NotificationServicePublishEventRequest) -> EventInput:
    return EventInput(
        event_type=request.event_type,
        payload=request.payload,
        content_type=request.content_type or "application/json",
        event_id=request.event_id,
        ordering_key=request.ordering_key,
    )


class EventGrpc:
    """Mixed into NotificationServicer, which provides authentication and the rate limit."""

    operations: Operations

    if TYPE_CHECKING:  # provided by NotificationServicer; declared here for the type checker only

        async def _principal(self, context: Context) -> Principal: ...

        async def _spend_rate(self, context: Context, principal: Principal) -> None: ...

        async def _spend_chunk_rate(
            self, principal: Principal, count: int
        ) -> tuple[int, GatewayError] | GatewayError: ...

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

    async def ExpungeEventPayload(
        self, request: gateway_pb2.NotificationServiceExpungeEventPayloadRequest, context: Context
    ) -> gateway_pb2.NotificationServiceExpungeEventPayloadResponse:
        principal = await self._principal(context)
        await self.operations.expunge_event_payload(principal, request.id)
        return gateway_pb2.NotificationServiceExpungeEventPayloadResponse()

    async def ExpungeJobPayload(
        self, request: gateway_pb2.NotificationServiceExpungeJobPayloadRequest, context: Context
    ) -> gateway_pb2.NotificationServiceExpungeJobPayloadResponse:
        principal = await self._principal(context)
        await self.operations.expunge_job_payload(principal, request.id)
        return gateway_pb2.NotificationServiceExpungeJobPayloadResponse()

    async def PublishEvents(
        self, request_iterator: AsyncIterator[gateway_pb2.PublishEventsRequest], context: Context
    ) -> AsyncIterator[gateway_pb2.PublishEventsResponse]:
        """Each event as PublishEvent would take it (one request of the rate limit each, the
        principal checked again for each), answered in order; a refused one does not end the
        stream. Events are recorded one after the other (an ordering key keeps its order)."""
        index = 0
        async for request in request_iterator:
            principal = await self._principal(context)
            granted = await self._spend_chunk_rate(principal, 1)
            if isinstance(granted, GatewayError) or granted[0] < 1:
                refusal = granted if isinstance(granted, GatewayError) else granted[1]
                outcomes = [EventOutcome(error=refusal)]
            else:
                outcomes = await self.operations.publish_events(principal, [event_of(request.event)])
            answer = gateway_pb2.PublishEventsResponse(index=index)
            accepted = outcomes[0].accepted
            if accepted is not None:
                answer.event_id = accepted.event_id
                answer.replayed = accepted.replayed
                answer.deliveries.extend(accepted.deliveries)
            else:
                answer.error.CopyFrom(item_error(outcomes[0].error or Unavailable("the event was not recorded")))
            yield answer
            index += 1
