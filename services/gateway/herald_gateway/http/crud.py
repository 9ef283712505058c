"""The HTTP reads and deletes of a tenant resource, written once: `GET <path>` (a page, oldest
first), `GET <path>/{id}` and `DELETE <path>/{id}` (204) over the generic `Crud`, for any
`Resource` whose answer one function turns into its response model. Creates and updates stay
with their routes: each has its own body. The gRPC twin is `grpc.crud`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_type_hints

from fastapi import APIRouter, Query
from pydantic import BaseModel
from starlette.responses import Response

from herald_gateway.errors import Invalid
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.operations.crud import Resource

Limit = Annotated[int, Query(ge=1, le=200)]
Cursor = Annotated[str | None, Query(max_length=200)]


def _parameter(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def add_crud_routes(
    router: APIRouter,
    path: str,
    resource: Resource[Any],
    out: Callable[[Any], BaseModel],
    list_model: type[BaseModel],
    delete_doc: str = "",
) -> None:
    """Registers list, get and delete under `path` (`/targets`), named as if written by hand
    (`list_targets`, `get_target`, `delete_target`: the same operation ids)."""
    key, plural, id_field = resource.what.replace(" ", "_"), path.strip("/").replace("-", "_"), resource.id_field
    out_model = get_type_hints(out)["return"]
    who = [_parameter("principal", Tenant), _parameter("operations", OperationsDep)]

    async def list_items(principal: Any, operations: Any, limit: int = 50, cursor: str | None = None) -> BaseModel:
        found, next_cursor = await operations.crud(resource).page(principal.tenant_id, limit, cursor or "")
        return list_model(data=[out(item) for item in found], next_cursor=next_cursor or None)

    async def get_item(principal: Any, operations: Any, **ids: str) -> BaseModel:
        return out(await operations.crud(resource).get(principal.tenant_id, ids[id_field]))

    async def delete_item(principal: Any, operations: Any, **ids: str) -> Response:
        await operations.crud(resource).delete(principal.tenant_id, ids[id_field])
        return Response(status_code=204)

    list_items.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*who, _parameter("limit", Limit, 50), _parameter("cursor", Cursor, None)], return_annotation=list_model
    )
    one = [_parameter(id_field, str), *who]
    get_item.__signature__ = inspect.Signature(one, return_annotation=out_model)  # type: ignore[attr-defined]
    delete_item.__signature__ = inspect.Signature(one, return_annotation=Response)  # type: ignore[attr-defined]
    router.add_api_route(path, list_items, methods=["GET"], response_model=list_model, name=f"list_{plural}")
    item_path = f"{path}/{{{id_field}}}"
    router.add_api_route(item_path, get_item, methods=["GET"], response_model=out_model, name=f"get_{key}")
    router.add_api_route(
        item_path, delete_item, methods=["DELETE"], status_code=204, name=f"delete_{key}", description=delete_doc
    )


def refuse_nulls(body: BaseModel, names: tuple[str, ...]) -> None:
    """A PATCH may leave a field out (unchanged) but not set these to null."""
    for name in names:
        if name in body.model_fields_set and getattr(body, name) is None:
            raise Invalid([(name, "cannot be null")])
