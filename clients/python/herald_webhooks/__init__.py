"""Receiver-side verification of webhooks delivered by Herald. Standard library only."""

from herald_webhooks.verification import (
    DEFAULT_TOLERANCE_S,
    VerifiedWebhook,
    WebhookVerificationError,
    verify,
    verify_standard,
)

__all__ = ["DEFAULT_TOLERANCE_S", "VerifiedWebhook", "WebhookVerificationError", "verify", "verify_standard"]
