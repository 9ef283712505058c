"""POST /v1/webhooks/batch and /v1/emails/batch: up to 1,000 jobs in one request.

Every item is admitted as if it came alone (validation, quota, sending-domain check, its own
idempotency key) and gets its own result; the answer is 200 when the batch itself was read,
whatever became of its items. A batch costs one request of the rate limit per item, taken
all at once before anything is submitted: a batch the limit has no room for is refused whole
(429), so a batch never gets around the limit its items would have met one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import orjson
from fastapi import APIRouter, Request
from pydantic import BaseModel, ValidationError
from starlette.responses import Response

from herald.names import PRIORITY_VALUES, STATUS_NAMES
from herald.v1 import common_pb2, router_pb2
from herald_gateway.access import UNKEYED_PATHS
from herald_gateway.auth import Principal
from herald_gateway.errors import GatewayError, Invalid, RateLimited, Unavailable
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.problems import PROBLEM_BASE
from herald_gateway.http.routes.emails import email_request
from herald_gateway.http.routes.webhooks import webhook_input
from herald_gateway.http.schemas.batch import (
    BatchResults,
    EmailBatchIn,
    EmailBatchItem,
    WebhookBatchIn,
    WebhookBatchItem,
    request_body,
)
from herald_gateway.idempotency import request_hash
from herald_gateway.operations.batch import (
    MAX_BATCH_ITEMS,
    BatchSubmitter,
    ItemOutcome,
    refuse_non_public_targets,
)
from herald_gateway.operations.submit import email_submission, webhook_submission
from herald_gateway.rate_limit import RateLimiter, RateLimiterUnavailable

router = APIRouter(tags=["batches"])
Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])
WEBHOOKS_BATCH, EMAILS_BATCH = "/v1/webhooks/batch", "/v1/emails/batch"
assert {WEBHOOKS_BATCH, EMAILS_BATCH} <= UNKEYED_PATHS
REFUSED_BATCH = {
    422: {
        "description": "The batch itself could not be read (not JSON, no items, more than 1,000), or it "
        "carried an Idempotency-Key header (give each item its own `idempotency_key`)."
    },
    429: {"description": "The rate limit has no room for this many items (each counts as one request)."},
}


def refuse_batch_key(request: Request) -> None:
    if request.headers.get("idempotency-key") is not None:
        raise Invalid(
            [
                (
                    "Idempotency-Key",
                    "is not used by batch routes: give each item its own idempotency_key (an event: its event_id)",
                )
            ]
        )


def batch_items(raw: bytes) -> list[Any]:
    """The envelope: {"items": [...]} with 1..1000 items, or Invalid for the whole batch."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise Invalid([("body", f"is not JSON: {error}")]) from error
    if not isinstance(body, dict) or not isinstance(body.get("items"), list):
        raise Invalid([("items", 'the body must be {"items": [...]}')])
    extra = sorted(set(body) - {"items"})
    if extra:
        raise Invalid([(name, "is not a field of a batch") for name in extra])
    items: list[Any] = body["items"]
    if not 1 <= len(items) <= MAX_BATCH_ITEMS:
        raise Invalid([("items", f"give 1 to {MAX_BATCH_ITEMS} items, not {len(items)}")])
    return items


async def spend_batch_rate(request: Request, principal: Principal, count: int) -> None:
    """`count` requests of the tenant's per-minute limit, all or none."""
    if principal.rate_per_min is None:
        return
    limit = principal.rate_per_min
    if count > limit:
        # Never admissible, so not a 429: waiting would not help, and a client that retries on 429 would loop.
        raise Invalid(
            [
                (
                    "items",
                    f"a batch of {count} items counts as {count} requests and your plan allows {limit} per minute; "
                    f"send batches of at most {limit} items (docs/operations.md lists each plan's largest batch)",
                )
            ]
        )
    limiter: RateLimiter = request.app.state.rate_limiter
    try:
        state = await limiter.consume(principal.tenant_id, principal.rate_per_min, count=count)
    except RateLimiterUnavailable as error:
        raise Unavailable("the rate limiter is unavailable; retry shortly") from error
    request.state.rate = state
    if not state.allowed:
        raise RateLimited(
            f"rate limit of {state.limit} requests per minute: {state.remaining} left, this batch needs {count}; "
            f"retry in {state.retry_after_s}s",
            state.retry_after_s,
        )


def violations_of(error: ValidationError) -> list[tuple[str, str]]:
    return [(".".join(str(p) for p in e.get("loc", ())) or "item", e.get("msg", "")) for e in error.errors()]


