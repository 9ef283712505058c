"""Rate limits and idempotency keys on the HTTP surface.

`Counted` is the dependency of every route that creates work: it authenticates,
then spends one request of the tenant's per-minute limit (429 with Retry-After
when there is none left). Other tenant routes only look at the limit. Either way
the state is left on the request, and the middleware puts the RateLimit-* headers
on whatever response goes out, errors included.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Header, Request
from starlette.responses import Response

from herald_gateway.auth import ApiKeyAuthenticator, Principal
from herald_gateway.errors import GatewayError, RateLimited, Unavailable
from herald_gateway.http import problems
from herald_gateway.idempotency import Idempotency, request_hash
from herald_gateway.rate_limit import RateLimiter, RateLimiterUnavailable, RateState

log = logging.getLogger("herald.gateway.admission")


async def counted_tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    authenticator: ApiKeyAuthenticator = request.app.state.tenants
    principal = await authenticator.authenticate(authorization)
    request.state.principal = principal
    if principal.rate_per_min is None:
        return principal
    limiter: RateLimiter = request.app.state.rate_limiter
    try:
        state = await limiter.consume(principal.tenant_id, principal.rate_per_min)
    except RateLimiterUnavailable as error:
        raise Unavailable("the rate limiter is unavailable; retry shortly") from error
    request.state.rate = state
    if not state.allowed:
        raise RateLimited(
            f"rate limit of {state.limit} requests per minute reached; retry in {state.retry_after_s}s",
            state.retry_after_s,
        )
    return principal


Counted = Annotated[Principal, Depends(counted_tenant)]


def rate_headers(state: RateState) -> dict[str, str]:
    return {
        "RateLimit-Limit": str(state.limit),
        "RateLimit-Remaining": str(state.remaining),
        "RateLimit-Reset": str(state.reset_s),
    }


async def rate_limit_headers(
    request: Request, response: Response, authenticator: ApiKeyAuthenticator, limiter: RateLimiter
) -> None:
    state: RateState | None = getattr(request.state, "rate", None)
    if state is None and request.url.path.startswith("/v1/"):
        principal = getattr(request.state, "principal", None)
        if principal is not None and principal.rate_per_min is not None:
            state = await limiter.peek(principal.tenant_id, principal.rate_per_min)
    if state is not None:
        response.headers.update(rate_headers(state))


async def with_idempotency(
    request: Request,
    call_next: Callable[[Request], Awaitable[Response]],
    authenticator: ApiKeyAuthenticator,
    idempotency: Idempotency,
) -> Response:
    """Wraps a tenant POST that carries an Idempotency-Key."""
    key = request.headers.get("idempotency-key")
    if request.method != "POST" or key is None or not request.url.path.startswith("/v1/"):
        return await call_next(request)
    try:
        principal = await authenticator.authenticate(request.headers.get("authorization"))
        body = await request.body()
        digest = request_hash(request.method, request.url.path, body)
        replay = await idempotency.begin(principal.tenant_id, key, digest)
    except GatewayError as error:
        return problems.problem(error.status, error.kind, error.title, error.detail)
    if replay is not None:
        return Response(
            replay.body,
            status_code=replay.status_code,
            # Every error the gateway answers is problem+json; a replayed one says so too.
            media_type=problems.MEDIA_TYPE if replay.status_code >= 400 else "application/json",
            headers={"Idempotent-Replayed": "true"},
        )
    try:
        response = await call_next(request)
    except BaseException:
        await idempotency.abandon(principal.tenant_id, key)
        raise
    if response.status_code >= 500 or response.status_code == 429:
        # Nothing was done (or we cannot know): let the client try the same key again.
        await idempotency.abandon(principal.tenant_id, key)
        return response
    chunks = [chunk async for chunk in response.body_iterator]  # type: ignore[attr-defined]
    content = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
    try:
        await idempotency.complete(principal.tenant_id, key, response.status_code, content)
    except Exception as error:
        # The work is done: the client gets its real answer. The key stays claimed until
        # the claim expires (a retry meanwhile answers 409), never a 500 for done work.
        log.warning("idempotent response not stored", extra={"error": repr(error)})
    return Response(
        content,
        status_code=response.status_code,
        headers={k: v for k, v in response.headers.items() if k.lower() != "content-length"},
    )
