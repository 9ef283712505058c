"""RFC 9457 problem details for every error the HTTP surface returns."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from herald_gateway.errors import GatewayError, Invalid, RateLimited, Unauthenticated

PROBLEM_BASE = "https://herald.dev/problems/"
MEDIA_TYPE = "application/problem+json"


def problem(status: int, kind: str, title: str, detail: str, **extra: Any) -> Response:
    body = {"type": PROBLEM_BASE + kind, "title": title, "status": status, "detail": detail, **extra}
    headers = {"WWW-Authenticate": 'Bearer realm="herald"'} if status == 401 else None
    return Response(orjson.dumps(body), status_code=status, media_type=MEDIA_TYPE, headers=headers)


def install(app: FastAPI) -> None:
    async def gateway_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, GatewayError)
        extra: dict[str, Any] = {}
        if isinstance(exc, Invalid):
            extra["errors"] = [{"field": f, "detail": d} for f, d in exc.violations]
        response = problem(exc.status, exc.kind, exc.title, exc.detail, **extra)
        if isinstance(exc, RateLimited):
            response.headers["Retry-After"] = str(exc.retry_after_s)
        return response

    async def validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = [
            {"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "detail": e.get("msg", "")}
            for e in exc.errors()
        ]
        detail = "; ".join(f"{e['field'] or 'body'}: {e['detail']}" for e in errors) or "malformed request"
        return problem(422, Invalid.kind, Invalid.title, detail, errors=errors)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        kind = {404: "not-found", 405: "method-not-allowed", 413: "payload-too-large"}.get(exc.status_code, "http")
        return problem(exc.status_code, kind, str(exc.detail), str(exc.detail))

    async def unexpected(request: Request, exc: Exception) -> Response:
        return problem(500, "internal", "Internal error", "an unexpected error occurred; it has been logged")

    app.add_exception_handler(GatewayError, gateway_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)


__all__ = ["Unauthenticated", "install", "problem"]
