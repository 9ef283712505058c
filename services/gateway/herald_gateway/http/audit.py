"""Records the HTTP surface's configuration changes in the audit log (herald_gateway.audit).

Plain ASGI, inside the gateway middleware (so an idempotent replay, which changes nothing,
never reaches it): a call it may record keeps a copy of its request body and of its answer's;
once the route answered 2xx, the entry is appended: the route template, the resource's id (the
path's, or the created one's `id`), the JSON body's fields (secrets redacted), the caller (the
principal or operator the route's dependency authenticated) and the client's address. Reads and
submissions pass straight through at the cost of one method check and one dict lookup.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from herald_gateway.audit import Actor, Auditor, audited_route
from herald_gateway.auth import Principal
from herald_gateway.http.lean import LEAN_PATHS

MAX_KEPT_BYTES = 256 * 1024


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        found = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def actor_of(state: dict[str, Any]) -> Actor | None:
    principal: Principal | None = state.get("principal")
    if principal is not None:
        return Actor("key", principal.key_id, principal.key_name, principal.tenant_id)
    operator: Actor | None = state.get("operator")
    return operator


class AuditTrail:
    def __init__(self, app: ASGIApp, api: Any) -> None:
        self.app = app
        # The FastAPI app: its operations carry the auditor (read per call, set when the gateway starts).
        self.api = api

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] in ("GET", "HEAD")
            or scope["path"] in LEAN_PATHS
            or not scope["path"].startswith(("/v1/", "/admin/v1/"))
        ):
            await self.app(scope, receive, send)
            return
        request_body = bytearray()
        answer = bytearray()
        status = 0

        async def keeping_request() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(request_body) < MAX_KEPT_BYTES:
                request_body.extend(message.get("body", b""))
            return message

        async def keeping_answer(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and len(answer) < MAX_KEPT_BYTES:
                answer.extend(message.get("body", b""))
            await send(message)

        await self.app(scope, keeping_request, keeping_answer)
        route = getattr(scope.get("route"), "path", None)
        if not 200 <= status < 300 or route is None or not audited_route(scope["method"], route):
            return
        actor = actor_of(scope.get("state", {}))
        if actor is None:
            return
        await self._record(scope, route, actor, bytes(request_body), bytes(answer))

    async def _record(self, scope: Scope, route: str, actor: Actor, request_body: bytes, answer: bytes) -> None:
        params: dict[str, str] = dict(scope.get("path_params") or {})
        created = _json_object(answer)
        tenant_id = actor.tenant_id or params.get("tenant_id") or str(created.get("tenant_id") or "")
        resource_id = next((v for k, v in params.items() if k != "tenant_id"), "") or str(
            created.get("id") or params.get("tenant_id") or created.get("tenant_id") or ""
        )
        client = scope.get("client")
        auditor: Auditor = self.api.state.operations.auditor
        await auditor.record(
            actor,
            f"{scope['method']} {route}",
            tenant_id,
            resource_id,
            _json_object(request_body),
            client[0] if client else "",
        )
