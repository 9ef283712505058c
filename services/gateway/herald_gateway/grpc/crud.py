"""NotificationService's five RPCs of a tenant resource, written once.

gateway.proto names them after the resource (`CreateWebhookTarget`, ...,
`NotificationServiceListWebhookTargetsResponse(targets, next_cursor)`), as the ledger does, so
`crud_rpcs(resource)` makes all five from the `Resource` that says the names. Create and update go
through the operation of that resource (`create_target`, `update_target`: the checks it runs);
get, list and delete through the generic `Crud`. The HTTP twin is `http.crud`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message

from herald.grpcio.context import Context
from herald.grpcio.ledger import MESSAGES
from herald.v1 import gateway_pb2
from herald_gateway.operations.crud import Resource

DEFAULT_PAGE_SIZE = 50


def update_request(request: Message, ledger_type: type[Message]) -> Message:
    """The ledger's update request from the gateway's: the fields both have, an optional one
    only when it is set (unset means unchanged)."""
    update = ledger_type()
    for descriptor in ledger_type.DESCRIPTOR.fields:
        name = descriptor.name
        if name not in request.DESCRIPTOR.fields_by_name or name == "tenant_id":
            continue
        if descriptor.has_presence and descriptor.type != descriptor.TYPE_MESSAGE and not request.HasField(name):
            continue
        value = getattr(request, name)
        if descriptor.message_type is not None and descriptor.message_type.GetOptions().map_entry:
            getattr(update, name).update(value)
        elif descriptor.is_repeated:
            getattr(update, name).extend(value)
        else:
            setattr(update, name, value)
    return update


def crud_rpcs(resource: Resource[Any]) -> dict[str, Callable[..., Any]]:
    """The servicer methods, by RPC name, for a servicer with `operations` and `_principal`."""
    name, field, key = resource.rpc, resource.field, resource.what.replace(" ", "_")
    ledger_update: type[Message] = getattr(MESSAGES[resource.service], f"Update{name}Request")

    def answer(verb: str, **fields: Any) -> Message:
        plural = "s" if verb == "List" else ""
        made: Message = getattr(gateway_pb2, f"NotificationService{verb}{name}{plural}Response")(**fields)
        return made

    async def create(self: Any, request: Any, context: Context) -> Message:
        principal = await self._principal(context)
        item = type(getattr(request, field))()
        item.CopyFrom(getattr(request, field))
        # A target may bring its signing key beside it (the request's other field).
        extra = {"signing_key": request.signing_key} if "signing_key" in request.DESCRIPTOR.fields_by_name else {}
        created = await getattr(self.operations, f"create_{key}")(principal.tenant_id, item, **extra)
        return answer("Create", **{field: created})

    async def get(self: Any, request: Any, context: Context) -> Message:
        principal = await self._principal(context)
        found = await self.operations.crud(resource).get(principal.tenant_id, getattr(request, resource.id_field))
        return answer("Get", **{field: found})

    async def list_(self: Any, request: Any, context: Context) -> Message:
        principal = await self._principal(context)
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        found, cursor = await self.operations.crud(resource).page(principal.tenant_id, page_size, request.cursor)
        return answer("List", **{resource.plural: found, "next_cursor": cursor})

    async def update(self: Any, request: Any, context: Context) -> Message:
        principal = await self._principal(context)
        change = update_request(request, ledger_update)
        updated = await getattr(self.operations, f"update_{key}")(principal.tenant_id, change)
        return answer("Update", **{field: updated})

    async def delete(self: Any, request: Any, context: Context) -> Message:
        principal = await self._principal(context)
        await self.operations.crud(resource).delete(principal.tenant_id, getattr(request, resource.id_field))
        return answer("Delete")

    methods = {"Create": create, "Get": get, "List": list_, "Update": update, "Delete": delete}
    return {f"{verb}{name}{'s' if verb == 'List' else ''}": method for verb, method in methods.items()}
