"""The RPCs that are one operation and nothing else, written once: authenticate, call the
operation, put what it answers in one field of the response. An RPC that checks or converts
its request first stays a method of its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import Message

from herald.grpcio.context import Context
from herald.ids import TenantId
from herald_gateway.operations import Operations

# The operation of a tenant's RPC: the operations, the caller's tenant id and the request.
TenantCall = Callable[[Operations, TenantId, Any], Awaitable[Any]]
# The operation of an operator's RPC: the operations and the request.
OperatorCall = Callable[[Operations, Any], Awaitable[Any]]


def tenant_rpc(call: TenantCall, answer: Callable[..., Message], field: str, spends: bool = False) -> Any:
    """A NotificationService method (servicer with `operations`, `_principal` and `_spend_rate`)
    answering `answer(field=call(...))`; `spends`: it creates work, so it spends the rate limit."""

    async def method(self: Any, request: Any, context: Context) -> Message:
        principal = await self._principal(context)
        if spends:
            await self._spend_rate(context, principal)
        return answer(**{field: await call(self.operations, principal.tenant_id, request)})

    return method


def operator_rpc(call: OperatorCall, answer: Callable[..., Message], field: str, of_tenant: bool = False) -> Any:
    """An AdminService method (servicer with `operations` and `_operator`) answering
    `answer(field=call(...))`; `of_tenant`: `request.tenant_id` must name a tenant (404 first)."""

    async def method(self: Any, request: Any, context: Context) -> Message:
        await self._operator(context)
        if of_tenant:
            await self.operations.get_tenant(request.tenant_id)
        return answer(**{field: await call(self.operations, request)})

    return method
