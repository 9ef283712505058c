"""What a provider says about a sending domain, in one shape for every provider.

Each provider has its own domain API and vocabulary (SendGrid's "domain authentication"
with `valid` flags, Resend's statuses, Postmark's DKIM and Return-Path fields); the
gateway shows tenants one list of DNS records to publish and one verified flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import quote

from herald.webhooks.receiver_client import Answer, ReceiverClient
from herald.webhooks.target_guard import PROVIDER_REFUSED, TargetRefused
from herald_email_sender.outcome import Outcome, api_root, classify_status, error_name, json_body, safe_text
from herald_email_sender.providers.api import NO_ANSWER
from herald_email_sender.providers.api import call as api_call

DOMAIN_TIMEOUT_S = 15.0


class RecordStatus(StrEnum):
    # Not seen in DNS yet (or not checked yet): publish it, then ask to verify.
    PENDING = "pending"
    VERIFIED = "verified"
    # The provider checked and found it missing or wrong.
    FAILED = "failed"


@dataclass(frozen=True)
class DnsRecord:
    type: str  # "TXT", "CNAME", "MX"
    name: str  # fully qualified, e.g. "s1._domainkey.example.com"
    value: str
    status: RecordStatus
    # What the record is for, in the provider's words ("dkim1", "SPF", "DKIM", "Return-Path", ...).
    purpose: str = ""
    priority: int | None = None  # MX only


@dataclass(frozen=True)
class DomainState:
    # The provider's id for the domain: what verify and get need later. Store it.
    provider_domain_id: str
    name: str
    # True once the provider will send from this domain: the gateway unblocks sends then.
    verified: bool
    records: tuple[DnsRecord, ...]
    # The provider's own overall status word, for display ("not_started", "pending", "valid", ...).
    provider_status: str = ""


class DomainError(Exception):
    """A domain call that did not succeed. `transient`: the provider could not be reached or
    asked us to come back (429, 5xx); otherwise it refused (bad token, unknown domain id,
    domain taken). The message is safe to show the tenant and never holds the token."""

    def __init__(self, message: str, *, transient: bool = False, status_code: int = 0) -> None:
        super().__init__(message)
        self.transient = transient
        self.status_code = status_code


async def call(
    client: ReceiverClient,
    method: str,
    url: str,
    *,
    provider: str,
    headers: dict[str, str],
    secret: str,
    body: dict[str, Any] | None = None,
    timeout_s: float = DOMAIN_TIMEOUT_S,
    describe: Callable[[Answer], str] | None = None,
) -> Any:
    """One domain API call: the parsed JSON of a 2xx answer, or DomainError.
    `describe(response)` turns a refusal's body into words."""
    try:
        response = await api_call(client, method, url, headers=headers, body=body, timeout_s=timeout_s)
    except NO_ANSWER as error:
        if isinstance(error, TargetRefused):
            raise DomainError(f"{provider}'s address is refused: {PROVIDER_REFUSED}") from None
        if error.kind == "timeout":
            raise DomainError(f"{provider} did not answer in time ({error_name(error)})", transient=True) from None
        raise DomainError(f"{provider} could not be reached ({error_name(error)})", transient=True) from None
    outcome = classify_status(response.status_code)
    if outcome is Outcome.ACCEPTED:
        return json_body(response)
    detail = describe(response) if describe is not None else ""
    text = safe_text(f"{provider} answered {response.status_code} {detail}".strip(), secret)
    raise DomainError(text, transient=outcome is Outcome.TRANSIENT, status_code=response.status_code)


def fqdn(name: str, domain: str) -> str:
    """A record name as a full name: Resend gives names relative to the domain."""
    name = name.rstrip(".")
    if not name or name == "@":
        return domain
    if name == domain or name.endswith("." + domain):
        return name
    return f"{name}.{domain}"


@dataclass(frozen=True)
class DomainApi:
    """Where one provider's domain API lives and how it is spoken to, so each provider module
    says only what differs: its URLs, its token header, its words for a refusal."""

    provider: str  # as named in error texts: "SendGrid"
    default_base_url: str
    path: str  # the domains collection, e.g. "/domains"
    headers: Callable[[str], dict[str, str]]  # token -> the headers that carry it
    describe: Callable[[Answer], str]  # a refusal's body in words
    # The provider config's option a new domain takes, if set, and the body field it goes in.
    option: tuple[str, str] | None = None

    def url(self, base_url: str, domain_id: str | None = None) -> str:
        """The collection's URL, or one domain's."""
        root = f"{api_root(base_url, self.default_base_url)}{self.path}"
        # The id comes back from our own storage; quoted all the same, so it stays one path segment.
        return root if domain_id is None else f"{root}/{quote(domain_id, safe='')}"

    async def create(
        self, client: ReceiverClient, token: str, base_url: str, body: dict[str, Any], options: Mapping[str, str]
    ) -> Any:
        """Registers a domain: POST `body` (with the config's `option` when set) to the collection."""
        if self.option is not None and options.get(self.option[0]):
            body[self.option[1]] = options[self.option[0]]
        return await self.call(client, "POST", self.url(base_url), token, body)

    async def fetch(self, client: ReceiverClient, token: str, base_url: str, domain_id: str) -> Any:
        """One domain as the provider has it now."""
        return await self.call(client, "GET", self.url(base_url, domain_id), token)

    async def call(
        self, client: ReceiverClient, method: str, url: str, token: str, body: dict[str, Any] | None = None
    ) -> Any:
        """`call` with this provider's name, token headers and words."""
        return await call(
            client,
            method,
            url,
            provider=self.provider,
            headers=self.headers(token),
            secret=token,
            body=body,
            describe=self.describe,
        )
