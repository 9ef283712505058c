"""What every RPC module shares: the context type and id validation."""

from __future__ import annotations

import uuid
from typing import Any

import grpc

from herald.grpcio.errors import abort_invalid
from herald.ids import parse_id

Context = grpc.aio.ServicerContext[Any, Any]


async def require_id(context: Context, value: str, field: str) -> uuid.UUID:
    parsed = parse_id(value)
    if parsed is None:
        await abort_invalid(context, [(field, "must be a UUID")])
    return parsed


async def require_ids(context: Context, values: list[str], field: str) -> list[uuid.UUID]:
    parsed = [parse_id(v) for v in values]
    bad = [f"{field}[{i}]" for i, p in enumerate(parsed) if p is None]
    if bad:
        await abort_invalid(context, [(b, "must be a UUID") for b in bad])
    return [p for p in parsed if p is not None]
