"""SendGrid domain authentication (`/v3/whitelabel/domains`).

Registering returns the CNAME records (with automatic security, SendGrid's default: mail
CNAME and two DKIM CNAMEs) or MX/TXT records (without). `POST .../{id}/validate` makes
SendGrid look the records up; its per-record results carry a reason when one is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from herald_email_sender.domains.model import DnsRecord, DomainError, DomainState, RecordStatus, call
from herald_email_sender.outcome import api_root
from herald_email_sender.providers.sendgrid import DEFAULT_BASE_URL, error_text

PATH = "/v3/whitelabel/domains"
# Options on the provider config: the subdomain SendGrid's records use (SendGrid picks one
# if unset), and "false" to ask for MX/TXT records instead of CNAMEs (automatic security).
SUBDOMAIN_OPTION = "sendgrid_subdomain"
AUTOMATIC_SECURITY_OPTION = "sendgrid_automatic_security"


async def register(
    client: httpx.AsyncClient, api_key: str, domain: str, base_url: str, options: Mapping[str, str]
) -> DomainState:
    body: dict[str, Any] = {
        "domain": domain,
        "automatic_security": options.get(AUTOMATIC_SECURITY_OPTION, "true").lower() != "false",
    }
    if options.get(SUBDOMAIN_OPTION):
        body["subdomain"] = options[SUBDOMAIN_OPTION]
    answer = await _call(client, "POST", f"{api_root(base_url, DEFAULT_BASE_URL)}{PATH}", api_key, body)
    return parse(answer)


async def verify(client: httpx.AsyncClient, api_key: str, domain_id: str, base_url: str) -> DomainState:
    root = _domain_url(base_url, domain_id)
    validation = await _call(client, "POST", f"{root}/validate", api_key)
    results = validation.get("validation_results") if isinstance(validation, dict) else None
    return parse(await _call(client, "GET", root, api_key), results if isinstance(results, dict) else {})


async def get(client: httpx.AsyncClient, api_key: str, domain_id: str, base_url: str) -> DomainState:
    return parse(await _call(client, "GET", _domain_url(base_url, domain_id), api_key))


def parse(answer: Any, validation: Mapping[str, Any] | None = None) -> DomainState:
    """A domain object: `{id, domain, valid, dns: {purpose: {valid, type, host, data}}}`.
    A record SendGrid just checked and found wrong (a validation result with a reason) is FAILED."""
    if not isinstance(answer, dict) or "id" not in answer:
        raise DomainError("SendGrid answered without a domain")
    records = []
    dns = answer.get("dns")
    for purpose, record in (dns if isinstance(dns, dict) else {}).items():
        if not isinstance(record, dict):
            continue
        checked = (validation or {}).get(purpose)
        if record.get("valid"):
            status = RecordStatus.VERIFIED
        elif isinstance(checked, dict) and not checked.get("valid") and checked.get("reason"):
            status = RecordStatus.FAILED
        else:
            status = RecordStatus.PENDING
        records.append(
            DnsRecord(
                type=str(record.get("type", "")).upper(),
                name=str(record.get("host", "")),
                value=str(record.get("data", "")),
                status=status,
                purpose=str(purpose),
            )
        )
    valid = bool(answer.get("valid"))
    return DomainState(
        provider_domain_id=str(answer["id"]),
        name=str(answer.get("domain", "")),
        verified=valid,
        records=tuple(records),
        provider_status="valid" if valid else "invalid",
    )


def _domain_url(base_url: str, domain_id: str) -> str:
    # The id comes back from our own storage; quoted all the same, so it stays one path segment.
    return f"{api_root(base_url, DEFAULT_BASE_URL)}{PATH}/{quote(domain_id, safe='')}"


async def _call(
    client: httpx.AsyncClient, method: str, url: str, api_key: str, body: dict[str, Any] | None = None
) -> Any:
    return await call(
        client,
        method,
        url,
        provider="SendGrid",
        headers={"authorization": f"Bearer {api_key}"},
        secret=api_key,
        body=body,
        describe=error_text,
    )
