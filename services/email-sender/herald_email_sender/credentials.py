"""A tenant's providers as the sender needs them: configs in the tenant's order, and the
sealed credentials opened one at a time, right before the provider call.

Sealed configs are cached per tenant for a short TTL (the ledger's "providers" change
notification evicts a tenant at once; the TTL bounds staleness if one is lost). Only
ciphertext sits in the cache: `ProviderSet.open` decrypts one credential for one call,
and the walk drops it right after (see `walk`). Platform email has a set of its own: one
provider, configured in settings.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from herald.config import Settings
from herald.expiring import ExpiringCache
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.names import PROVIDER_VALUES, TLS_VALUES
from herald.secrets import KeyRing, SecretUnavailable, associated_data
from herald.v1 import common_pb2, ledger_providers_pb2
from herald_email_sender.dispatch import provider_name

PLATFORM_PROVIDER_ID = "platform"


def credential_aad(tenant_id: str, provider: str, row_id: str) -> bytes:
    """Must match how the ledger sealed it (herald_ledger.store.providers.credential_aad)."""
    return associated_data(f"provider:{provider}", tenant_id, row_id)


@dataclass
class ProviderSet:
    """One tenant's providers: configs (highest priority first) and their sealed credentials."""

    tenant_id: str
    configs: list[common_pb2.ProviderConfig]
    sealed: dict[str, bytes] = field(default_factory=dict, repr=False)
    ring: KeyRing | None = field(default=None, repr=False)
    # Platform email: the credential comes from settings, not from a sealed envelope.
    fixed: dict[str, common_pb2.ProviderCredential] = field(default_factory=dict, repr=False)

    def by_id(self, provider_id: str) -> common_pb2.ProviderConfig | None:
        return next((c for c in self.configs if c.id == provider_id), None)

    def open(self, config: common_pb2.ProviderConfig) -> common_pb2.ProviderCredential:
        """Decrypts one credential. Raises SecretUnavailable when it cannot be opened."""
        if config.id in self.fixed:
            return self.fixed[config.id]
        envelope = self.sealed.get(config.id)
        if envelope is None:
            raise SecretUnavailable("no stored credential for this provider")
        if self.ring is None:
            raise SecretUnavailable("no master keys are configured (HERALD_MASTER_KEYS)")
        plaintext = self.ring.open(envelope, credential_aad(self.tenant_id, provider_name(config.provider), config.id))
        credential = common_pb2.ProviderCredential()
        credential.ParseFromString(plaintext)
        return credential


class TenantProviders:
    """The cache of sealed provider configs, per tenant."""

    def __init__(
        self,
        ledger: Ledger,
        ring: KeyRing | None,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ledger = ledger
        self.ring = ring
        self._cache: ExpiringCache[str, ProviderSet] = ExpiringCache(ttl_s, clock=clock)

    def forget(self, tenant_id: str) -> None:
        self._cache.forget(tenant_id)

    async def for_tenant(self, tenant_id: str, fresh: bool = False) -> ProviderSet:
        """The tenant's providers; `fresh`: asked of the ledger again, neither from the cache nor
        from a lookup already under way."""
        if fresh:
            self._cache.forget(tenant_id)
        return await self._cache.load(tenant_id, lambda: self._fetch(tenant_id))

    async def _fetch(self, tenant_id: str) -> ProviderSet:
        found = await self.ledger.providers.GetProviderSecrets(
            ledger_providers_pb2.GetProviderSecretsRequest(tenant_id=tenant_id), timeout=CALL_DEADLINE_S
        )
        return ProviderSet(
            tenant_id=tenant_id,
            configs=[p.config for p in found.providers],
            sealed={p.config.id: p.sealed_credential for p in found.providers},
            ring=self.ring,
        )


def platform_providers(settings: Settings) -> ProviderSet:
    """Herald's own provider, from settings; no configs when none is configured."""
    # The kernel's tables hold the enums as plain ints.
    kind: common_pb2.EmailProvider | None = PROVIDER_VALUES.get(  # type: ignore[assignment]
        settings.platform_email_provider
    )
    if kind is None:
        return ProviderSet(tenant_id="", configs=[])
    config = common_pb2.ProviderConfig(
        id=PLATFORM_PROVIDER_ID, provider=kind, priority=0, base_url=settings.platform_email_base_url
    )
    credential = common_pb2.ProviderCredential(provider=kind, api_key=settings.platform_email_api_key)
    if kind == common_pb2.EMAIL_PROVIDER_SMTP:
        credential.smtp.CopyFrom(
            common_pb2.SmtpSettings(
                host=settings.platform_smtp_host,
                port=settings.platform_smtp_port,
                username=settings.platform_smtp_username,
                password=settings.platform_smtp_password,
                tls_mode=TLS_VALUES[settings.platform_smtp_tls_mode],  # type: ignore[arg-type]
            )
        )
    return ProviderSet(tenant_id="", configs=[config], fixed={PLATFORM_PROVIDER_ID: credential})
