"""What the guard answers: a refusal's code and tenant-safe detail, and the errors raised at send time."""

from __future__ import annotations

from dataclasses import dataclass

import httpcore
import httpx

SCHEMES = frozenset({"http", "https"})

# What tenants are told. Deliberately the same whether a name does not resolve or resolves
# somewhere private, and never the address itself: the refusal must not become a way to map
# Herald's internal DNS.
NAME_NOT_PUBLIC = "the host name does not resolve to a public address"
NOT_HTTP = "must be an http or https URL"
MALFORMED = "must be an absolute http or https URL with a valid host name and port"


# The one answer a tenant gets for a refused provider endpoint, whatever the reason (non-public,
# unresolvable, metadata): a validation message that varied would map Herald's network for it.
PROVIDER_REFUSED = "Herald does not connect to this address: give the provider's public endpoint"


@dataclass(frozen=True)
class Problem:
    """Why a URL was refused: `code` for programs and logs, `detail` safe to show the tenant."""

    code: str  # "scheme", "malformed", "non_public" or "unresolvable"
    detail: str

    def __str__(self) -> str:
        return self.detail


class TargetRefused(httpx.RequestError):
    """Raised at send time for a target the guard refuses: a policy decision, so retrying cannot help."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"webhook target refused: {problem.detail}")
        self.problem = problem


class ResolutionFailed(Exception):
    """The name did not resolve (or not in time): at send time that is a transient network error."""


class NameNotResolved(httpcore.ConnectError):
    """What the guarded transport raises when the name did not resolve: a connect error to
    httpx (retried), recognisable as a DNS failure in the attempt record."""
