"""The gateway's one middleware, plain ASGI: body-size guard, Idempotency-Key protocol
for the non-job POST routes, RateLimit-* headers on every answer, and the latency
metric. (The HTTP server span wraps every app: herald.telemetry.http_spans.)

Plain ASGI rather than Starlette's `BaseHTTPMiddleware`: that one runs each request in
an extra task with memory streams for the body and the response, which the profile of
`make bench` showed as a fifth of the gateway's CPU per request.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from herald.http_limits import body_too_large_detail
from herald.telemetry.http_spans import HTTP_METHODS
from herald.telemetry.metrics import HTTP_SECONDS
from herald_gateway.access import UNKEYED_PATHS, rate_headers
from herald_gateway.auth import ApiKeyAuthenticator
from herald_gateway.errors import GatewayError
from herald_gateway.http import problems
from herald_gateway.idempotency import Idempotency, Replay, request_hash, withheld_secret, without_secret
from herald_gateway.rate_limit import RateLimiter, RateState
from herald_gateway.scopes import ALL_SCOPES, path_scope, require

log = logging.getLogger("herald.gateway.http")

MAX_REQUEST_BYTES = 8 * 1024 * 1024
# Routes that send their Idempotency-Key with the job they create (see herald_gateway.idempotency),
# and the batch routes, whose items carry their own keys and which refuse the header.
JOB_ROUTES = frozenset({"/v1/webhooks", "/v1/emails"}) | UNKEYED_PATHS


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


class GatewayMiddleware:
    def __init__(
        self, app: ASGIApp, tenants: ApiKeyAuthenticator, rate_limiter: RateLimiter, idempotency: Idempotency
    ) -> None:
        self.app = app
        self.tenants = tenants
        self.rate_limiter = rate_limiter
        self.idempotency = idempotency

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        declared = _header(scope, b"content-length")
        if declared is not None and (
            not (declared.isascii() and declared.isdigit()) or int(declared) > MAX_REQUEST_BYTES
        ):
            detail = body_too_large_detail(MAX_REQUEST_BYTES)
            too_large = problems.problem(413, "payload-too-large", "Payload too large", detail)
            await too_large(scope, receive, send)
            self._observe(scope, 413, started)
            return

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                state = await self._rate_state(scope)
                if state is not None:
                    message["headers"] = [
                        *message.get("headers", []),
                        *((k.lower().encode(), v.encode()) for k, v in rate_headers(state).items()),
                    ]
            await send(message)

        try:
            key = _header(scope, b"idempotency-key")
            path: str = scope["path"]
            if scope["method"] == "POST" and key is not None and path.startswith("/v1/") and path not in JOB_ROUTES:
                await self._idempotent(scope, receive, send_with_headers, key)
            else:
                await self.app(scope, receive, send_with_headers)
        finally:
            self._observe(scope, status, started)

    async def _rate_state(self, scope: Scope) -> RateState | None:
        state: dict[str, Any] = scope.get("state", {})
        rate: RateState | None = state.get("rate")
        if rate is None and scope["path"].startswith("/v1/"):
            principal = state.get("principal")
            if principal is not None and principal.rate_per_min is not None:
                rate = await self.rate_limiter.peek(principal.tenant_id, principal.rate_per_min)
        return rate

    @staticmethod
    def _observe(scope: Scope, status: int, started: float) -> None:
        # The router records the route it matched in the scope: label by its template, never the raw path.
        route = getattr(scope.get("route"), "path", None) or "unmatched"
        method = scope["method"] if scope["method"] in HTTP_METHODS else "_OTHER"
        HTTP_SECONDS.labels("gateway", method, route, str(status)).observe(time.perf_counter() - started)

    async def _idempotent(self, scope: Scope, receive: Receive, send: Send, key: str) -> None:
        """Claim the key, run the route, store its answer (2xx-4xx) or let the key go (5xx, 429, crash)."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left before sending its body: nothing to do
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        try:
            principal = await self.tenants.authenticate(_header(scope, b"authorization"))
            # Before the claim: a replay answers without reaching the route and its scope check.
            if principal.scopes is not ALL_SCOPES:
                require(principal.scopes, path_scope(scope["method"], scope["path"]))
            replay = await self.idempotency.begin(
                principal.tenant_id, key, request_hash(scope["method"], scope["path"], bytes(body))
            )
        except GatewayError as error:
            await problems.gateway_problem(error)(scope, receive, send)
            return
        if replay is not None:
            await self._replay(scope, receive, send, replay)
            return
        delivered = False

        async def replay_body() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        start: Message | None = None
        content = bytearray()

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                content.extend(message.get("body", b""))

        try:
            await self.app(scope, replay_body, capture)
        except BaseException:
            await self.idempotency.abandon(principal.tenant_id, key)
            raise
        assert start is not None
        status = start["status"]
        if status >= 500 or status == 429:
            # Nothing was done (or we cannot know): let the client try the same key again.
            await self.idempotency.abandon(principal.tenant_id, key)
        else:
            try:
                stored = without_secret(scope["path"], status, bytes(content))
                await self.idempotency.complete(principal.tenant_id, key, status, stored)
            except Exception as error:
                # The work is done: the client gets its real answer. The key stays claimed until
                # the claim expires (a retry meanwhile answers 409), never a 500 for done work.
                log.warning("idempotent response not stored", extra={"error": repr(error)})
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(content)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": bytes(content), "more_body": False})

    @staticmethod
    async def _replay(scope: Scope, receive: Receive, send: Send, replay: Replay) -> None:
        withheld = withheld_secret(scope["path"], replay)
        if withheld is not None:
            refusal = problems.problem(409, "secret-not-replayed", "Secret not replayed", **withheld)
            refusal.headers["Idempotent-Replayed"] = "true"
            await refusal(scope, receive, send)
            return
        # Every error the gateway answers is problem+json; a replayed one says so too.
        media_type = problems.MEDIA_TYPE if replay.status_code >= 400 else "application/json"
        headers = [
            (b"content-type", media_type.encode()),
            (b"content-length", str(len(replay.body)).encode()),
            (b"idempotent-replayed", b"true"),
        ]
        await send({"type": "http.response.start", "status": replay.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": replay.body, "more_body": False})
