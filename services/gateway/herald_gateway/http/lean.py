"""The submit routes without FastAPI's per-request machinery.

`POST /v1/webhooks`, `/v1/emails`, `/v1/events` and the two batch routes are most of the
gateway's traffic. FastAPI still declares them (the OpenAPI document is built from those
declarations, and their endpoint functions are the routes' code), but a request to one of
them is dispatched here, ahead of FastAPI's router: profiled, routing through some eighty
routes, solving the dependencies, the per-request exit stacks and the response model's
re-validation cost more than everything the route itself does.

What FastAPI would do is done here in the same order, with the same pieces, so the answers
are the same: the body is read and parsed as JSON when its content type says JSON (a syntax
error is a 422 before anything else, as in FastAPI); then the route's dependencies
(authentication, and the rate limit for the routes that spend it); then the body is
validated by FastAPI's own field for it (pydantic-core), the endpoint function is called
with what it declares, and its model is serialized by pydantic-core. Errors are the same
problem+json (`problems`), and the scope carries the matched route, the principal and the
rate state, which the gateway middleware and the server span read.
"""

from __future__ import annotations

import email.message
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from herald_gateway.access import counted_tenant
from herald_gateway.auth import Principal
from herald_gateway.errors import GatewayError
from herald_gateway.http import problems
from herald_gateway.http.deps import current_tenant

log = logging.getLogger("herald.gateway.http")

LEAN_PATHS = frozenset({"/v1/webhooks", "/v1/emails", "/v1/events", "/v1/webhooks/batch", "/v1/emails/batch"})
# The dependencies a lean route may declare, and what the endpoint gets for each.
PRINCIPALS: dict[Any, Callable[[Request, str | None], Awaitable[Principal]]] = {
    counted_tenant: counted_tenant,
    current_tenant: current_tenant,
}
_NO_BODY = object()


class Refused(Exception):
    """The request failed validation: FastAPI's error dicts (type, loc, msg, ctx)."""

    def __init__(self, errors: list[Any]) -> None:
        self.errors = errors


@dataclass(frozen=True)
class LeanRoute:
    route: APIRoute
    endpoint: Callable[..., Awaitable[Any]]
    # The endpoint's parameter taking the principal, and the dependency that makes it.
    principal: tuple[str, Callable[[Request, str | None], Awaitable[Principal]]]
    # name -> header, for header parameters (FastAPI's spelling: underscores as hyphens).
    headers: dict[str, bytes]
    body: str | None
    wants: frozenset[str]

    @classmethod
    def of(cls, route: APIRoute) -> LeanRoute:
        """The plan for one route, made once (when the app first runs): a declaration this module does not
        serve fails loudly rather than being served differently from FastAPI."""
        dependant = route.dependant
        principal = None
        for dependency in dependant.dependencies:
            made_by = PRINCIPALS.get(dependency.call)
            if made_by is not None and dependency.name is not None:
                principal = (dependency.name, made_by)
            elif dependency.name != "operations":
                raise TypeError(f"{route.path}: the lean submit path does not serve the dependency {dependency.name}")
        if principal is None or dependant.path_params or dependant.query_params or dependant.cookie_params:
            raise TypeError(f"{route.path}: the lean submit path serves tenant routes without path or query params")
        headers = {field.name: field.alias.replace("_", "-").lower().encode() for field in dependant.header_params}
        body = dependant.body_params[0].name if dependant.body_params else None
        wants = frozenset(inspect.signature(route.endpoint).parameters)
        return cls(route, route.endpoint, principal, headers, body, wants)


def _is_json(content_type: str) -> bool:
    # As FastAPI decides whether a body is JSON (application/json or application/*+json).
    message = email.message.Message()
    message["content-type"] = content_type
    if message.get_content_maintype() != "application":
        return False
    subtype = message.get_content_subtype()
    return subtype == "json" or subtype.endswith("+json")


_JSON_TYPES: dict[str, bool] = {}


