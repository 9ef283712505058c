"""Identifiers. Job ids are UUIDv7: unique without coordination and ordered by
creation time, so the primary-key index stays append-mostly and ids sort like rows."""

from __future__ import annotations

import uuid

import uuid_utils


def new_id() -> uuid.UUID:
    return uuid.UUID(bytes=uuid_utils.uuid7().bytes)


def parse_id(value: str) -> uuid.UUID | None:
    """The UUID in `value`, or None when it is not one (callers answer 404, not 500)."""
    try:
        return uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return None
