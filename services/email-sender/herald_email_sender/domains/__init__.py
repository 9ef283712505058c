"""Sending domains: registered with the tenant's chosen provider through its domain API,
which answers the DNS records the tenant must publish, then verified on request.

Usage (gateway/ledger side): `register` once, store `provider_domain_id`, show `records`;
`verify` when the tenant says the records are published (and `get` to refresh); refuse
sends from the domain while `verified` is false. A `DomainError` with `transient` set is
worth retrying (the provider was unreachable or busy); otherwise show its message.

Postmark: its domains API takes the account token, not the server token the tenant
registered for sending. The tenant stores it with the provider (`account_token` on the
credential), sealed in the same envelope as the server token, opened only for the call.
SMTP has no domain API: a domain sent through SMTP cannot be registered here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from herald_email_sender.domains import postmark, resend, sendgrid
from herald_email_sender.domains.model import DnsRecord, DomainError, DomainState, RecordStatus

# Each provider kind's domain API (`_key` refuses a kind without one before any call).
_APIS: Mapping[int, ModuleType] = {
    common_pb2.EMAIL_PROVIDER_SENDGRID: sendgrid,
    common_pb2.EMAIL_PROVIDER_RESEND: resend,
    common_pb2.EMAIL_PROVIDER_POSTMARK: postmark,
}

__all__ = ["DnsRecord", "DomainError", "DomainState", "RecordStatus", "get", "register", "verify"]


async def register(
    client: ReceiverClient,
    config: common_pb2.ProviderConfig,
    credential: common_pb2.ProviderCredential,
    domain: str,
) -> DomainState:
    """Registers `domain` with the provider; answers its DNS records (usually not verified yet)."""
    kind, key = _key(config, credential)
    options: Mapping[str, str] = config.options
    found: DomainState = await _APIS[kind].register(client, key, domain, config.base_url, options)
    return found


async def verify(
    client: ReceiverClient,
    config: common_pb2.ProviderConfig,
    credential: common_pb2.ProviderCredential,
    provider_domain_id: str,
) -> DomainState:
    """Asks the provider to check the DNS records now; answers the domain's state after the check.
    (Resend checks asynchronously: a domain may read pending here and verified a little later.)"""
    kind, key = _key(config, credential)
    found: DomainState = await _APIS[kind].verify(client, key, provider_domain_id, config.base_url)
    return found


async def get(
    client: ReceiverClient,
    config: common_pb2.ProviderConfig,
    credential: common_pb2.ProviderCredential,
    provider_domain_id: str,
) -> DomainState:
    """The domain's state as the provider has it, without asking for a new check."""
    kind, key = _key(config, credential)
    found: DomainState = await _APIS[kind].get(client, key, provider_domain_id, config.base_url)
    return found


def _key(config: common_pb2.ProviderConfig, credential: common_pb2.ProviderCredential) -> tuple[int, str]:
    """Which provider, and which token its domain API takes. Refuses before any call."""
    kind = config.provider
    if credential.provider != kind:
        raise DomainError("the credential is for another provider kind")
    if kind == common_pb2.EMAIL_PROVIDER_POSTMARK:
        if not credential.account_token:
            raise DomainError(
                "Postmark's domains API needs the account token (X-Postmark-Account-Token): "
                "store it with the provider (PATCH /v1/providers/{id} with account_token)"
            )
        return kind, credential.account_token
    if kind in (common_pb2.EMAIL_PROVIDER_SENDGRID, common_pb2.EMAIL_PROVIDER_RESEND):
        return kind, credential.api_key
    raise DomainError("this provider has no domain API: verify the domain's DNS with the SMTP relay's operator")
