"""Rate limits on the HTTP surface.

`Counted` is the dependency of every route that creates work: it authenticates,
then spends one request of the tenant's per-minute limit (429 with Retry-After
when there is none left). Other tenant routes only look at the limit. Either way
the state is left on the request, and `GatewayMiddleware` puts the RateLimit-* headers
on whatever response goes out, errors included.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Depends, Header, Request

from herald_gateway.auth import ApiKeyAuthenticator, Principal
from herald_gateway.errors import RateLimited, Unavailable
from herald_gateway.rate_limit import RateLimiter, RateLimiterUnavailable, RateState

log = logging.getLogger("herald.gateway.admission")
# Batch routes take a key per item (claimed with each job) and refuse the header themselves.
UNKEYED_PATHS = frozenset({"/v1/webhooks/batch", "/v1/emails/batch"})


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
