"""Shared pieces of the email delivery tests: the senders' HTTP client, email requests, provider
configs and credentials as the ledger hands them over, and a clock tests move by hand.

These tests need no Herald stack: adapters, the walk, breakers and domain calls run
against the provider stand-ins (real local HTTP servers) and a real aiosmtpd server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TypeAlias

import pytest

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient

SENDGRID_KEY = "SG.test-key-aBcDeFgHiJkLmNoP.qRsTuVwXyZ0123456789"
RESEND_KEY = "re_TestKey_1234567890abcdefghij"
POSTMARK_TOKEN = "pm-server-token-0b5d6c1e-7f3a-4e29-9a8b"
POSTMARK_ACCOUNT_TOKEN = "pm-account-token-55aa01d2-8c4e-4c1b-b0f3"
SECRETS = (SENDGRID_KEY, RESEND_KEY, POSTMARK_TOKEN, POSTMARK_ACCOUNT_TOKEN)


def address(email: str, name: str = "") -> common_pb2.EmailAddress:
    return common_pb2.EmailAddress(email=email, name=name)


def full_request(**changes: object) -> common_pb2.EmailRequest:
    """An email using every field of the contract."""
    fields: dict[str, object] = {
        "from": address("billing@acme.example", "Acme Billing"),
        "to": [address("ada@example.com", "Ada Lovelace"), address("bob@example.com")],
        "cc": [address("carol@example.com", "Carol")],
        "bcc": [address("audit@acme.example")],
        "reply_to": address("support@acme.example", "Acme Support"),
        "subject": "Your invoice #1042",
        "text": "Hello Ada, your invoice is attached.",
        "html": "<p>Hello Ada, your invoice is attached.</p>",
        "headers": {"X-Campaign": "spring", "List-Unsubscribe": "<mailto:unsub@acme.example>"},
        "tags": ["invoice", "billing"],
        "metadata": {"order_id": "1042", "customer": "c-77"},
    }
    fields.update(changes)
    return common_pb2.EmailRequest(**fields)  # type: ignore[arg-type]


def simple_request(**changes: object) -> common_pb2.EmailRequest:
    fields: dict[str, object] = {
        "from": address("hello@acme.example"),
        "to": [address("ada@example.com")],
        "subject": "Hi",
        "text": "Hello.",
    }
    fields.update(changes)
    return common_pb2.EmailRequest(**fields)  # type: ignore[arg-type]


Kind: TypeAlias = common_pb2.EmailProvider


def config(
    provider_id: str, kind: Kind, priority: int = 0, base_url: str = "", **options: str
) -> common_pb2.ProviderConfig:
    return common_pb2.ProviderConfig(
        id=provider_id, provider=kind, priority=priority, base_url=base_url, options=options
    )


def credential(
    kind: Kind, api_key: str = "", smtp: common_pb2.SmtpSettings | None = None
) -> common_pb2.ProviderCredential:
    return common_pb2.ProviderCredential(provider=kind, api_key=api_key, smtp=smtp)


@dataclass
class Vault:
    """Stands in for the caller's decryption: hands out credentials by provider id and
    remembers which ones were opened, so tests can see that skipped providers never were."""

    credentials: dict[str, common_pb2.ProviderCredential] = field(default_factory=dict)
    opened: list[str] = field(default_factory=list)

    def open(self, provider: common_pb2.ProviderConfig) -> common_pb2.ProviderCredential:
        self.opened.append(provider.id)
        return self.credentials[provider.id]


class Clock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
async def http() -> AsyncIterator[ReceiverClient]:
    """The client the email-sender calls providers with, without a guard (as for platform
    email), so the stand-ins on loopback answer; tests/email/test_provider_targets.py has the guard."""
    client = ReceiverClient(None, timeout_s=10, connections=10)
    yield client
    await client.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()
