"""RFC 9457 problem details for every error the HTTP surface returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from herald_gateway.errors import GatewayError, Invalid, OutOfScope, RateLimited, Unauthenticated
from herald_gateway.http.schemas.common import PATTERN_MEANINGS

PROBLEM_BASE = "https://herald.dev/problems/"
MEDIA_TYPE = "application/problem+json"


def problem(status: int, kind: str, title: str, detail: str, **extra: Any) -> Response:
    body = {"type": PROBLEM_BASE + kind, "title": title, "status": status, "detail": detail, **extra}
    headers = {"WWW-Authenticate": 'Bearer realm="herald"'} if status == 401 else None
    return Response(orjson.dumps(body), status_code=status, media_type=MEDIA_TYPE, headers=headers)


def _meaning(error: dict[str, Any]) -> str:
    """pydantic's message, or what a pattern of ours means rather than the pattern itself."""
    if error.get("type") == "string_pattern_mismatch":
        meaning = PATTERN_MEANINGS.get(str((error.get("ctx") or {}).get("pattern")))
        if meaning:
            return meaning
    return str(error.get("msg", ""))


def gateway_problem(exc: GatewayError) -> Response:
    extra: dict[str, Any] = {}
    if isinstance(exc, Invalid):
        extra["errors"] = [{"field": f, "detail": d} for f, d in exc.violations]
    if isinstance(exc, OutOfScope):
        extra["missing_scope"] = exc.scope
    response = problem(exc.status, exc.kind, exc.title, exc.detail, **extra)
    if isinstance(exc, RateLimited):
        response.headers["Retry-After"] = str(exc.retry_after_s)
    return response


def _body_not_json(error: dict[str, Any]) -> bool:
    """The whole body refused as not an object because it arrived as bytes: no JSON Content-Type."""
    return tuple(error.get("loc", ())) == ("body",) and isinstance(error.get("input"), bytes | bytearray)


def _field(error: dict[str, Any]) -> dict[str, str]:
    if error.get("type") == "json_invalid":
        # loc is ("body", <character offset>): the offset is no field, it goes in the words.
        position = next((p for p in error.get("loc", ())[1:] if isinstance(p, int)), None)
        reason = str((error.get("ctx") or {}).get("error") or "not JSON")
        where = f" at character {position}" if position is not None else ""
        return {"field": "", "detail": f"the body is not valid JSON{where}: {reason}"}
    if _body_not_json(error):
        return {
            "field": "",
            "detail": "the body was not read as JSON: send it with the header Content-Type: application/json",
        }
    return {"field": ".".join(str(p) for p in error.get("loc", ()) if p != "body"), "detail": _meaning(error)}


def validation_problem(errors: Sequence[Any]) -> Response:
    """The 422 of a request FastAPI's (or the lean submit routes') validation refused."""
    fields = [_field(e) for e in errors]
    detail = "; ".join(f"{e['field'] or 'body'}: {e['detail']}" for e in fields) or "malformed request"
    return problem(422, Invalid.kind, Invalid.title, detail, errors=fields)


def http_problem(exc: HTTPException) -> Response:
    kind = {404: "not-found", 405: "method-not-allowed", 413: "payload-too-large"}.get(exc.status_code, "http")
    return problem(exc.status_code, kind, str(exc.detail), str(exc.detail))


def unexpected_problem() -> Response:
    return problem(500, "internal", "Internal error", "an unexpected error occurred; it has been logged")


def install(app: FastAPI) -> None:
    async def gateway_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, GatewayError)
        return gateway_problem(exc)

    async def validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return validation_problem(exc.errors())

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return http_problem(exc)

    async def unexpected(request: Request, exc: Exception) -> Response:
        return unexpected_problem()

    app.add_exception_handler(GatewayError, gateway_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)


PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "description": "RFC 9457 problem details. `type` names the problem (a URL under " + PROBLEM_BASE + "), "
    "`status` repeats the HTTP status.",
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "errors": {
            "description": "Invalid requests: each field that was wrong and why.",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["field", "detail"],
                "properties": {"field": {"type": "string"}, "detail": {"type": "string"}},
            },
        },
    },
}
_PROBLEM_CONTENT = {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
# Every operation may answer these; the ranges cover what each route adds (404, 409, 503 ...).
_ERROR_RESPONSES = {
    "422": "Invalid request: `errors` lists each field that was wrong and why.",
    "4XX": "Refused, as problem details: 401 no valid key, 404 not found (or another tenant's), 405 method not "
    "allowed, 409 conflict, 413 body over 8 MiB, 429 rate limit or quota (with Retry-After) ...",
    "5XX": "Not done, as problem details: 503 a dependency is unavailable, retry later (with the same "
    "Idempotency-Key); 500 a bug, logged.",
}


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """Declares the problem+json answers on every operation of an OpenAPI document, in place of
    FastAPI's own 422 (application/json HTTPValidationError), which the gateway never sends."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["Problem"] = PROBLEM_SCHEMA
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in _ERROR_RESPONSES.items():
                responses[status] = {"description": description, "content": _PROBLEM_CONTENT}
    for unused in ("HTTPValidationError", "ValidationError"):
        components.pop(unused, None)
    return schema


__all__ = ["Unauthenticated", "document", "install", "problem"]