def parse_body(body: bytes, content_type: str | None) -> Any:
    """The body as FastAPI hands it to validation: absent, parsed JSON, or the raw bytes."""
    if not body:
        return _NO_BODY
    if content_type is None:
        return body
    is_json = _JSON_TYPES.get(content_type)
    if is_json is None:
        is_json = _is_json(content_type)
        if len(_JSON_TYPES) < 256:
            _JSON_TYPES[content_type] = is_json
    if not is_json:
        return body
    # Python's json, as FastAPI parses: orjson would be faster by a few microseconds, but it reads an
    # integer beyond 64 bits as a float and refuses NaN, which FastAPI takes (the route then decides).
    try:
        return json.loads(body)
    except json.JSONDecodeError as error:
        raise Refused(
            [
                {
                    "type": "json_invalid",
                    "loc": ("body", error.pos),
                    "msg": "JSON decode error",
                    "ctx": {"error": error.msg},
                }
            ]
        ) from error
    except Exception as error:  # nested too deep (RecursionError), not UTF-8 ...: FastAPI's 400
        raise HTTPException(400, "There was an error parsing the body") from error


class LeanSubmitRoutes:
    """Plain ASGI, inside the gateway middleware: serves LEAN_PATHS, passes everything else on."""

    def __init__(self, app: ASGIApp, api: FastAPI, routers: Sequence[APIRouter]) -> None:
        self.app = app
        self.api = api
        self.routes = {
            route.path: LeanRoute.of(route)
            for router in routers
            for route in router.routes
            if isinstance(route, APIRoute) and route.path in LEAN_PATHS and "POST" in (route.methods or ())
        }
        missing = LEAN_PATHS - set(self.routes)
        if missing:
            raise TypeError(f"lean submit routes not declared: {sorted(missing)}")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in LEAN_PATHS:
            plan = self.routes[scope["path"]]
            scope["route"] = plan.route
            scope["endpoint"] = plan.endpoint
            request = Request(scope, receive)
            response = await self._answer(plan, request)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _answer(self, plan: LeanRoute, request: Request) -> Response:
        headers: dict[bytes, str] = {}
        for name, value in request.scope["headers"]:
            headers.setdefault(name, value.decode("latin-1"))
        try:
            parsed = parse_body(await request.body(), headers.get(b"content-type")) if plan.body else _NO_BODY
            name, make_principal = plan.principal
            values: dict[str, Any] = {name: await make_principal(request, headers.get(b"authorization"))}
            if plan.body is not None:
                values[plan.body] = self._validated(plan, parsed)
            for param, header in plan.headers.items():
                values[param] = headers.get(header)
            sub_response = Response()
            del sub_response.headers["content-length"]
            offered = {"operations": self.api.state.operations, "request": request, "response": sub_response, **values}
            result = await plan.endpoint(**{k: v for k, v in offered.items() if k in plan.wants})
        except Refused as refused:
            return problems.validation_problem(refused.errors)
        except GatewayError as error:
            return problems.gateway_problem(error)
        except HTTPException as error:
            return problems.http_problem(error)
        except ClientDisconnect:
            # The caller left before its body arrived: no job, and nobody to answer.
            log.info("client left before sending its body", extra={"route": plan.route.path})
            return Response(status_code=400)
        except Exception:
            log.exception("unexpected error in a submit route", extra={"route": plan.route.path})
            return problems.unexpected_problem()
        if isinstance(result, Response):
            return result
        assert isinstance(result, BaseModel)
        response = Response(
            type(result).__pydantic_serializer__.to_json(result),
            status_code=plan.route.status_code or 200,
            media_type="application/json",
        )
        response.headers.raw.extend(sub_response.headers.raw)
        return response

    @staticmethod
    def _validated(plan: LeanRoute, parsed: Any) -> Any:
        field = plan.route.dependant.body_params[0]
        if parsed is _NO_BODY:
            raise Refused([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
        value, errors = field.validate(parsed, {}, loc=("body",))
        if errors:
            raise Refused(list(errors))
        return value
