"""One call to one of a tenant's providers, whatever its kind.

The credential is an argument and nothing else: it is used for this call and not stored,
so it lives no longer than the caller's decrypted copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from herald.names import PROVIDER_NAMES
from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.target_guard import TargetGuard
from herald_email_sender import message
from herald_email_sender.outcome import SEND_TIMEOUT_S, SendResult, permanent, transient
from herald_email_sender.providers import postmark, resend, sendgrid, smtp
from herald_email_sender.providers.api import HttpProvider

# The providers spoken to over HTTP.
HTTP_PROVIDERS: dict[int, HttpProvider] = {
    common_pb2.EMAIL_PROVIDER_SENDGRID: sendgrid.SENDGRID,
    common_pb2.EMAIL_PROVIDER_RESEND: resend.RESEND,
    common_pb2.EMAIL_PROVIDER_POSTMARK: postmark.POSTMARK,
}


def provider_name(kind: int) -> str:
    """The provider kind as a short label: "sendgrid", "resend", "postmark", "smtp" (or "unknown")."""
    return PROVIDER_NAMES.get(kind, "unknown")


@dataclass(frozen=True)
class Senders:
    """How the sender reaches providers: one shared HTTP client and the limits of one call.

    `smtp_ca_file` is the operator's private CA bundle (a mounted file) for SMTP relays;
    a tenant's own CA arrives as PEM text in its provider's `smtp_ca_pem` option. A path is
    never taken from tenant options: it would let a tenant name files on our disk.

    Tenants aim their providers (base URL, SMTP host), so for tenant email `http` connects
    through the target guard and `guard` checks SMTP relays; platform email (the operator's own
    provider, from settings) goes without."""

    http: ReceiverClient
    timeout_s: float = SEND_TIMEOUT_S
    smtp_timeout_s: float = smtp.TIMEOUT_S
    smtp_ca_file: str = ""
    guard: TargetGuard | None = None

    async def send(
        self,
        config: common_pb2.ProviderConfig,
        credential: common_pb2.ProviderCredential,
        request: common_pb2.EmailRequest,
        idempotency_key: str,
    ) -> SendResult:
        """Never raises for a provider's behaviour: every answer, and every failure to get one,
        is a SendResult. An unexpected error in our own code is reported as transient (a
        retry is safe, and the job reaches the dead-letter queue if it persists)."""
        if credential.provider != config.provider:
            return permanent("the stored credential is for another provider kind")
        problems = message.header_problems(request)
        if problems:
            # The gateway refuses these; a job that carries one anyway must not inject headers.
            return permanent("; ".join(problems))
        try:
            kind = config.provider
            http_provider = HTTP_PROVIDERS.get(kind)
            if http_provider is not None:
                return await http_provider.send(
                    self.http,
                    credential.api_key,
                    request,
                    base_url=config.base_url,
                    idempotency_key=idempotency_key,
                    timeout_s=self.timeout_s,
                    options=config.options,
                )
            if kind == common_pb2.EMAIL_PROVIDER_SMTP:
                try:
                    context = smtp.tls_context(self.smtp_ca_file, config.options.get(smtp.CA_PEM_OPTION, ""))
                except (ValueError, OSError) as error:
                    return permanent(f"the SMTP CA certificate could not be loaded ({type(error).__name__})")
                return await smtp.send(
                    credential.smtp,
                    request,
                    idempotency_key=idempotency_key,
                    tls_context=context,
                    timeout_s=self.smtp_timeout_s,
                    guard=self.guard,
                )
            return permanent(f"unknown provider kind {kind}")
        except Exception as error:  # a bug here must fail one attempt, not the worker
            return transient(f"internal error in the {provider_name(config.provider)} adapter ({type(error).__name__})")
