"""The door every surface runs, once per request: authenticate the API key (from the key
cache), then spend one request of the tenant's per-minute rate limit. HTTP routes that create
work depend on `Counted`, the gRPC servicer calls `spend` itself, the streamed batches spend a
chunk's worth at once; all through `spend` here. (Not "admission": that is the ledger's decision,
in the transaction that writes the jobs, whether each one is accepted.)

Other tenant routes only authenticate. Either way the rate state is left on the request, and
`GatewayMiddleware` puts the RateLimit-* headers on whatever response goes out, errors included;
gRPC sends them as trailing metadata.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from herald_gateway.auth import ApiKeyAuthenticator, Principal
from herald_gateway.errors import RateLimited, Unavailable
from herald_gateway.rate_limit import RateLimiter, RateLimiterUnavailable, RateState
from herald_gateway.scopes import require_route_scope

# Batch routes take a key per item (claimed with each job) and refuse the header themselves.
UNKEYED_PATHS = frozenset({"/v1/webhooks/batch", "/v1/emails/batch", "/v1/events/batch"})


async def spend(limiter: RateLimiter, principal: Principal) -> RateState | None:
    """One request of the tenant's limit: its state afterwards (None: the tenant is unlimited).
    A state that is not `allowed` is refused by `refuse_spent` once the caller has recorded it."""
    if principal.rate_per_min is None:
        return None
    try:
        return await limiter.consume(principal.tenant_id, principal.rate_per_min)
    except RateLimiterUnavailable as error:
        raise Unavailable("the rate limiter is unavailable; retry shortly") from error


def refuse_spent(state: RateState) -> None:
    if not state.allowed:
        raise RateLimited(
            f"rate limit of {state.limit} requests per minute reached; retry in {state.retry_after_s}s",
            state.retry_after_s,
        )


async def counted_tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    authenticator: ApiKeyAuthenticator = request.app.state.tenants
    principal = await authenticator.authenticate(authorization)
    request.state.principal = principal
    require_route_scope(request.scope, principal.scopes)
    state = await spend(request.app.state.rate_limiter, principal)
    if state is not None:
        request.state.rate = state
        refuse_spent(state)
    return principal


Counted = Annotated[Principal, Depends(counted_tenant)]


def rate_headers(state: RateState) -> dict[str, str]:
    return {
        "RateLimit-Limit": str(state.limit),
        "RateLimit-Remaining": str(state.remaining),
        "RateLimit-Reset": str(state.reset_s),
    }
