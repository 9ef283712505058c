"""SendGrid domain authentication (`/v3/whitelabel/domains`).

Registering returns the CNAME records (with automatic security, SendGrid's default: mail
CNAME and two DKIM CNAMEs) or MX/TXT records (without). `POST .../{id}/validate` makes
SendGrid look the records up; its per-record results carry a reason when one is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herald.webhooks.receiver_client import ReceiverClient
from herald_email_sender.domains.model import DnsRecord, DomainApi, DomainError, DomainState, RecordStatus
from herald_email_sender.providers.sendgrid import DEFAULT_BASE_URL, bearer, error_text

PATH = "/v3/whitelabel/domains"
# Options on the provider config: the subdomain SendGrid's records use (SendGrid picks one
# if unset), and "false" to ask for MX/TXT records instead of CNAMEs (automatic security).
SUBDOMAIN_OPTION = "sendgrid_subdomain"
AUTOMATIC_SECURITY_OPTION = "sendgrid_automatic_security"
API = DomainApi("SendGrid", DEFAULT_BASE_URL, PATH, bearer, error_text, (SUBDOMAIN_OPTION, "subdomain"))


async def register(
    client: ReceiverClient, api_key: str, domain: str, base_url: str, options: Mapping[str, str]
) -> DomainState:
    body: dict[str, Any] = {
        "domain": domain,
        "automatic_security": options.get(AUTOMATIC_SECURITY_OPTION, "true").lower() != "false",
    }
    return parse(await API.create(client, api_key, base_url, body, options))


async def verify(client: ReceiverClient, api_key: str, domain_id: str, base_url: str) -> DomainState:
    root = API.url(base_url, domain_id)
    validation = await API.call(client, "POST", f"{root}/validate", api_key)
    results = validation.get("validation_results") if isinstance(validation, dict) else None
    return parse(await API.call(client, "GET", root, api_key), results if isinstance(results, dict) else {})


async def get(client: ReceiverClient, api_key: str, domain_id: str, base_url: str) -> DomainState:
    return parse(await API.fetch(client, api_key, base_url, domain_id))


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
