"""Webhook URLs checked when they are submitted (direct webhooks, subscription targets).

The rule is the webhook-sender's target guard (`herald.webhooks.target_guard`): only
http(s), and a host that is, or resolves to, a private, loopback, link-local, cloud-metadata
or otherwise non-public address is refused unless the operator allow-listed it
(HERALD_TARGET_ALLOW; HERALD_WEBHOOK_ALLOW_LOOPBACK for loopback). The tenant gets a 422
problem+json at once instead of a job that can only fail. The sender checks again when it
connects, which is what stops DNS rebinding; this check is the early, friendly one.

Email providers' endpoints (a base URL, an SMTP relay) are checked by the same guard with
`provider_problems`, which also refuses names that do not resolve (see there).

A webhook URL whose name does not resolve at all is accepted here (it may well resolve by the time the
delivery runs; the sender retries DNS failures). The price: a tenant can tell a name that
resolves to an internal address (refused) from one that does not resolve (accepted), a small
window on internal DNS that refusing unresolvable names would close at the cost of refusing
receivers whose DNS is not live yet. Resolutions are cached for a few seconds, answers and
failures alike, so a burst of webhooks to one host costs one lookup; so is each URL's verdict
(the parse and the address checks cost more than the rest of a webhook's validation together).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from herald.config import Settings
from herald.expiring import MISSING, ExpiringCache
from herald.v1 import common_pb2
from herald.webhooks.target_guard import (
    PROVIDER_REFUSED,
    AllowList,
    Resolver,
    TargetGuard,
    check_host_resolved,
    system_resolver,
)

CACHE_TTL_S = 10.0
CACHE_ENTRIES = 10_000


class CachedResolver:
    """A resolver that remembers each (host, port) answer, or failure, for `ttl_s`."""

    def __init__(
        self, inner: Resolver = system_resolver, ttl_s: float = CACHE_TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.inner = inner
        self._answers: ExpiringCache[tuple[str, int], Sequence[str] | OSError] = ExpiringCache(
            ttl_s, CACHE_ENTRIES, clock
        )

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        key = (host, port)
        answer = self._answers.get(key)
        if answer is MISSING:
            try:
                answer = list(await self.inner(host, port))
            except OSError as error:
                answer = error
            self._answers.put(key, answer)
        if isinstance(answer, OSError):
            raise answer
        return answer


class TargetCheck:
    def __init__(
        self, guard: TargetGuard, ttl_s: float = CACHE_TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.guard = guard
        # The URLs lately found fit to submit. The verdict depends on the URL, the allow list
        # (fixed) and DNS, whose answers are cached as long; a refusal is checked again each time.
        self._accepted: ExpiringCache[str, bool] = ExpiringCache(ttl_s, CACHE_ENTRIES, clock)

    @classmethod
    def from_settings(cls, settings: Settings, resolver: Resolver | None = None) -> TargetCheck:
        allow = AllowList.parse(settings.target_allow, loopback=settings.webhook_allow_loopback)
        return cls(TargetGuard(allow, resolver or CachedResolver()))

    async def problems(self, url: str, field: str = "url") -> list[tuple[str, str]]:
        """[(field, why)] when the URL is refused; [] when it may be submitted."""
        if self._accepted.get(url) is not MISSING:
            return []
        problem = await self.guard.check_url_resolved(url)
        if problem is None or problem.code == "unresolvable":
            self._accepted.put(url, True)
            return []
        return [(field, f"webhook target refused: {problem.detail}")]

    async def provider_problems(self, base_url: str, smtp: common_pb2.SmtpSettings | None) -> list[tuple[str, str]]:
        """A provider's endpoints (its base URL, its SMTP relay) under the same rule, stricter in
        one way: a name that does not resolve is refused too, and every refusal reads the same,
        so the answer says nothing about what lives at an address or which names resolve."""
        found = []
        if base_url and await self.guard.check_url_resolved(base_url) is not None:
            found.append(("base_url", PROVIDER_REFUSED))
        if smtp is not None and smtp.host and await check_host_resolved(self.guard, smtp.host, smtp.port) is not None:
            found.append(("smtp.host", PROVIDER_REFUSED))
        return found
