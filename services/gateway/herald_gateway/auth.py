"""Who is calling. Tenants present API keys (checked against their SHA-256 in the
ledger, cached briefly so a request costs no ledger call); operators present their own
token (checked the same way, uncached). Neither is accepted where the other belongs."""

from __future__ import annotations

import time
from dataclasses import dataclass

import grpc

from herald.crypto import API_KEY_PREFIX, OPERATOR_TOKEN_PREFIX, hash_api_key
from herald.expiring import ExpiringCache
from herald.grpcio.ledger import Ledger
from herald.ids import TenantId
from herald.plans import effective_limits
from herald.v1 import ledger_tenants_pb2
from herald_gateway.audit import Actor
from herald_gateway.errors import Unauthenticated, Unavailable
from herald_gateway.scopes import ALL_SCOPES, key_scopes

NEGATIVE_TTL_S = 2.0
MAX_CACHED = 100_000


@dataclass(frozen=True)
class Principal:
    tenant_id: TenantId
    plan: int
    key_id: str
    # Requests per minute; None: unlimited.
    rate_per_min: int | None = None
    # Kept (and cached) rather than dropped, so the refusal can say why instead of "unknown key".
    disabled: bool = False
    key_name: str = ""
    # What the key may do (herald_gateway.scopes), checked per call against the route's or RPC's need.
    scopes: frozenset[str] = ALL_SCOPES


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise Unauthenticated("missing Authorization header; send `Authorization: Bearer <api key>`")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("Authorization must be `Bearer <api key>`")
    return token.strip()


class ApiKeyAuthenticator:
    """Caches key lookups for `ttl_s`; the ledger's change notifications (over NATS)
    evict revoked keys and changed tenants at once, so the TTL only bounds staleness
    when a notification is lost. Last-used times are collected here and written by
    `flush_uses` in one batch, never one database write per request."""

    def __init__(self, ledger: Ledger, ttl_s: float) -> None:
        self.ledger = ledger
        self.ttl_s = ttl_s
        self._cache: ExpiringCache[bytes, Principal | None] = ExpiringCache(ttl_s, MAX_CACHED)
        self._uses: dict[str, float] = {}
        # Tenants erased while this gateway runs: a lookup answered just before the erasure
        # committed is not cached (nor believed) after it.
        self._erased: set[str] = set()

    def forget_key(self, key_id: str) -> None:
        self._cache.forget_where(lambda _digest, principal: principal is not None and principal.key_id == key_id)

    def forget_tenant(self, tenant_id: str) -> None:
        self._cache.forget_where(lambda _digest, principal: principal is not None and principal.tenant_id == tenant_id)

    def forget_erased(self, tenant_id: str) -> None:
        self._erased.add(tenant_id)
        self.forget_tenant(tenant_id)

    async def flush_uses(self) -> None:
        uses, self._uses = self._uses, {}
        if not uses:
            return
        request = ledger_tenants_pb2.TouchApiKeysRequest()
        for key_id, at in uses.items():
            use = request.uses.add(key_id=key_id)
            use.used_at.FromSeconds(int(at))
        try:
            await self.ledger.tenants.TouchApiKeys(request)
        except grpc.aio.AioRpcError:
            for key_id, at in uses.items():
                self._uses[key_id] = max(at, self._uses.get(key_id, 0.0))

    async def authenticate(self, authorization: str | None) -> Principal:
        token = bearer_token(authorization)
        if not token.startswith(API_KEY_PREFIX):
            raise Unauthenticated("not a Herald API key")
        digest = hash_api_key(token)
        principal = await self._cache.load(digest, lambda: self._lookup(digest), self._lifetime)
        if principal is not None and principal.tenant_id in self._erased:
            principal = None
        if principal is None:
            raise Unauthenticated("unknown or revoked API key")
        if principal.disabled:
            raise Unauthenticated(
                "this API key's tenant is disabled; an operator can enable it again "
                "(the operator console, or `herald tenant disable --enable <tenant id>`)"
            )
        self._uses[principal.key_id] = time.time()
        return principal

    def _lifetime(self, principal: Principal | None) -> float | None:
        """An unknown key is remembered briefly: it may be created in a moment."""
        return None if principal is not None else min(self.ttl_s, NEGATIVE_TTL_S)

    async def _lookup(self, digest: bytes) -> Principal | None:
        try:
            found = await self.ledger.tenants.AuthenticateApiKey(
                ledger_tenants_pb2.AuthenticateApiKeyRequest(key_hash=digest)
            )
        except grpc.aio.AioRpcError as error:
            raise Unavailable("cannot check the API key right now; retry shortly") from error
        if not found.found:
            return None
        tenant = found.tenant
        if tenant.disabled:
            return Principal(TenantId(tenant.id), tenant.plan, found.key_id, disabled=True)
        limits = effective_limits(
            tenant.plan,
            tenant.rate_per_min if tenant.HasField("rate_per_min") else None,
            tenant.webhooks_per_month if tenant.HasField("webhooks_per_month") else None,
            tenant.emails_per_month if tenant.HasField("emails_per_month") else None,
        )
        return Principal(
            TenantId(tenant.id),
            tenant.plan,
            found.key_id,
            limits.rate_per_min,
            key_name=found.key_name,
            scopes=key_scopes(found.scopes),
        )


class OperatorAuthenticator:
    """Named operators, each with a token of its own (`herald operator create`), checked against
    its SHA-256 in the ledger on every call: operators' calls are few, and a revoked operator is
    refused at once, on every gateway, with no cache to evict."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def authenticate(self, authorization: str | None) -> Actor:
        token = bearer_token(authorization)
        if not token.startswith(OPERATOR_TOKEN_PREFIX):
            raise Unauthenticated("the admin API needs an operator's token")
        try:
            found = await self.ledger.tenants.AuthenticateOperator(
                ledger_tenants_pb2.AuthenticateOperatorRequest(token_hash=hash_api_key(token))
            )
        except grpc.aio.AioRpcError as error:
            raise Unavailable("cannot check the operator token right now; retry shortly") from error
        if not found.found:
            raise Unauthenticated("unknown or revoked operator token")
        return Actor("operator", found.operator.id, found.operator.name)

    async def may_see(self, authorization: str | None) -> bool:
        """Whether a caller is an operator (gRPC reflection shows AdminService to operators only)."""
        try:
            await self.authenticate(authorization)
        except (Unauthenticated, Unavailable):
            return False
        return True
