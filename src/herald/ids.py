"""Identifiers. Job ids are UUIDv7: unique without coordination and ordered by
creation time, so the primary-key index stays append-mostly and ids sort like rows."""

from __future__ import annotations

import uuid
from typing import NewType

import uuid_utils


def new_id() -> uuid.UUID:
    return uuid.UUID(bytes=uuid_utils.uuid7().bytes)


def parse_id(value: str) -> uuid.UUID | None:
    """The UUID in `value`, or None when it is not one (callers answer 404, not 500)."""
    try:
        return uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return None


def created_at_of(job_id: str) -> float | None:
    """When a UUIDv7 was made (Unix seconds): its first 48 bits are the milliseconds.
    Lets a sender measure accept-to-delivery from the id alone, with no extra lookup."""
    parsed = parse_id(job_id)
    if parsed is None or parsed.version != 7:
        return None
    return (parsed.int >> 80) / 1000.0


# Ids as they cross layers (HTTP path → operations → ledger request): strings on the wire, kept
# apart by the type checker so a job id is never passed where a tenant id belongs.
TenantId = NewType("TenantId", str)
JobId = NewType("JobId", str)
