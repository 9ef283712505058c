"""Postmark domains (`/domains`), an account-level API.

Postmark has two kinds of token: the server token sends mail (`X-Postmark-Server-Token`,
the credential a tenant registers as its provider), and the account token manages the
account's domains and servers (`X-Postmark-Account-Token`). The domains API refuses a
server token with 401 (ErrorCode 10). So every function here takes the account token;
the caller must get one from the tenant for domain work (see `domains.register`).

Registering returns a DKIM TXT record (pending until verified) and, when a Return-Path
domain is given, a CNAME for it. Postmark sends from the domain once DKIM is verified
(`DKIMVerified`); the Return-Path only improves DMARC alignment, so it does not gate.
Verification: `PUT /domains/{id}/verifyDkim` and `PUT /domains/{id}/verifyReturnPath`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herald.webhooks.receiver_client import Answer, ReceiverClient
from herald_email_sender.domains.model import DnsRecord, DomainApi, DomainError, DomainState, RecordStatus
from herald_email_sender.outcome import json_body
from herald_email_sender.providers.postmark import DEFAULT_BASE_URL, account_headers, error_parts

PATH = "/domains"
# Option on the provider config: the Return-Path domain, e.g. "pm-bounces.example.com".
RETURN_PATH_OPTION = "postmark_return_path_domain"
BAD_TOKEN = 10


async def register(
    client: ReceiverClient, account_token: str, domain: str, base_url: str, options: Mapping[str, str]
) -> DomainState:
    return parse(await API.create(client, account_token, base_url, {"Name": domain}, options))


async def verify(client: ReceiverClient, account_token: str, domain_id: str, base_url: str) -> DomainState:
    root = API.url(base_url, domain_id)
    answer = await API.call(client, "PUT", f"{root}/verifyDkim", account_token)
    if isinstance(answer, dict) and answer.get("ReturnPathDomain"):
        answer = await API.call(client, "PUT", f"{root}/verifyReturnPath", account_token)
    return parse(answer)


async def get(client: ReceiverClient, account_token: str, domain_id: str, base_url: str) -> DomainState:
    return parse(await API.fetch(client, account_token, base_url, domain_id))


def parse(answer: Any) -> DomainState:
    """Domain details: DKIM host/value (current, and pending while a key is being set up or
    rotated), Return-Path CNAME. SPF fields are deprecated by Postmark and not shown."""
    if not isinstance(answer, dict) or "ID" not in answer:
        raise DomainError("Postmark answered without a domain")
    dkim_verified = bool(answer.get("DKIMVerified"))
    records = []
    if answer.get("DKIMHost") and answer.get("DKIMTextValue"):
        status = RecordStatus.VERIFIED if dkim_verified else RecordStatus.PENDING
        records.append(DnsRecord("TXT", str(answer["DKIMHost"]), str(answer["DKIMTextValue"]), status, "DKIM"))
    if answer.get("DKIMPendingHost") and answer.get("DKIMPendingTextValue"):
        pending = str(answer["DKIMPendingHost"]), str(answer["DKIMPendingTextValue"])
        failed = str(answer.get("DKIMUpdateStatus", "")).lower() == "failed"
        status = RecordStatus.FAILED if failed else RecordStatus.PENDING
        records.append(DnsRecord("TXT", pending[0], pending[1], status, "DKIM"))
    if answer.get("ReturnPathDomain"):
        status = RecordStatus.VERIFIED if answer.get("ReturnPathDomainVerified") else RecordStatus.PENDING
        records.append(
            DnsRecord(
                "CNAME",
                str(answer["ReturnPathDomain"]),
                str(answer.get("ReturnPathDomainCNAMEValue", "")),
                status,
                "Return-Path",
            )
        )
    return DomainState(
        provider_domain_id=str(answer["ID"]),
        name=str(answer.get("Name", "")),
        verified=dkim_verified,
        records=tuple(records),
        provider_status=str(answer.get("DKIMUpdateStatus", "")),
    )


def _describe(response: Answer) -> str:
    code, text = error_parts(json_body(response))
    if code == BAD_TOKEN or response.status_code == 401:
        return f"ErrorCode {code}: {text} (the domains API needs the Postmark account token, not the server token)"
    return f"ErrorCode {code}: {text}" if code is not None else text


API = DomainApi(
    "Postmark", DEFAULT_BASE_URL, PATH, account_headers, _describe, (RETURN_PATH_OPTION, "ReturnPathDomain")
)
