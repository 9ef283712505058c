"""What every RPC module shares: the context type, id validation, page sizes, the
rejections of refused drafts, and `Rpcs`, the base of the rpc/ classes: the shapes of an RPC
body that runs one store function (a read, a write in one transaction, one of the tenant's
rows by id or NOT_FOUND), written once so each RPC states only its store function."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import grpc
from google.protobuf.message import Message
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import ledger_pb2

Context = grpc.aio.ServicerContext[Any, Any]
P = ParamSpec("P")
T = TypeVar("T")
# The longest page a list RPC answers (some lists allow fewer).
MAX_PAGE_SIZE = 200
# What a refused draft answers, by the kind of its quota verdict (store.quota.Verdict).
REJECTIONS = {
    "quota": ledger_pb2.REJECTION_QUOTA_EXCEEDED,
    "sender_domain": ledger_pb2.REJECTION_SENDER_DOMAIN_UNVERIFIED,
    "tenant_disabled": ledger_pb2.REJECTION_TENANT_DISABLED,
}


async def require_id(context: Context, value: str, field: str) -> uuid.UUID:
    parsed = parse_id(value)
    if parsed is None:
        await abort_invalid(context, [(field, "must be a UUID")])
    return parsed


async def require_page_size(context: Context, page_size: int) -> int:
    """The page size asked for (50 when unset), or INVALID_ARGUMENT beyond MAX_PAGE_SIZE."""
    size = page_size or 50
    if not 1 <= size <= MAX_PAGE_SIZE:
        await abort_invalid(context, [("page_size", f"must be between 1 and {MAX_PAGE_SIZE}")])
    return size


async def id_page(context: Context, page_size: int, cursor: str) -> tuple[int, uuid.UUID | None]:
    """A page of rows in id order: its size, and the id its cursor names (INVALID_ARGUMENT otherwise)."""
    size = await require_page_size(context, page_size)
    after = parse_id(cursor) if cursor else None
    if cursor and after is None:
        await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
    return size, after


async def require_ids(context: Context, values: list[str], field: str) -> list[uuid.UUID]:
    parsed = [parse_id(v) for v in values]
    bad = [f"{field}[{i}]" for i, p in enumerate(parsed) if p is None]
    if bad:
        await abort_invalid(context, [(b, "must be a UUID") for b in bad])
    return [p for p in parsed if p is not None]


async def require_tenant_ids(context: Context, items: Sequence[Any], field: str) -> list[uuid.UUID]:
    """The tenant id of each item of a batch, in order; INVALID_ARGUMENT `field[i].tenant_id` at
    the first that does not parse."""
    return [await require_id(context, item.tenant_id, f"{field}[{i}].tenant_id") for i, item in enumerate(items)]


async def found(context: Context, what: str, row: T | None) -> T:
    """`row`, or NOT_FOUND `what` when there is none (None, or False from a delete)."""
    if row is None or row is False:
        await abort_not_found(context, what)
    return row


# A store function over one of a tenant's rows: (conn, tenant_id, row_id, *more).
ByTenantId = Callable[Concatenate[AsyncConnection, uuid.UUID, uuid.UUID, P], Awaitable[T]]
Session = Literal["read", "write"]


class Rpcs:
    """The base of the rpc/ classes. An RPC's store function runs on a connection of its own
    (`read`) or in one transaction (`write`); one of the tenant's rows named by an id in the
    request is found or NOT_FOUND, an id that does not parse or is another tenant's reading as
    missing (`one`); a read for the tenant the request names is `tenant_read`."""

    engine: AsyncEngine

    async def read(
        self, query: Callable[Concatenate[AsyncConnection, P], Awaitable[T]], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        async with self.engine.connect() as conn:
            return await query(conn, *args, **kwargs)

    async def write(
        self, change: Callable[Concatenate[AsyncConnection, P], Awaitable[T]], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        async with self.engine.begin() as conn:
            return await change(conn, *args, **kwargs)

    async def tenant_read(
        self,
        context: Context,
        tenant: str,
        query: Callable[Concatenate[AsyncConnection, uuid.UUID, P], Awaitable[T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """What `query` answers for the tenant whose id is `tenant` (INVALID_ARGUMENT `tenant_id` otherwise)."""
        return await self.read(query, await require_id(context, tenant, "tenant_id"), *args, **kwargs)

    async def one(
        self,
        context: Context,
        what: str,
        tenant_id: uuid.UUID,
        value: str,
        session: Session,
        query: ByTenantId[P, T | None],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """What `query` answers for the tenant's row whose id is `value` (in a transaction for
        "write"), or NOT_FOUND `what`: the row is missing (a delete answers False)."""
        row_id = parse_id(value)
        row = None
        if row_id is not None:
            row = await (self.write if session == "write" else self.read)(query, tenant_id, row_id, *args, **kwargs)
        return await found(context, what, row)


# A read for one tenant: (conn, tenant_id, *more).
TenantQuery = Callable[Concatenate[AsyncConnection, uuid.UUID, ...], Awaitable[Any]]


def tenant_list_rpc(
    query: TenantQuery, answer: Callable[..., Message], field: str, to_proto: Callable[[Any], Message], *args: Any
) -> Any:
    """An `Rpcs` method that only lists the rows `query(conn, tenant_id, *args)` answers for
    `request.tenant_id`, each through `to_proto`, into `answer(field=[...])`."""

    async def method(self: Rpcs, request: Any, context: Context) -> Message:
        rows = await self.tenant_read(context, request.tenant_id, query, *args)
        return answer(**{field: [to_proto(row) for row in rows]})

    return method


def tenant_get_rpc(
    query: TenantQuery, answer: Callable[..., Message], field: str, to_proto: Callable[[Any], Message]
) -> Any:
    """An `Rpcs` method that only reads what `query(conn, tenant_id)` answers for
    `request.tenant_id` into `answer(field=to_proto(...))`, NOT_FOUND `tenant` when it answers None."""

    async def method(self: Rpcs, request: Any, context: Context) -> Message:
        row = await found(context, "tenant", await self.tenant_read(context, request.tenant_id, query))
        return answer(**{field: to_proto(row)})

    return method


def row_rpc(
    what: str,
    session: Session,
    query: ByTenantId[..., Any],
    answer: Callable[..., Message],
    field: str | None = None,
    to_proto: Callable[[Any], Message] | None = None,
    args: tuple[Any, ...] = (),
) -> Any:
    """An `Rpcs` method over the tenant's row whose id is `request.<what>_id`: `query(conn,
    tenant_id, row_id, *args)` runs on it (NOT_FOUND `what` when it answers None or False), then
    `answer(field=to_proto(row))` answers, or `answer()` when there is no field."""
    id_field = f"{what}_id"

    async def method(self: Rpcs, request: Any, context: Context) -> Message:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row = await self.one(context, what, tenant_id, getattr(request, id_field), session, query, *args)
        if field is None or to_proto is None:
            return answer()
        return answer(**{field: to_proto(row)})

    return method
