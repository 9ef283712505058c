"""Provider credentials and webhook signing secrets: sealed on the way in, never
returned in clear (only a masked preview, or the sealed envelope to a sender)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.crypto import new_webhook_secret
from herald.grpcio.errors import abort_already_exists, abort_failed_precondition, abort_invalid
from herald.ids import new_id
from herald.secrets import KeyRing, Sealed, SecretUnavailable, mask
from herald.v1 import common_pb2, ledger_providers_pb2
from herald_ledger.convert import provider_to_proto, webhook_secret_status
from herald_ledger.notifications import PROVIDERS, WEBHOOK_SECRETS, Notifier
from herald_ledger.rpc.common import Context, Rpcs, T, found, require_id, tenant_list_rpc
from herald_ledger.store import providers as provider_store
from herald_ledger.store import webhook_secrets as secret_store
from herald_ledger.store.codes import PROVIDER_FROM_PROTO, TLS_FROM_PROTO
from herald_ledger.store.reencryption import reencrypt_all

log = logging.getLogger("herald.ledger.secrets")
MAX_PRIORITY = 1_000_000


def credential_problems(credential: common_pb2.ProviderCredential, field: str) -> list[tuple[str, str]]:
    provider = PROVIDER_FROM_PROTO.get(credential.provider)
    if provider is None:
        return [(f"{field}.provider", "must be sendgrid, resend, postmark or smtp")]
    if provider == "smtp":
        smtp = credential.smtp
        problems = []
        if not smtp.host or len(smtp.host) > 255:
            problems.append((f"{field}.smtp.host", "is required"))
        if not 1 <= smtp.port <= 65535:
            problems.append((f"{field}.smtp.port", "must be 1-65535"))
        if smtp.tls_mode not in TLS_FROM_PROTO:
            problems.append((f"{field}.smtp.tls_mode", "must be starttls, implicit or none"))
        if len(smtp.username) > 255 or len(smtp.password) > 1024:
            problems.append((f"{field}.smtp", "username or password too long"))
        return problems
    problems = []
    if not credential.api_key or len(credential.api_key) > 1024 or not credential.api_key.isprintable():
        problems.append((f"{field}.api_key", "is required (at most 1024 printable characters)"))
    problems += account_token_problems(provider, credential.account_token, f"{field}.account_token")
    return problems


def account_token_problems(provider: str, token: str, field: str) -> list[tuple[str, str]]:
    if not token:
        return []
    if provider != "postmark":
        return [(field, "only Postmark providers take an account token")]
    if len(token) > 1024 or not token.isprintable():
        return [(field, "at most 1024 printable characters")]
    return []


def clear_columns(credential: common_pb2.ProviderCredential) -> dict[str, Any]:
    """The parts of a credential that are not secret, kept in clear for display."""
    if credential.provider != common_pb2.EMAIL_PROVIDER_SMTP:
        return {"smtp_host": None, "smtp_port": None, "smtp_username": None, "smtp_tls_mode": None}
    smtp = credential.smtp
    return {
        "smtp_host": smtp.host,
        "smtp_port": smtp.port,
        "smtp_username": smtp.username,
        "smtp_tls_mode": TLS_FROM_PROTO[smtp.tls_mode],
    }


def _provider_secret(row: Row[Any]) -> ledger_providers_pb2.ProviderSecret:
    """A provider with its sealed credential, for the senders (only they open it)."""
    return ledger_providers_pb2.ProviderSecret(config=provider_to_proto(row, "", ""), sealed_credential=row.sealed)


class SecretRpcs(Rpcs):
    notifier: Notifier
    ring: KeyRing | None
    webhook_secret_overlap_s: float

    async def _ring(self, context: Context) -> KeyRing:
        if self.ring is None:
            await abort_failed_precondition(context, "master keys are not configured (HERALD_MASTER_KEYS)")
        return self.ring

    def _present(self, ring: KeyRing, row: Row[Any]) -> common_pb2.ProviderConfig:
        """Opens the credential only to mask it; a row that fails to open says so loudly."""
        try:
            credential = common_pb2.ProviderCredential()
            credential.ParseFromString(
                ring.open(row.sealed, provider_store.credential_aad(row.tenant_id, row.provider, row.id))
            )
        except SecretUnavailable as error:
            log.error(
                "stored provider credential cannot be opened", extra={"provider_id": str(row.id), "why": str(error)}
            )
            return provider_to_proto(row, "", str(error))
        if row.provider == "smtp":
            return provider_to_proto(row, mask(credential.smtp.password, keep_prefix=False), "")
        shown = provider_to_proto(row, mask(credential.api_key), "")
        if credential.account_token:
            shown.masked_account_token = mask(credential.account_token, keep_prefix=False)
        return shown

    def _open(self, ring: KeyRing, row: Row[Any]) -> common_pb2.ProviderCredential | None:
        try:
            credential = common_pb2.ProviderCredential()
            credential.ParseFromString(
                ring.open(row.sealed, provider_store.credential_aad(row.tenant_id, row.provider, row.id))
            )
        except SecretUnavailable:
            return None
        return credential

    async def CreateProvider(
        self, request: ledger_providers_pb2.CreateProviderRequest, context: Context
    ) -> ledger_providers_pb2.CreateProviderResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        ring = await self._ring(context)
        problems = credential_problems(request.credential, "credential")
        if not 0 <= request.priority <= MAX_PRIORITY:
            problems.append(("priority", f"must be 0-{MAX_PRIORITY}"))
        if problems:
            await abort_invalid(context, problems)
        provider = PROVIDER_FROM_PROTO[request.credential.provider]
        row_id = new_id()
        sealed = provider_store.seal_credential(
            ring, tenant_id, provider, row_id, request.credential.SerializeToString()
        )
        values = {
            "id": row_id,
            "tenant_id": tenant_id,
            "provider": provider,
            "priority": request.priority,
            "base_url": request.base_url,
            "options": dict(request.options),
            "sealed": sealed.envelope,
            "key_id": sealed.key_id,
            **clear_columns(request.credential),
        }
        row = await self.write(provider_store.create_provider, values)
        await self.notifier.publish(PROVIDERS, tenant_id=str(tenant_id))
        return ledger_providers_pb2.CreateProviderResponse(provider=self._present(ring, row))

    async def ListProviders(
        self, request: ledger_providers_pb2.ListProvidersRequest, context: Context
    ) -> ledger_providers_pb2.ListProvidersResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        ring = await self._ring(context)
        rows = await self.read(provider_store.list_providers, tenant_id)
        return ledger_providers_pb2.ListProvidersResponse(providers=[self._present(ring, r) for r in rows])

    async def UpdateProvider(
        self, request: ledger_providers_pb2.UpdateProviderRequest, context: Context
    ) -> ledger_providers_pb2.UpdateProviderResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        ring = await self._ring(context)
        existing = await self.one(
            context, "provider", tenant_id, request.provider_id, "read", provider_store.get_provider
        )
        provider_id: uuid.UUID = existing.id
        values: dict[str, Any] = {"updated_at": datetime.now(UTC)}
        if request.HasField("priority"):
            if not 0 <= request.priority <= MAX_PRIORITY:
                await abort_invalid(context, [("priority", f"must be 0-{MAX_PRIORITY}")])
            values["priority"] = request.priority
        if request.HasField("base_url"):
            values["base_url"] = request.base_url
        if request.replace_options:
            values["options"] = dict(request.options)
        if request.HasField("credential") or request.HasField("account_token"):
            credential = await self._merged_credential(context, ring, existing, request)
            sealed = provider_store.seal_credential(
                ring, tenant_id, existing.provider, provider_id, credential.SerializeToString()
            )
            values |= {"sealed": sealed.envelope, "key_id": sealed.key_id, **clear_columns(credential)}
        updated = await self.write(provider_store.update_provider, tenant_id, provider_id, values)
        row = await found(context, "provider", updated)
        await self.notifier.publish(PROVIDERS, tenant_id=str(tenant_id))
        return ledger_providers_pb2.UpdateProviderResponse(provider=self._present(ring, row))

    async def _merged_credential(
        self, context: Context, ring: KeyRing, existing: Row[Any], request: ledger_providers_pb2.UpdateProviderRequest
    ) -> common_pb2.ProviderCredential:
        """The credential to seal: the new one (if given), keeping the stored Postmark account
        token unless the request sets `account_token` ("" removes it)."""
        problems = []
        if request.HasField("account_token"):
            problems += account_token_problems(existing.provider, request.account_token, "account_token")
            if existing.provider != "postmark":
                problems.append(("account_token", "only Postmark providers take an account token"))
        stored = self._open(ring, existing)
        if request.HasField("credential"):
            credential = common_pb2.ProviderCredential()
            credential.CopyFrom(request.credential)
            problems += credential_problems(credential, "credential")
            if PROVIDER_FROM_PROTO.get(credential.provider) != existing.provider:
                problems.append(("credential.provider", "cannot change; add a new provider instead"))
            if not credential.account_token and stored is not None:
                credential.account_token = stored.account_token
        elif stored is None:
            await abort_failed_precondition(
                context, "the stored credential cannot be opened; replace it (api_key) with the account token"
            )
        else:
            credential = stored
        if problems:
            await abort_invalid(context, problems)
        if request.HasField("account_token"):
            credential.account_token = request.account_token
        return credential

    async def DeleteProvider(
        self, request: ledger_providers_pb2.DeleteProviderRequest, context: Context
    ) -> ledger_providers_pb2.DeleteProviderResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        await self.one(context, "provider", tenant_id, request.provider_id, "write", provider_store.delete_provider)
        await self.notifier.publish(PROVIDERS, tenant_id=str(tenant_id))
        return ledger_providers_pb2.DeleteProviderResponse()

    GetProviderSecrets = tenant_list_rpc(
        provider_store.list_providers,
        ledger_providers_pb2.GetProviderSecretsResponse,
        "providers",
        _provider_secret,
    )

    async def _issue(
        self, context: Context, tenant: str, store_secret: Callable[[AsyncConnection, uuid.UUID, Sealed], Awaitable[T]]
    ) -> tuple[str, T | None]:
        """A new signing secret sealed for the tenant (FAILED_PRECONDITION without master keys) and
        stored by `store_secret`, announced when it was: the secret, and the row (None: not stored)."""
        tenant_id = await require_id(context, tenant, "tenant_id")
        ring = await self._ring(context)
        secret = new_webhook_secret()
        row = await self.write(store_secret, tenant_id, ring.seal(secret.encode(), secret_store.secret_aad(tenant_id)))
        if row is not None:
            await self.notifier.publish(WEBHOOK_SECRETS, tenant_id=str(tenant_id))
        return secret, row

    async def GenerateWebhookSecret(
        self, request: ledger_providers_pb2.GenerateWebhookSecretRequest, context: Context
    ) -> ledger_providers_pb2.GenerateWebhookSecretResponse:
        secret, row = await self._issue(context, request.tenant_id, secret_store.create)
        if row is None:
            await abort_already_exists(context, "webhook secret")
        return ledger_providers_pb2.GenerateWebhookSecretResponse(secret=secret, status=webhook_secret_status(row))

    async def RotateWebhookSecret(
        self, request: ledger_providers_pb2.RotateWebhookSecretRequest, context: Context
    ) -> ledger_providers_pb2.RotateWebhookSecretResponse:
        rotate = partial(secret_store.rotate, overlap_s=self.webhook_secret_overlap_s)
        secret, row = await self._issue(context, request.tenant_id, rotate)
        status = webhook_secret_status(await found(context, "webhook secret", row))
        return ledger_providers_pb2.RotateWebhookSecretResponse(secret=secret, status=status)

    async def GetWebhookSecretStatus(
        self, request: ledger_providers_pb2.GetWebhookSecretStatusRequest, context: Context
    ) -> ledger_providers_pb2.GetWebhookSecretStatusResponse:
        row = await self.tenant_read(context, request.tenant_id, secret_store.get)
        return ledger_providers_pb2.GetWebhookSecretStatusResponse(status=webhook_secret_status(row))

    async def DeleteWebhookSecret(
        self, request: ledger_providers_pb2.DeleteWebhookSecretRequest, context: Context
    ) -> ledger_providers_pb2.DeleteWebhookSecretResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        await found(context, "webhook secret", await self.write(secret_store.remove, tenant_id))
        await self.notifier.publish(WEBHOOK_SECRETS, tenant_id=str(tenant_id))
        return ledger_providers_pb2.DeleteWebhookSecretResponse(deleted=True)

    async def ReencryptSecrets(
        self, request: ledger_providers_pb2.ReencryptSecretsRequest, context: Context
    ) -> ledger_providers_pb2.ReencryptSecretsResponse:
        ring = await self._ring(context)
        done = await reencrypt_all(self.engine, ring, request.batch_size or 200)
        log.info(
            "secrets re-encrypted",
            extra={"resealed": done.resealed, "unreadable": len(done.unreadable), "active_key_id": ring.active_key_id},
        )
        if done.unreadable:
            log.error("stored secrets that do not open were left as they are", extra={"rows": done.unreadable})
        return ledger_providers_pb2.ReencryptSecretsResponse(
            reencrypted=done.resealed,
            already_current=done.already_current,
            active_key_id=ring.active_key_id,
            unreadable_ids=done.unreadable,
        )
