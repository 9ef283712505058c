"""Resend domains (`/domains`).

Registering returns the records (an MX and a TXT for SPF on the `send` subdomain, a DKIM
TXT), with names relative to the domain. `POST /domains/{id}/verify` starts an
asynchronous check; `GET /domains/{id}` reports its progress: not_started, pending,
verified, failed, or temporary_failure (DNS trouble on the way; Resend checks again).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herald.webhooks.receiver_client import Answer, ReceiverClient
from herald_email_sender.domains.model import DnsRecord, DomainApi, DomainError, DomainState, RecordStatus, fqdn
from herald_email_sender.outcome import json_body
from herald_email_sender.providers.resend import DEFAULT_BASE_URL, bearer, error_parts

PATH = "/domains"
# Option on the provider config: the region Resend sends from ("us-east-1", "eu-west-1", ...).
REGION_OPTION = "resend_region"
STATUSES = {
    "verified": RecordStatus.VERIFIED,
    "failed": RecordStatus.FAILED,
    "not_started": RecordStatus.PENDING,
    "pending": RecordStatus.PENDING,
    "temporary_failure": RecordStatus.PENDING,
}


async def register(
    client: ReceiverClient, api_key: str, domain: str, base_url: str, options: Mapping[str, str]
) -> DomainState:
    return parse(await API.create(client, api_key, base_url, {"name": domain}, options))


async def verify(client: ReceiverClient, api_key: str, domain_id: str, base_url: str) -> DomainState:
    await API.call(client, "POST", f"{API.url(base_url, domain_id)}/verify", api_key)
    return parse(await API.fetch(client, api_key, base_url, domain_id))


async def get(client: ReceiverClient, api_key: str, domain_id: str, base_url: str) -> DomainState:
    return parse(await API.fetch(client, api_key, base_url, domain_id))


def parse(answer: Any) -> DomainState:
    """A domain object: `{id, name, status, records: [{record, name, type, value, status, priority?}]}`."""
    if not isinstance(answer, dict) or "id" not in answer:
        raise DomainError("Resend answered without a domain")
    name = str(answer.get("name", ""))
    records = []
    for record in answer.get("records") or []:
        if not isinstance(record, dict):
            continue
        priority = record.get("priority")
        records.append(
            DnsRecord(
                type=str(record.get("type", "")).upper(),
                name=fqdn(str(record.get("name", "")), name),
                value=str(record.get("value", "")),
                status=STATUSES.get(str(record.get("status", "")), RecordStatus.PENDING),
                purpose=str(record.get("record", "")),
                priority=priority if isinstance(priority, int) else None,
            )
        )
    status = str(answer.get("status", ""))
    return DomainState(
        provider_domain_id=str(answer["id"]),
        name=name,
        verified=status == "verified",
        records=tuple(records),
        provider_status=status,
    )


def _describe(response: Answer) -> str:
    name, text = error_parts(json_body(response))
    return f"{name}: {text}" if name else text


API = DomainApi("Resend", DEFAULT_BASE_URL, PATH, bearer, _describe, (REGION_OPTION, "region"))
