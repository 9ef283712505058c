"""The platform email log: operator mail queued for the senders' alerter, and the log read
by operators. Quota warnings and key-created notices are written where they are decided
(admission, CreateApiKey), in the same transaction."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.grpcio.errors import abort_failed_precondition, abort_invalid
from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_providers_pb2
from herald_ledger.convert import timestamp
from herald_ledger.job_status import JobStatus
from herald_ledger.rpc.common import MAX_PAGE_SIZE, Context, require_id
from herald_ledger.rpc.tenants import valid_contact
from herald_ledger.store import platform_email as platform_store
from herald_ledger.store.codes import STATUS_TO_PROTO

MAX_RECIPIENTS = 20
MAX_SUBJECT = 300
MAX_TEXT = 64 * 1024


def platform_email_to_proto(row: Row[Any]) -> common_pb2.PlatformEmail:
    return common_pb2.PlatformEmail(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        kind=row.kind,
        recipient=row.recipient,
        subject=row.subject,
        status=row.status,
        attempts=row.attempts,
        provider_message_id=row.provider_message_id or "",
        error=row.error or "",
        created_at=timestamp(row.created_at),
        finished_at=timestamp(row.finished_at),
        job_status=STATUS_TO_PROTO[JobStatus(row.job_status)],  # type: ignore[arg-type]
    )


class PlatformEmailRpcs:
    engine: AsyncEngine
    platform: platform_store.PlatformMail | None

    async def QueueOperatorEmail(
        self, request: ledger_providers_pb2.QueueOperatorEmailRequest, context: Context
    ) -> ledger_providers_pb2.QueueOperatorEmailResponse:
        problems: list[tuple[str, str]] = []
        if request.kind not in platform_store.KINDS:
            problems.append(("kind", f"must be one of {', '.join(platform_store.KINDS)}"))
        if not 1 <= len(request.to) <= MAX_RECIPIENTS:
            problems.append(("to", f"one to {MAX_RECIPIENTS} addresses"))
        # Operator settings, not tenant input: a plain shape check (the provider has the last word).
        to = [address.strip() for address in request.to]
        problems += [(f"to[{i}]", "must be an email address") for i, a in enumerate(to) if not valid_contact(a)]
        if not request.subject.strip() or len(request.subject) > MAX_SUBJECT or "\n" in request.subject:
            problems.append(("subject", f"one line of at most {MAX_SUBJECT} characters"))
        if len(request.text) > MAX_TEXT:
            problems.append(("text", f"at most {MAX_TEXT} characters"))
        if not request.dedupe_key or len(request.dedupe_key) > 300:
            problems.append(("dedupe_key", "is required (at most 300 characters)"))
        if problems:
            await abort_invalid(context, problems)
        if self.platform is None:
            await abort_failed_precondition(
                context, "no platform email provider is configured (HERALD_PLATFORM_EMAIL_PROVIDER)"
            )
        async with self.engine.begin() as conn:
            job_id = await platform_store.queue_operator_email(
                conn, self.platform, request.kind, to, request.subject, request.text, request.dedupe_key
            )
        return ledger_providers_pb2.QueueOperatorEmailResponse(id=str(job_id) if job_id else "")

    async def ListPlatformEmails(
        self, request: ledger_providers_pb2.ListPlatformEmailsRequest, context: Context
    ) -> ledger_providers_pb2.ListPlatformEmailsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id") if request.tenant_id else None
        problems = []
        page_size = request.page_size or 50
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            problems.append(("page_size", f"must be between 1 and {MAX_PAGE_SIZE}"))
        if request.kind and request.kind not in platform_store.KINDS:
            problems.append(("kind", f"must be one of {', '.join(platform_store.KINDS)}"))
        before = parse_id(request.cursor) if request.cursor else None
        if request.cursor and before is None:
            problems.append(("cursor", "is not a cursor this API returned"))
        if problems:
            await abort_invalid(context, problems)
        async with self.engine.connect() as conn:
            rows, next_cursor = await platform_store.list_platform_emails(
                conn, tenant_id, request.kind, page_size, before
            )
        return ledger_providers_pb2.ListPlatformEmailsResponse(
            entries=[platform_email_to_proto(r) for r in rows], next_cursor=next_cursor
        )