def _item_hash(route: str, item: Any) -> bytes:
    """What the item asked for, without its key: method, route and the item's canonical JSON."""
    asked = {k: v for k, v in item.items() if k != "idempotency_key"} if isinstance(item, dict) else item
    try:
        canonical = orjson.dumps(asked, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as error:  # an integer beyond 64 bits: the tenant's to fix, not a 500
        raise Invalid([("item", f"cannot be taken as JSON: {error}")]) from error
    return request_hash("POST", route, canonical)


def problem_of(error: GatewayError) -> dict[str, Any]:
    found: dict[str, Any] = {
        "type": PROBLEM_BASE + error.kind,
        "title": error.title,
        "status": error.status,
        "detail": error.detail,
    }
    if isinstance(error, Invalid):
        found["errors"] = [{"field": f, "detail": d} for f, d in error.violations]
    return found


def result_of(index: int, outcome: ItemOutcome) -> dict[str, Any]:
    if outcome.job is not None:
        result: dict[str, Any] = {
            "index": index,
            "status": 202,
            "id": outcome.job.id,
            "job_status": STATUS_NAMES.get(outcome.job.status, "pending"),
        }
        if outcome.replayed:
            result["replayed"] = True
        return result
    error = outcome.error or Unavailable("the item was not submitted; retry it")
    return {"index": index, "status": error.status, "problem": problem_of(error)}


async def _answer(
    request: Request,
    principal: Principal,
    operations: OperationsDep,
    route: str,
    build: Callable[[dict[str, Any], bytes], router_pb2.Submission],
) -> Response:
    refuse_batch_key(request)
    items = batch_items(await request.body())
    await spend_batch_rate(request, principal, len(items))
    prepared: list[router_pb2.Submission | GatewayError] = []
    for item in items:
        try:
            if not isinstance(item, dict):
                raise Invalid([("item", "must be an object")])
            # The digest only serves an idempotency key (the submission drops it without one).
            prepared.append(build(item, _item_hash(route, item) if item.get("idempotency_key") else b""))
        except ValidationError as error:
            prepared.append(Invalid(violations_of(error)))
        except GatewayError as error:
            prepared.append(error)
    await refuse_non_public_targets(prepared, operations.target_check)
    outcomes = await BatchSubmitter(operations.router).submit(prepared)
    results = [result_of(i, outcome) for i, outcome in enumerate(outcomes)]
    return Response(orjson.dumps({"results": results}), media_type="application/json")


def _batch_route(path: str, body: type[BaseModel]) -> Callable[[Endpoint], Endpoint]:
    """Declares a batch route: the same answers (BatchResults, REFUSED_BATCH), its own body."""
    return router.post(
        path,
        response_model=BatchResults,
        openapi_extra=request_body(body),
        responses=REFUSED_BATCH,  # type: ignore[arg-type]
    )


@_batch_route(WEBHOOKS_BATCH, WebhookBatchIn)
async def send_webhooks(request: Request, principal: Tenant, operations: OperationsDep) -> Response:
    """Accepts up to 1,000 webhooks, each the body of POST /v1/webhooks plus its own `idempotency_key`.

    Answers 200 with one result per item, in order: 202 and the job (durable) or the item's own
    problem. Each item counts as one request of the rate limit."""

    def build(item: dict[str, Any], digest: bytes) -> router_pb2.Submission:
        body = WebhookBatchItem.model_validate(item)
        return webhook_submission(principal, webhook_input(body, body.idempotency_key or ""), digest)

    return await _answer(request, principal, operations, "/v1/webhooks", build)


@_batch_route(EMAILS_BATCH, EmailBatchIn)
async def send_emails(request: Request, principal: Tenant, operations: OperationsDep) -> Response:
    """Accepts up to 1,000 emails, each the body of POST /v1/emails plus its own `idempotency_key`.

    Answers 200 with one result per item, in order: 202 and the job (durable) or the item's own
    problem (422 `sender-domain-unverified`, 429 `quota-exceeded`, ...). Each item counts as one
    request of the rate limit."""

    def build(item: dict[str, Any], digest: bytes) -> router_pb2.Submission:
        body = EmailBatchItem.model_validate(item)
        priority = PRIORITY_VALUES.get(body.priority or "", common_pb2.PRIORITY_UNSPECIFIED)
        return email_submission(
            principal, email_request(body), priority, body.idempotency_key or "", body.ordering_key or "", digest
        )

    return await _answer(request, principal, operations, "/v1/emails", build)
