"""What every request and response body shares: the text patterns refused at the door, timestamps, JSON payloads."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Annotated, Generic, Literal, TypeVar

import orjson
from google.protobuf.message import Message
from pydantic import BaseModel, JsonValue, StringConstraints

from herald_gateway.errors import Invalid

# Refused at the door rather than downstream, where they would fail as 5xx: NUL (U+0000),
# which PostgreSQL cannot store in text, in any string a request carries; anything but
# printable ASCII in a credential Herald sends in an HTTP header; integers beyond the
# int32 the protobuf messages and the database columns hold. The patterns run in
# pydantic's core (no Python call per field) and are in the OpenAPI document.
NO_NUL_PATTERN = r"^[^\x00]*$"


HEADER_SAFE_PATTERN = r"^[\x20-\x7e]*$"


PATTERN_MEANINGS = {
    NO_NUL_PATTERN: "must not contain NUL (U+0000) characters",
    HEADER_SAFE_PATTERN: "must be printable ASCII (it is sent in an HTTP header)",
}


INT32_MAX = 2**31 - 1


Text = Annotated[str, StringConstraints(pattern=NO_NUL_PATTERN)]


HeaderSafe = Annotated[str, StringConstraints(pattern=HEADER_SAFE_PATTERN)]


PriorityName = Literal["low", "normal", "critical"]


def compact_json(payload: JsonValue) -> bytes:
    """A `payload` as delivered: compact UTF-8 JSON. What cannot be written so (an integer
    beyond 64 bits, a lone surrogate) is the tenant's to fix: 422, not 500."""
    try:
        return orjson.dumps(payload)
    except orjson.JSONEncodeError as error:
        raise Invalid([("payload", f"cannot be delivered as JSON: {error}")]) from error


def payload_views(raw: bytes, content_type: str) -> tuple[JsonValue, str]:
    """A payload as the API reads it back: parsed when its content type is JSON (None when it
    is not, or does not parse), and its bytes as sent, base64."""
    parsed: JsonValue = None
    if "json" in content_type:
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
    return parsed, base64.b64encode(raw).decode()


def time_of(message: Message, field: str) -> datetime | None:
    """A Timestamp field of the message as a datetime, or None when it is unset."""
    return getattr(message, field).ToDatetime(tzinfo=UTC) if message.HasField(field) else None


ItemT = TypeVar("ItemT")


class Page(BaseModel, Generic[ItemT]):
    """A page of a cursor-paginated list; each list subclasses it (`class TargetList(Page[TargetOut])`)
    so its schema keeps its own name in the OpenAPI document."""

    data: list[ItemT]
    next_cursor: str | None
