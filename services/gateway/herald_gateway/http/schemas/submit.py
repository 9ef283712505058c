"""The bodies of the submit routes: POST /v1/webhooks, /v1/emails, /v1/events (and each item of their batches)."""

from __future__ import annotations

import base64
import binascii

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from herald_gateway.errors import Invalid
from herald_gateway.http.schemas.common import PriorityName, Text, compact_json


class WebhookIn(BaseModel):
    """Exactly one of `payload` (any JSON value, delivered as compact JSON) and
    `payload_base64` (opaque bytes, delivered exactly) is required."""

    model_config = ConfigDict(extra="forbid")

    url: Text = Field(max_length=2048, examples=["https://example.com/hooks/orders"])
    payload: JsonValue = Field(default=None, examples=[{"order_id": 42, "status": "paid"}])
    payload_base64: Text | None = None
    content_type: Text | None = Field(default=None, max_length=255)
    headers: dict[Text, Text] = Field(default_factory=dict)
    priority: PriorityName | None = None
    ordering_key: Text | None = Field(
        default=None,
        max_length=255,
        description="Jobs sharing a key are delivered one at a time, in submission order.",
    )


class EmailAddressIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Text = Field(max_length=320)
    name: Text = Field(default="", max_length=200)


AddressIn = EmailAddressIn | Text


class EmailIn(BaseModel):
    """An address is `"a@example.com"`, `"Ann <a@example.com>"` or `{"email": ..., "name": ...}`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: AddressIn = Field(alias="from")
    to: list[AddressIn] = Field(min_length=1, max_length=50)
    cc: list[AddressIn] = Field(default_factory=list, max_length=50)
    bcc: list[AddressIn] = Field(default_factory=list, max_length=50)
    reply_to: AddressIn | None = None
    subject: Text = Field(min_length=1, max_length=998)
    text: Text | None = Field(default=None, max_length=2_000_000)
    html: Text | None = Field(default=None, max_length=5_000_000)
    headers: dict[Text, Text] = Field(default_factory=dict, max_length=50)
    tags: list[Text] = Field(default_factory=list, max_length=20)
    metadata: dict[Text, Text] = Field(default_factory=dict, max_length=50)
    provider: Text | None = Field(
        default=None, description="Pin one of your provider ids; then only it and `fallback`."
    )
    fallback: Text | None = None
    priority: PriorityName | None = None
    ordering_key: Text | None = Field(default=None, max_length=255)


class JobAccepted(BaseModel):
    id: str
    status: str


class EventIn(BaseModel):
    """Exactly one of `payload` (any JSON value, delivered as compact JSON) and
    `payload_base64` (opaque bytes, delivered exactly, with `content_type`) is required."""

    model_config = ConfigDict(extra="forbid")

    event_type: Text = Field(max_length=255, examples=["orders.created.v1"])
    payload: JsonValue = Field(default=None, examples=[{"order_id": 42}])
    payload_base64: Text | None = None
    content_type: Text | None = Field(default=None, max_length=255)
    event_id: Text | None = Field(
        default=None,
        max_length=255,
        description="De-duplicates for 24 h: a repeat answers the first result and creates nothing. "
        "Generated when absent.",
    )
    ordering_key: Text | None = Field(
        default=None,
        max_length=255,
        description="Per target, the events sharing this key are delivered one at a time, in the order accepted.",
    )


class EventDeliveryOut(BaseModel):
    job_id: str
    target_id: str


class EventAccepted(BaseModel):
    event_id: str
    replayed: bool = Field(description="True when this event id was accepted before (the first result).")
    deliveries: list[EventDeliveryOut]


def payload_of(body: WebhookIn | EventIn) -> tuple[bytes, str]:
    """The bytes a webhook or an event delivers and their content type: exactly one of
    `payload` (compact JSON) and `payload_base64` (opaque bytes, delivered exactly)."""
    has_json = "payload" in body.model_fields_set
    if has_json == (body.payload_base64 is not None):
        raise Invalid([("payload", "give exactly one of payload and payload_base64")])
    if body.payload_base64 is not None:
        try:
            raw = base64.b64decode(body.payload_base64, validate=True)
        except (binascii.Error, ValueError) as error:
            raise Invalid([("payload_base64", "is not valid base64")]) from error
        return raw, body.content_type or "application/octet-stream"
    return compact_json(body.payload), body.content_type or "application/json"
