"""Bodies of the batch routes, as the OpenAPI document shows them.

The request body is read by the route itself (each item is validated on its own, so one bad
item is refused alone rather than failing the batch); `request_body` puts the models' schema
in the document all the same.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from herald_gateway.http.schemas.submit import EmailIn, WebhookIn
from herald_gateway.operations.batch import MAX_BATCH_ITEMS

KEY_DESCRIPTION = (
    "This item's Idempotency-Key: a repeat with the same key and the same item answers the first job "
    "(`replayed`); the same key with a different item is refused (422). The request-level header is not "
    "used on batch routes."
)


class WebhookBatchItem(WebhookIn):
    """The body of POST /v1/webhooks, and the item's own idempotency key."""

    idempotency_key: str | None = Field(default=None, max_length=255, description=KEY_DESCRIPTION)


class EmailBatchItem(EmailIn):
    """The body of POST /v1/emails, and the item's own idempotency key."""

    idempotency_key: str | None = Field(default=None, max_length=255, description=KEY_DESCRIPTION)


class WebhookBatchIn(BaseModel):
    items: list[WebhookBatchItem] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)


class EmailBatchIn(BaseModel):
    items: list[EmailBatchItem] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)


class FieldProblem(BaseModel):
    field: str
    detail: str


class ItemProblem(BaseModel):
    """RFC 9457 problem details, as the single route would have answered for this item alone."""

    type: str
    title: str
    status: int
    detail: str
    errors: list[FieldProblem] | None = None


class BatchItemResult(BaseModel):
    index: int = Field(description="The item's position in `items`, from 0.")
    status: int = Field(
        description="202: accepted (durable). Otherwise the status the item alone would have got: 422 invalid or "
        "idempotency mismatch, 429 quota, 503 not submitted (retry it)."
    )
    id: str | None = Field(default=None, description="The job's id (accepted items).")
    job_status: str | None = Field(default=None, description="queued, pending or suppressed (accepted items).")
    replayed: bool | None = Field(
        default=None, description="True: the item's idempotency key named an earlier job; `id` is that job."
    )
    problem: ItemProblem | None = Field(default=None, description="Why the item was refused.")


class BatchResults(BaseModel):
    results: list[BatchItemResult] = Field(description="One per item, in the order of `items`.")


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**_inline(defs[ref.removeprefix("#/$defs/")], defs), **_inline(rest, defs)}
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def request_body(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` for a route that reads its body itself: the model's schema, self-contained."""
    schema = model.model_json_schema()
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _inline(schema, schema.get("$defs", {}))}},
        }
    }
