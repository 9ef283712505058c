"""A tenant's resource kept by the ledger, asked for the same way whatever it is.

The ledger names its RPCs and messages after the resource (`GetWebhookTarget`,
`GetWebhookTargetRequest(tenant_id, target_id)` answering `.target`, `ListWebhookTargets`
answering `.targets` and `next_cursor` ...), so list, get, create, update and delete are written
once here, over a `Resource` that says those names; each operations module only adds what its
resource checks before the ledger is asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message

from herald.grpcio.ledger import MESSAGES, Ledger
from herald.ids import TenantId, parse_id
from herald_gateway.errors import NotFound, Overrides, ask

ItemT = TypeVar("ItemT", bound=Message)


@dataclass(frozen=True)
class Resource(Generic[ItemT]):
    what: str  # in errors: "target not found"
    service: str  # the ledger service that keeps it, as named in `Ledger`: "subscriptions"
    rpc: str  # in the ledger's RPC and message names: "WebhookTarget"
    field: str  # the message field that holds one: "target"
    plural: str  # the list answer's field: "targets"
    id_field: str  # the request field naming one: "target_id"
    # What a get asks for besides the id (a target's breaker state: `with_breaker`).
    get_fields: tuple[tuple[str, Any], ...] = ()


class Crud(Generic[ItemT]):
    """The five calls of one resource. An id that is not a UUID is "not found" at once: the
    ledger would say the same after a round trip."""

    def __init__(self, ledger: Ledger, resource: Resource[ItemT]) -> None:
        self.ledger = ledger
        self.resource = resource

    def _ask(self, verb: str, what: str = "", **fields: Any) -> Any:
        name = f"{verb}{self.resource.rpc}s" if verb == "List" else f"{verb}{self.resource.rpc}"
        request = getattr(MESSAGES[self.resource.service], f"{name}Request")(**fields)
        return ask(getattr(getattr(self.ledger, self.resource.service), name)(request), what or self.resource.what)

    def _check(self, item_id: str) -> None:
        if parse_id(item_id) is None:
            raise NotFound(f"{self.resource.what} not found")

    async def create(self, tenant_id: TenantId, item: ItemT, what: str = "", **extra: Any) -> ItemT:
        """`what`: the thing named when the ledger does not find it, when that is not the item
        itself; `extra`: the create request's other fields."""
        item.tenant_id = tenant_id  # type: ignore[attr-defined]
        answer = await self._ask("Create", what, **{self.resource.field: item}, **extra)
        created: ItemT = getattr(answer, self.resource.field)
        return created

    async def get(self, tenant_id: TenantId, item_id: str) -> ItemT:
        self._check(item_id)
        answer = await self._ask(
            "Get", tenant_id=tenant_id, **{self.resource.id_field: item_id}, **dict(self.resource.get_fields)
        )
        found: ItemT = getattr(answer, self.resource.field)
        return found

    async def page(self, tenant_id: TenantId, limit: int, cursor: str) -> tuple[list[ItemT], str]:
        answer = await self._ask("List", tenant_id=tenant_id, page_size=limit, cursor=cursor)
        return list(getattr(answer, self.resource.plural)), answer.next_cursor

    async def all(self, tenant_id: TenantId) -> list[ItemT]:
        return list(getattr(await self._ask("List", tenant_id=tenant_id), self.resource.plural))

    async def update(self, tenant_id: TenantId, request: Message, overrides: Overrides | None = None) -> ItemT:
        self._check(getattr(request, self.resource.id_field))
        request.tenant_id = tenant_id  # type: ignore[attr-defined]
        call = getattr(getattr(self.ledger, self.resource.service), f"Update{self.resource.rpc}")(request)
        updated: ItemT = getattr(await ask(call, self.resource.what, overrides), self.resource.field)
        return updated

    async def delete(self, tenant_id: TenantId, item_id: str) -> None:
        self._check(item_id)
        await self._ask("Delete", tenant_id=tenant_id, **{self.resource.id_field: item_id})
