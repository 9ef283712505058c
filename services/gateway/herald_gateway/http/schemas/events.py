"""The event log as the HTTP API shows it: an event with its payload and deliveries, a page
of events, and what a replay takes and answers."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from herald.names import STATUS_NAMES
from herald.v1 import common_pb2
from herald_gateway.http.schemas.batch import ItemProblem
from herald_gateway.http.schemas.common import Page, Text, payload_views, time_of
from herald_gateway.http.schemas.submit import EventDeliveryOut, EventIn
from herald_gateway.operations.batch import MAX_BATCH_ITEMS


class EventDeliveryView(BaseModel):
    job_id: str
    target_id: str | None
    status: str = Field(description="The job's status: queued, delivered, failed, skipped, ...")
    reason: str | None = Field(description="Why it was skipped, or how it last failed.")


class EventOut(BaseModel):
    id: str
    event_type: str
    content_type: str | None
    created_at: datetime | None
    ordering_key: str | None = None
    payload: JsonValue = Field(default=None, description="The payload, when it is JSON (GET /v1/events/{id} only).")
    payload_base64: str | None = Field(
        default=None, description="The payload as sent, base64 (GET /v1/events/{id} only)."
    )
    payload_expunged_at: datetime | None = Field(
        default=None,
        description="When the payload went (DELETE /v1/events/{id}/payload or retention); payload is then null.",
    )
    deliveries: list[EventDeliveryView] | None = Field(
        default=None,
        description="GET /v1/events/{id} only: every delivery of the event (fan-out, skipped, replays, resends).",
    )


class EventList(Page[EventOut]):
    pass


class ReplayIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_id: Text | None = Field(
        default=None, max_length=64, description="Only this target (default: every subscription matching today)."
    )


def event_out(event: common_pb2.Event, full: bool = False) -> EventOut:
    out = EventOut(
        id=event.id,
        event_type=event.event_type,
        content_type=event.content_type or None,
        created_at=time_of(event, "created_at"),
        ordering_key=event.ordering_key or None,
        payload_expunged_at=time_of(event, "payload_expunged_at"),
    )
    if not full:
        return out
    if not event.HasField("payload_expunged_at"):
        out.payload, out.payload_base64 = payload_views(event.payload, event.content_type)
    out.deliveries = [
        EventDeliveryView(
            job_id=d.job_id,
            target_id=d.target_id or None,
            status=STATUS_NAMES.get(d.status, "unknown"),
            reason=d.reason or None,
        )
        for d in event.deliveries
    ]
    return out


class EventBatchIn(BaseModel):
    items: list[EventIn] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)


class EventBatchItemResult(BaseModel):
    index: int = Field(description="The item's position in `items`, from 0.")
    status: int = Field(
        description="202: accepted (its jobs durable). Otherwise the status the event alone would have got: 422 "
        "invalid, 429 quota, 503 not recorded (retry it: its event_id de-duplicates)."
    )
    event_id: str | None = None
    replayed: bool | None = None
    deliveries: list[EventDeliveryOut] | None = None
    problem: ItemProblem | None = Field(default=None, description="Why the item was refused.")


class EventBatchResults(BaseModel):
    results: list[EventBatchItemResult] = Field(description="One per item, in the order of `items`.")
