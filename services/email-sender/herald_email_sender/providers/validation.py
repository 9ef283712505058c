"""What a credential check can conclude."""

from __future__ import annotations

from dataclasses import dataclass

from herald.webhooks.receiver_client import Answer
from herald.webhooks.target_guard import PROVIDER_REFUSED, TargetRefused
from herald_email_sender.outcome import NoAnswer, error_name

VALIDATION_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Validation:
    valid: bool
    reason: str = ""
    # The provider did not answer (timeout, 5xx, connection refused): try later, store nothing.
    unreachable: bool = False


VALID = Validation(True)


def unreachable(why: str) -> Validation:
    return Validation(False, f"the provider could not be reached: {why}", unreachable=True)


def from_http_error(error: NoAnswer) -> Validation:
    """No answer: unreachable (try later), except an address the target guard refuses, which
    is the one generic refusal whatever the reason (no hint of which ports answer)."""
    if isinstance(error, TargetRefused):
        return Validation(False, f"base_url: {PROVIDER_REFUSED}")
    return unreachable(error_name(error))


def from_status(response: Answer, provider: str) -> Validation | None:
    """Common answers: None when the caller must look closer at a 2xx/4xx body."""
    if response.status_code >= 500 or response.status_code == 429:
        return unreachable(f"{provider} answered {response.status_code}")
    if response.status_code in (401, 403):
        return Validation(False, f"{provider} rejected the credential ({response.status_code})")
    return None
