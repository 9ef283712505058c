"""A tenant's email providers: each credential checked with the provider (through the
email-sender) before it is stored sealed, and where a provider connects checked by the target
guard; and the tenant's webhook signing secret."""

from __future__ import annotations

import grpc

from herald.ids import TenantId, parse_id
from herald.v1 import common_pb2, email_sender_pb2, ledger_providers_pb2
from herald_gateway.errors import (
    Conflict,
    Invalid,
    InvalidCredential,
    NotFound,
    ProviderUnreachable,
    ask,
    refuse_invalid,
)
from herald_gateway.operations.base import OperationsBase
from herald_gateway.operations.crud import Resource
from herald_gateway.operations.validation import base_url_problems

PROVIDERS: Resource[common_pb2.ProviderConfig] = Resource(
    "provider", "providers", "Provider", "provider", "providers", "provider_id"
)


class ProviderOperations(OperationsBase):
    async def _endpoint_problems(self, base_url: str, smtp: common_pb2.SmtpSettings | None) -> list[tuple[str, str]]:
        """The target guard on where a provider connects (None target_check: left to the sender)."""
        if self.target_check is None:
            return []
        return await self.target_check.provider_problems(base_url, smtp)

    async def _validate_credential(self, credential: common_pb2.ProviderCredential, base_url: str) -> None:
        """Asks the provider, through the email-sender, before anything is stored."""
        verdict = await ask(
            self.email_sender.ValidateCredential(
                email_sender_pb2.ValidateCredentialRequest(credential=credential, base_url=base_url), timeout=30
            ),
            "provider credential",
        )
        if verdict.provider_unreachable:
            raise ProviderUnreachable(verdict.reason)
        if not verdict.valid:
            raise InvalidCredential(verdict.reason)

    async def create_provider(
        self,
        tenant_id: TenantId,
        credential: common_pb2.ProviderCredential,
        priority: int,
        base_url: str,
        options: dict[str, str],
    ) -> common_pb2.ProviderConfig:
        problems = base_url_problems(base_url) or await self._endpoint_problems(
            base_url, credential.smtp if credential.HasField("smtp") else None
        )
        refuse_invalid(problems)
        await self._validate_credential(credential, base_url)
        request = ledger_providers_pb2.CreateProviderRequest(
            tenant_id=tenant_id, credential=credential, priority=priority, base_url=base_url, options=options
        )
        provider: common_pb2.ProviderConfig = (
            await ask(self.ledger.providers.CreateProvider(request), "provider")
        ).provider
        return provider

    async def list_providers(self, tenant_id: TenantId) -> list[common_pb2.ProviderConfig]:
        return await self.crud(PROVIDERS).all(tenant_id)

    async def update_provider(
        self, tenant_id: TenantId, provider_id: str, request: ledger_providers_pb2.UpdateProviderRequest
    ) -> common_pb2.ProviderConfig:
        if parse_id(provider_id) is None:
            raise NotFound("provider not found")
        request.tenant_id, request.provider_id = tenant_id, provider_id
        if request.HasField("base_url") and base_url_problems(request.base_url):
            raise Invalid(base_url_problems(request.base_url))
        # A PATCH of the base URL alone is checked too: it is where the next send connects.
        problems = await self._endpoint_problems(
            request.base_url if request.HasField("base_url") else "",
            request.credential.smtp if request.credential.HasField("smtp") else None,
        )
        refuse_invalid(problems)
        new_token = request.account_token if request.HasField("account_token") else ""
        if request.HasField("credential") or new_token:
            current = [p for p in await self.list_providers(tenant_id) if p.id == provider_id]
            if not current:
                raise NotFound("provider not found")
            base_url = request.base_url if request.HasField("base_url") else current[0].base_url
            if request.HasField("account_token") and current[0].provider != common_pb2.EMAIL_PROVIDER_POSTMARK:
                raise Invalid([("account_token", "only Postmark providers take an account token")])
            if request.HasField("credential"):
                request.credential.provider = current[0].provider
                if new_token:
                    request.credential.account_token = new_token
                await self._validate_credential(request.credential, base_url)
            else:
                # Only the account token changes: check it alone (the server token stays).
                await self._validate_credential(
                    common_pb2.ProviderCredential(provider=current[0].provider, account_token=new_token), base_url
                )
        provider: common_pb2.ProviderConfig = (
            await ask(self.ledger.providers.UpdateProvider(request), "provider")
        ).provider
        return provider

    async def delete_provider(self, tenant_id: TenantId, provider_id: str) -> None:
        await self.crud(PROVIDERS).delete(tenant_id, provider_id)

    # The webhook signing secret

    async def generate_webhook_secret(self, tenant_id: TenantId) -> tuple[str, common_pb2.WebhookSecretStatus]:
        exists = {
            grpc.StatusCode.ALREADY_EXISTS: lambda _: Conflict("a webhook secret exists; rotate it or delete it first")
        }
        request = ledger_providers_pb2.GenerateWebhookSecretRequest(tenant_id=tenant_id)
        made = await ask(self.ledger.providers.GenerateWebhookSecret(request), "webhook secret", exists)
        return made.secret, made.status

    async def rotate_webhook_secret(self, tenant_id: str) -> tuple[str, common_pb2.WebhookSecretStatus]:
        made = await ask(
            self.ledger.providers.RotateWebhookSecret(
                ledger_providers_pb2.RotateWebhookSecretRequest(tenant_id=tenant_id)
            ),
            "webhook secret",
        )
        return made.secret, made.status

    async def webhook_secret_status(self, tenant_id: str) -> common_pb2.WebhookSecretStatus:
        found = await ask(
            self.ledger.providers.GetWebhookSecretStatus(
                ledger_providers_pb2.GetWebhookSecretStatusRequest(tenant_id=tenant_id)
            ),
            "webhook secret",
        )
        status: common_pb2.WebhookSecretStatus = found.status
        return status

    async def delete_webhook_secret(self, tenant_id: str) -> None:
        await ask(
            self.ledger.providers.DeleteWebhookSecret(
                ledger_providers_pb2.DeleteWebhookSecretRequest(tenant_id=tenant_id)
            ),
            "webhook secret",
        )
