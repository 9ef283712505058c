"""The gateway's operations, shared by the HTTP and gRPC surfaces."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

import grpc
from email_validator import EmailNotValidError, validate_email
from google.protobuf.message import Message

from herald.batching import Batcher
from herald.crypto import issue_api_key
from herald.grpcio.errors import field_violations
from herald.ids import parse_id
from herald.v1 import (
    common_pb2,
    email_sender_pb2,
    email_sender_pb2_grpc,
    ledger_pb2,
    ledger_pb2_grpc,
    router_pb2,
    router_pb2_grpc,
)
from herald_gateway.auth import Principal
from herald_gateway.errors import (
    Conflict,
    GatewayError,
    IdempotencyConflict,
    IdempotencyMismatch,
    Invalid,
    InvalidCredential,
    NotFound,
    NotRetryable,
    ProviderRefused,
    ProviderUnreachable,
    QuotaExceeded,
    SenderDomainUnverified,
    Unavailable,
)
from herald_gateway.idempotency import MAX_KEY_LENGTH
from herald_gateway.target_check import TargetCheck

MAX_URL_LENGTH = 2048
MAX_HEADERS = 50
MAX_BODY_BYTES = 5 * 1024 * 1024
PRIORITIES = frozenset(common_pb2.Priority.values())
# Headers Herald sets itself or that HTTP reserves for the connection.
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive"}
)
RESERVED_HEADER_PREFIXES = ("webhook-", "x-webhook-", "x-herald-")
# Email headers the message's own fields set, or that providers set themselves and refuse
# from callers (the email-sender refuses them too: herald_email_sender.message).
RESERVED_EMAIL_HEADERS = frozenset(
    {
        "from",
        "to",
        "cc",
        "bcc",
        "reply-to",
        "subject",
        "date",
        "message-id",
        "mime-version",
        "content-type",
        "content-transfer-encoding",
        "received",
        "dkim-signature",
        "return-path",
        "x-sg-id",
        "x-sg-eid",
    }
)


@dataclass
class WebhookInput:
    url: str
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    priority: int = common_pb2.PRIORITY_UNSPECIFIED
    idempotency_key: str = ""
    ordering_key: str = ""
    # With an idempotency key: the digest of the request (see herald_gateway.idempotency.request_hash).
    request_hash: bytes = b""


@dataclass(frozen=True)
class Submitted:
    job: common_pb2.Job
    # The idempotency key named a job created by an earlier request: this is that job.
    replayed: bool = False


# A DNS name: labels of letters, digits and hyphens, at least two of them, 253 characters at most.
DOMAIN_NAME = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$")
# Reads a dead-letter entry from the stream by sequence: the payload operators inspect.
StreamReader = Callable[[int], Awaitable[bytes | None]]


def normalize_address(address: common_pb2.EmailAddress, field: str, problems: list[tuple[str, str]]) -> None:
    """Validates an address in place (normalized form), or adds a problem."""
    try:
        address.email = validate_email(address.email, check_deliverability=False).normalized
    except EmailNotValidError as error:
        problems.append((field, str(error)))
    if any(c in address.name for c in "\r\n\0"):
        problems.append((field, "the name must be one line"))


def email_problems(email: common_pb2.EmailRequest) -> list[tuple[str, str]]:
    """Validates (and normalizes the addresses of) an email request, for both surfaces."""
    problems: list[tuple[str, str]] = []
    normalize_address(email.__getattribute__("from"), "from", problems)
    if not email.to:
        problems.append(("to", "at least one recipient"))
    for name in ("to", "cc", "bcc"):
        addresses = getattr(email, name)
        if len(addresses) > 50:
            problems.append((name, "at most 50 addresses"))
        for i, address in enumerate(addresses):
            normalize_address(address, f"{name}[{i}]", problems)
    if email.HasField("reply_to") and email.reply_to.email:
        normalize_address(email.reply_to, "reply_to", problems)
    if not email.subject or len(email.subject) > 998:
        problems.append(("subject", "1-998 characters"))
    if not email.text and not email.html:
        problems.append(("text/html", "give text, html or both"))
    if email.fallback_provider_id and not email.provider_id:
        problems.append(("fallback", "a fallback needs a pinned provider"))
    for field_name, value in (("provider", email.provider_id), ("fallback", email.fallback_provider_id)):
        if value and parse_id(value) is None:
            problems.append((field_name, "must be one of your provider ids"))
    for name, value in email.headers.items():
        if not name or not all(33 <= ord(c) < 127 and c != ":" for c in name):
            problems.append((f"headers.{name}", "is not a valid header name"))
        elif name.lower() in RESERVED_EMAIL_HEADERS:
            problems.append((f"headers.{name}", "is set by Herald or the provider; use the field for it"))
        elif any(c in value for c in "\r\n\0"):
            problems.append((f"headers.{name}", "value must be one line"))
    return problems


def domain_name(value: str) -> str | None:
    """The domain in the form Herald stores it (lower case, no trailing dot), or None."""
    name = value.strip().lower().rstrip(".")
    return name if DOMAIN_NAME.fullmatch(name) else None


@dataclass
class JobPage:
    jobs: list[common_pb2.Job]
    next_cursor: str


def validate_webhook(item: WebhookInput) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    parts = urlsplit(item.url)
    if len(item.url) > MAX_URL_LENGTH:
        problems.append(("url", f"must be at most {MAX_URL_LENGTH} characters"))
    elif parts.scheme not in ("http", "https") or not parts.hostname:
        problems.append(("url", "must be an absolute http or https URL"))
    elif parts.username or parts.password:
        problems.append(("url", "must not carry credentials; use headers"))
    if len(item.headers) > MAX_HEADERS:
        problems.append(("headers", f"at most {MAX_HEADERS} headers"))
    for name, value in item.headers.items():
        lowered = name.lower()
        if not name or not all(33 <= ord(c) < 127 and c not in '()<>@,;:\\"/[]?={}' for c in name):
            problems.append((f"headers.{name}", "is not a valid header name"))
        elif lowered in RESERVED_HEADERS or lowered.startswith(RESERVED_HEADER_PREFIXES):
            problems.append((f"headers.{name}", "is set by Herald and cannot be overridden"))
        elif any(c in value for c in "\r\n\0") or len(value) > 8192:
            problems.append((f"headers.{name}", "value must be one line of at most 8192 characters"))
    if len(item.body) > MAX_BODY_BYTES:
        problems.append(("payload", f"must be at most {MAX_BODY_BYTES} bytes"))
    if len(item.idempotency_key) > 255:
        problems.append(("idempotency_key", "must be at most 255 characters"))
    return problems


def submitted(outcome: ledger_pb2.DraftOutcome) -> Submitted:
    """The job a submission created (or named again), or the error its refusal is."""
    if not outcome.HasField("job"):
        raise refusal(outcome)
    return Submitted(outcome.job, outcome.replayed)


def refusal(outcome: ledger_pb2.DraftOutcome) -> GatewayError:
    if outcome.rejection == ledger_pb2.REJECTION_SENDER_DOMAIN_UNVERIFIED:
        return SenderDomainUnverified(outcome.detail)
    if outcome.rejection == ledger_pb2.REJECTION_IDEMPOTENCY_MISMATCH:
        return IdempotencyMismatch(outcome.detail)
    if outcome.rejection == ledger_pb2.REJECTION_IDEMPOTENCY_IN_FLIGHT:
        return IdempotencyConflict(outcome.detail)
    return QuotaExceeded(outcome.detail or "monthly quota reached")


def nul_fields(message: Message, prefix: str = "") -> list[str]:
    """Text fields holding NUL, which PostgreSQL cannot store: refused here, so one bad item
    never fails the transaction its chunk (and other requests) share in the ledger."""
    found = []
    for descriptor, value in message.ListFields():
        name = f"{prefix}{descriptor.name}"
        if descriptor.message_type is not None and descriptor.message_type.GetOptions().map_entry:
            found += [f"{name}.{k}" for k, v in value.items() if "\0" in k or (isinstance(v, str) and "\0" in v)]
        elif descriptor.type == descriptor.TYPE_MESSAGE and descriptor.is_repeated:
            for i, child in enumerate(value):
                found += nul_fields(child, f"{name}[{i}].")
        elif descriptor.type == descriptor.TYPE_MESSAGE:
            found += nul_fields(value, f"{name}.")
        elif descriptor.type == descriptor.TYPE_STRING:
            values = value if descriptor.is_repeated else [value]
            found += [name for v in values if "\0" in v][:1]
    return found


def _keys_problems(priority: int, idempotency_key: str, ordering_key: str) -> list[tuple[str, str]]:
    """The keys and the priority, for every submission: a priority the ledger does not know, or a
    NUL in a key, would fail the whole coalesced transaction other requests (and tenants) share."""
    problems = []
    if priority not in PRIORITIES:
        problems.append(("priority", "must be one of the Priority values"))
    if not idempotency_key.isprintable():
        problems.append(("idempotency_key", "must be printable characters"))
    if len(ordering_key) > 255 or "\0" in ordering_key:
        problems.append(("ordering_key", "must be at most 255 characters, without NUL"))
    return problems


def webhook_submission(principal: Principal, item: WebhookInput, request_hash: bytes) -> router_pb2.Submission:
    """The item as the router takes it, or Invalid: the rules of POST /v1/webhooks."""
    problems = validate_webhook(item) + _keys_problems(item.priority, item.idempotency_key, item.ordering_key)
    request = common_pb2.WebhookRequest(
        url=item.url, headers=item.headers, body=item.body, content_type=item.content_type
    )
    problems += [(name, "must not contain NUL") for name in nul_fields(request)]
    if problems:
        raise Invalid(problems)
    return router_pb2.Submission(
        tenant_id=principal.tenant_id,
        plan=principal.plan,  # type: ignore[arg-type]
        channel=common_pb2.CHANNEL_WEBHOOK,
        requested_priority=item.priority,  # type: ignore[arg-type]
        idempotency_key=item.idempotency_key,
        ordering_key=item.ordering_key,
        request_hash=request_hash if item.idempotency_key else b"",
        webhook=request,
    )


def email_submission(
    principal: Principal,
    email: common_pb2.EmailRequest,
    priority: int,
    idempotency_key: str,
    ordering_key: str,
    request_hash: bytes,
) -> router_pb2.Submission:
    """The item as the router takes it, or Invalid: the rules of POST /v1/emails."""
    problems = email_problems(email) + _keys_problems(priority, idempotency_key, ordering_key)
    if len(idempotency_key) > MAX_KEY_LENGTH:
        problems.append(("idempotency_key", f"must be at most {MAX_KEY_LENGTH} characters"))
    problems += [(name, "must not contain NUL") for name in nul_fields(email)]
    if problems:
        raise Invalid(problems)
    return router_pb2.Submission(
        tenant_id=principal.tenant_id,
        plan=principal.plan,  # type: ignore[arg-type]
        channel=common_pb2.CHANNEL_EMAIL,
        requested_priority=priority,  # type: ignore[arg-type]
        idempotency_key=idempotency_key,
        ordering_key=ordering_key,
        request_hash=request_hash if idempotency_key else b"",
        email=email,
    )


def _translate(error: grpc.aio.AioRpcError, what: str) -> Exception:
    code = error.code()
    if code == grpc.StatusCode.NOT_FOUND:
        return NotFound(f"{what} not found")
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return Invalid(field_violations(error) or [("request", error.details() or "invalid")])
    if code == grpc.StatusCode.ALREADY_EXISTS:
        return Conflict(f"{what} already exists")
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return Unavailable(f"{what}: {error.details()}")
    return Unavailable(f"{what}: a dependency is unavailable; retry shortly")


def _provider_error(error: grpc.aio.AioRpcError, what: str) -> Exception:
    """What the email-sender said about a provider's domain API."""
    code = error.code()
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return ProviderRefused(error.details() or "the provider refused")
    if code == grpc.StatusCode.UNAVAILABLE:
        return ProviderUnreachable(error.details() or "the provider could not be reached")
    return _translate(error, what)


def base_url_problems(base_url: str) -> list[tuple[str, str]]:
    if not base_url:
        return []
    parts = urlsplit(base_url)
    if len(base_url) > MAX_URL_LENGTH or parts.scheme not in ("http", "https") or not parts.hostname:
        return [("base_url", "must be an absolute http or https URL")]
    if parts.username or parts.password or parts.query or parts.fragment:
        return [("base_url", "must not carry credentials, a query or a fragment")]
    return []


class Handlers:
    def __init__(
        self,
        ledger: ledger_pb2_grpc.LedgerServiceAsyncStub,
        router: router_pb2_grpc.RouterServiceAsyncStub,
        email_sender: email_sender_pb2_grpc.EmailSenderServiceAsyncStub,
        dead_letter_reader: StreamReader | None = None,
    ) -> None:
        self.ledger = ledger
        self.router = router
        self.email_sender = email_sender
        # Concurrent requests reach the router as one SubmitJobs call: one hop for many jobs.
        self.submitter: Batcher[router_pb2.Submission, ledger_pb2.DraftOutcome] = Batcher(
            self._submit_many,
            max_items=256,
            max_wait=0.002,
            size_of=lambda s: s.ByteSize(),
            max_concurrent=4,
        )
        self.dead_letter_reader = dead_letter_reader
        # Refuses non-public webhook URLs at submit time (set by main; None: left to the sender).
        self.target_check: TargetCheck | None = None

    async def send_webhook(self, principal: Principal, item: WebhookInput) -> Submitted:
        submission = webhook_submission(principal, item, item.request_hash)
        if self.target_check is not None:
            problems = await self.target_check.problems(item.url)
            if problems:
                raise Invalid(problems)
        return await self._submit_one(submission, "webhook")

    async def send_email(
        self,
        principal: Principal,
        email: common_pb2.EmailRequest,
        priority: int,
        idempotency_key: str,
        ordering_key: str,
        request_hash: bytes = b"",
    ) -> Submitted:
        submission = email_submission(principal, email, priority, idempotency_key, ordering_key, request_hash)
        return await self._submit_one(submission, "email")

    async def _submit_many(self, submissions: list[router_pb2.Submission]) -> list[ledger_pb2.DraftOutcome]:
        response = await self.router.SubmitJobs(router_pb2.SubmitJobsRequest(submissions=submissions))
        return list(response.outcomes)

    async def _submit_one(self, submission: router_pb2.Submission, what: str) -> Submitted:
        try:
            outcome = await self.submitter.submit(submission)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, what) from error
        return submitted(outcome)

    async def usage(self, tenant_id: str) -> common_pb2.Usage:
        try:
            found = await self.ledger.GetUsage(ledger_pb2.GetUsageRequest(tenant_id=tenant_id))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error
        usage: common_pb2.Usage = found.usage
        return usage

    async def set_limits(self, tenant_id: str, request: ledger_pb2.SetTenantLimitsRequest) -> common_pb2.Tenant:
        if parse_id(tenant_id) is None:
            raise NotFound("tenant not found")
        request.tenant_id = tenant_id
        try:
            tenant: common_pb2.Tenant = (await self.ledger.SetTenantLimits(request)).tenant
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error
        return tenant

    async def list_suppressions(
        self, tenant_id: str, page_size: int, cursor: str
    ) -> tuple[list[common_pb2.SuppressionEntry], str]:
        try:
            page = await self.ledger.ListSuppressions(
                ledger_pb2.ListSuppressionsRequest(tenant_id=tenant_id, page_size=page_size, cursor=cursor)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "suppressions") from error
        return list(page.entries), page.next_cursor

    async def add_suppression(self, tenant_id: str, address: str) -> bool:
        entry = common_pb2.SuppressionEntry(address=address, reason="manual")
        try:
            added = await self.ledger.AddSuppressions(
                ledger_pb2.AddSuppressionsRequest(tenant_id=tenant_id, entries=[entry])
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "suppression") from error
        return added.added > 0

    async def remove_suppression(self, tenant_id: str, address: str) -> None:
        try:
            await self.ledger.RemoveSuppression(
                ledger_pb2.RemoveSuppressionRequest(tenant_id=tenant_id, address=address)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "suppression") from error

    async def get_job(self, principal: Principal, job_id: str) -> tuple[common_pb2.Job, list[common_pb2.Attempt]]:
        if parse_id(job_id) is None:
            raise NotFound("job not found")
        try:
            job = await self.ledger.GetJob(
                ledger_pb2.GetJobRequest(tenant_id=principal.tenant_id, job_id=job_id, include_request=True)
            )
            attempts = await self.ledger.ListAttempts(
                ledger_pb2.ListAttemptsRequest(tenant_id=principal.tenant_id, job_id=job_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "job") from error
        if job.job.HasField("webhook"):
            job.job.webhook.body = b""
        return job.job, list(attempts.attempts)

    async def list_jobs(self, principal: Principal, request: ledger_pb2.ListJobsRequest) -> JobPage:
        request.tenant_id = principal.tenant_id
        try:
            page = await self.ledger.ListJobs(request)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "jobs") from error
        return JobPage(jobs=list(page.jobs), next_cursor=page.next_cursor)

    async def retry_job(self, principal: Principal, job_id: str) -> ledger_pb2.RetryOutcome:
        """FAILED -> PENDING, then published again (a fresh attempt budget)."""
        if parse_id(job_id) is None:
            raise NotFound("job not found")
        outcomes = await self._retry(
            router_pb2.RouterServiceRetryJobsRequest(tenant_id=principal.tenant_id, job_ids=[job_id])
        )
        outcome = outcomes[0]
        if outcome.retried:
            return outcome
        if outcome.status == common_pb2.JOB_STATUS_UNSPECIFIED:
            raise NotFound("job not found")
        raise NotRetryable(outcome.detail)

    async def _retry(self, request: router_pb2.RouterServiceRetryJobsRequest) -> list[ledger_pb2.RetryOutcome]:
        try:
            return list((await self.router.RetryJobs(request)).outcomes)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "job") from error

    # ---- dead letters (operators) -------------------------------------------

    async def list_dead_letters(
        self, tenant_id: str, since: datetime | None, include_retried: bool, page_size: int, cursor: str
    ) -> tuple[list[common_pb2.DeadLetter], str]:
        if tenant_id and parse_id(tenant_id) is None:
            raise Invalid([("tenant_id", "must be a tenant id")])
        request = ledger_pb2.ListDeadLettersRequest(
            tenant_id=tenant_id, include_retried=include_retried, page_size=page_size, cursor=cursor
        )
        if since is not None:
            request.since.FromDatetime(since)
        try:
            page = await self.ledger.ListDeadLetters(request)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "dead letters") from error
        return list(page.entries), page.next_cursor

    async def list_platform_emails(
        self, tenant_id: str, kind: str, page_size: int, cursor: str
    ) -> tuple[list[common_pb2.PlatformEmail], str]:
        """The platform email log (operators), newest first."""
        if tenant_id and parse_id(tenant_id) is None:
            raise Invalid([("tenant_id", "must be a tenant id")])
        if cursor and parse_id(cursor) is None:
            raise Invalid([("cursor", "is not a cursor this API returned")])
        request = ledger_pb2.ListPlatformEmailsRequest(
            tenant_id=tenant_id, kind=kind, page_size=page_size, cursor=cursor
        )
        try:
            page = await self.ledger.ListPlatformEmails(request)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "platform emails") from error
        return list(page.entries), page.next_cursor

    async def get_dead_letter(self, job_id: str) -> tuple[common_pb2.DeadLetter, common_pb2.Job]:
        """The ledger's entry, with the work message read from the dead-letter stream."""
        if parse_id(job_id) is None:
            raise NotFound("dead letter not found")
        try:
            found = await self.ledger.GetDeadLetter(ledger_pb2.GetDeadLetterRequest(job_id=job_id))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "dead letter") from error
        entry: common_pb2.DeadLetter = found.entry
        if entry.stream_sequence and self.dead_letter_reader is not None:
            data = await self.dead_letter_reader(entry.stream_sequence)
            if data:
                stored = common_pb2.DeadLetter()
                stored.ParseFromString(data)
                if stored.job_id == entry.job_id:
                    entry.work_message = stored.work_message
                    entry.work_subject = stored.work_subject
        return entry, found.job

    async def retry_dead_letters(
        self, job_ids: list[str], all_waiting: bool, since: datetime | None
    ) -> list[ledger_pb2.RetryOutcome]:
        if all_waiting == bool(job_ids):
            raise Invalid([("job_ids/all", "give job ids, or all (optionally since a time)")])
        bad = [(f"job_ids[{i}]", "must be a job id") for i, j in enumerate(job_ids) if parse_id(j) is None]
        if bad:
            raise Invalid(bad)
        request = router_pb2.RouterServiceRetryJobsRequest(job_ids=job_ids, all_dead_letters=all_waiting)
        if since is not None:
            request.since.FromDatetime(since)
        return await self._retry(request)

    # ---- sending domains ------------------------------------------------------

    async def register_domain(self, tenant_id: str, name: str, provider_id: str) -> common_pb2.SendingDomain:
        """Registers the domain with the chosen provider (through the email-sender) and keeps
        the DNS records it answered. Sends from it are refused until it is verified. Postmark's
        domains API uses the account token stored (sealed) with that provider's credential."""
        domain = domain_name(name)
        problems = [] if domain else [("domain", "must be a domain name such as mail.example.com")]
        if parse_id(provider_id) is None:
            problems.append(("provider_id", "must be one of your provider ids"))
        if problems or domain is None:
            raise Invalid(problems)
        if any(d.name == domain for d in await self.list_domains(tenant_id)):
            raise Conflict(f"domain {domain} is registered already; verify it or delete it first")
        try:
            registered = await self.email_sender.RegisterDomain(
                email_sender_pb2.RegisterDomainRequest(tenant_id=tenant_id, provider_id=provider_id, domain=domain),
                timeout=60,
            )
        except grpc.aio.AioRpcError as error:
            raise _provider_error(error, "provider") from error
        record = registered.domain
        record.tenant_id = tenant_id
        record.name = domain
        try:
            created: common_pb2.SendingDomain = (
                await self.ledger.CreateDomain(ledger_pb2.CreateDomainRequest(domain=record))
            ).domain
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "domain") from error
        return created

    async def verify_domain(self, tenant_id: str, domain_id: str) -> common_pb2.SendingDomain:
        current = await self.get_domain(tenant_id, domain_id)
        if not current.provider_id:
            raise Conflict(
                "the provider this domain was registered with was deleted; delete the domain and register it again"
            )
        try:
            checked = await self.email_sender.VerifyDomain(
                email_sender_pb2.VerifyDomainRequest(
                    tenant_id=tenant_id,
                    provider_id=current.provider_id,
                    provider_domain_id=current.provider_domain_id,
                ),
                timeout=60,
            )
        except grpc.aio.AioRpcError as error:
            raise _provider_error(error, "provider") from error
        state = checked.domain
        try:
            updated: common_pb2.SendingDomain = (
                await self.ledger.UpdateDomain(
                    ledger_pb2.UpdateDomainRequest(
                        tenant_id=tenant_id,
                        domain_id=domain_id,
                        verified=state.verified,
                        records=state.records,
                        provider_status=state.provider_status,
                    )
                )
            ).domain
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "domain") from error
        return updated

    async def get_domain(self, tenant_id: str, domain_id: str) -> common_pb2.SendingDomain:
        if parse_id(domain_id) is None:
            raise NotFound("domain not found")
        try:
            found: common_pb2.SendingDomain = (
                await self.ledger.GetDomain(ledger_pb2.GetDomainRequest(tenant_id=tenant_id, domain_id=domain_id))
            ).domain
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "domain") from error
        return found

    async def list_domains(self, tenant_id: str) -> list[common_pb2.SendingDomain]:
        try:
            return list((await self.ledger.ListDomains(ledger_pb2.ListDomainsRequest(tenant_id=tenant_id))).domains)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "domains") from error

    async def delete_domain(self, tenant_id: str, domain_id: str) -> None:
        if parse_id(domain_id) is None:
            raise NotFound("domain not found")
        try:
            await self.ledger.DeleteDomain(ledger_pb2.DeleteDomainRequest(tenant_id=tenant_id, domain_id=domain_id))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "domain") from error

    async def create_tenant(self, name: str, plan: int, contact_email: str = "") -> tuple[common_pb2.Tenant, str]:
        """Creates the tenant and its first API key; the key is returned once, never stored."""
        try:
            request = ledger_pb2.CreateTenantRequest(name=name, plan=plan, contact_email=contact_email)  # type: ignore[arg-type]
            tenant: common_pb2.Tenant = (await self.ledger.CreateTenant(request)).tenant
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error
        _key, plaintext = await self.create_api_key(tenant.id, "initial")
        return tenant, plaintext

    # ---- API keys ----------------------------------------------------------

    async def create_api_key(self, tenant_id: str, name: str) -> tuple[common_pb2.ApiKey, str]:
        """A new key for the tenant; its plaintext is returned once and never stored."""
        key = issue_api_key()
        try:
            created = await self.ledger.CreateApiKey(
                ledger_pb2.CreateApiKeyRequest(
                    tenant_id=tenant_id, name=name, key_hash=key.sha256, public_id=key.public_id
                )
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error
        described = common_pb2.ApiKey(id=created.key_id, tenant_id=tenant_id, name=name, public_id=key.public_id)
        described.created_at.CopyFrom(created.created_at)
        return described, key.plaintext

    async def list_api_keys(self, tenant_id: str) -> list[common_pb2.ApiKey]:
        try:
            return list((await self.ledger.ListApiKeys(ledger_pb2.ListApiKeysRequest(tenant_id=tenant_id))).keys)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error

    async def revoke_api_key(self, tenant_id: str, key_id: str) -> common_pb2.ApiKey:
        if parse_id(key_id) is None:
            raise NotFound("api key not found")
        try:
            revoked = await self.ledger.RevokeApiKey(ledger_pb2.RevokeApiKeyRequest(tenant_id=tenant_id, key_id=key_id))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "api key") from error
        key: common_pb2.ApiKey = revoked.key
        return key

    # ---- tenants (operators) ----------------------------------------------

    async def list_tenants(self, page_size: int, cursor: str) -> tuple[list[common_pb2.Tenant], str]:
        try:
            page = await self.ledger.ListTenants(ledger_pb2.ListTenantsRequest(page_size=page_size, cursor=cursor))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenants") from error
        return list(page.tenants), page.next_cursor

    async def get_tenant(self, tenant_id: str) -> common_pb2.Tenant:
        if parse_id(tenant_id) is None:
            raise NotFound("tenant not found")
        try:
            tenant: common_pb2.Tenant = (
                await self.ledger.GetTenant(ledger_pb2.GetTenantRequest(tenant_id=tenant_id))
            ).tenant
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error
        return tenant

    async def update_tenant(
        self, tenant_id: str, plan: int, disabled: bool | None, contact_email: str | None = None
    ) -> common_pb2.Tenant:
        if parse_id(tenant_id) is None:
            raise NotFound("tenant not found")
        request = ledger_pb2.UpdateTenantRequest(tenant_id=tenant_id, plan=plan)  # type: ignore[arg-type]
        if disabled is not None:
            request.disabled = disabled
        if contact_email is not None:
            request.contact_email = contact_email
        try:
            tenant: common_pb2.Tenant = (await self.ledger.UpdateTenant(request)).tenant
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error
        return tenant

    async def rotate_master_key(self) -> ledger_pb2.ReencryptSecretsResponse:
        try:
            result: ledger_pb2.ReencryptSecretsResponse = await self.ledger.ReencryptSecrets(
                ledger_pb2.ReencryptSecretsRequest(batch_size=200)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "secrets") from error
        return result

    # ---- providers ---------------------------------------------------------

    async def _validate_credential(self, credential: common_pb2.ProviderCredential, base_url: str) -> None:
        """Asks the provider, through the email-sender, before anything is stored."""
        try:
            verdict = await self.email_sender.ValidateCredential(
                email_sender_pb2.ValidateCredentialRequest(credential=credential, base_url=base_url), timeout=30
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "provider credential") from error
        if verdict.provider_unreachable:
            raise ProviderUnreachable(verdict.reason)
        if not verdict.valid:
            raise InvalidCredential(verdict.reason)

    async def create_provider(
        self,
        tenant_id: str,
        credential: common_pb2.ProviderCredential,
        priority: int,
        base_url: str,
        options: dict[str, str],
    ) -> common_pb2.ProviderConfig:
        problems = base_url_problems(base_url)
        if problems:
            raise Invalid(problems)
        await self._validate_credential(credential, base_url)
        request = ledger_pb2.CreateProviderRequest(
            tenant_id=tenant_id, credential=credential, priority=priority, base_url=base_url, options=options
        )
        try:
            provider: common_pb2.ProviderConfig = (await self.ledger.CreateProvider(request)).provider
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "provider") from error
        return provider

    async def list_providers(self, tenant_id: str) -> list[common_pb2.ProviderConfig]:
        try:
            return list(
                (await self.ledger.ListProviders(ledger_pb2.ListProvidersRequest(tenant_id=tenant_id))).providers
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "providers") from error

    async def update_provider(
        self, tenant_id: str, provider_id: str, request: ledger_pb2.UpdateProviderRequest
    ) -> common_pb2.ProviderConfig:
        if parse_id(provider_id) is None:
            raise NotFound("provider not found")
        request.tenant_id, request.provider_id = tenant_id, provider_id
        if request.HasField("base_url") and base_url_problems(request.base_url):
            raise Invalid(base_url_problems(request.base_url))
        new_token = request.account_token if request.HasField("account_token") else ""
        if request.HasField("credential") or new_token:
            current = [p for p in await self.list_providers(tenant_id) if p.id == provider_id]
            if not current:
                raise NotFound("provider not found")
            base_url = request.base_url if request.HasField("base_url") else current[0].base_url
            if request.HasField("account_token") and current[0].provider != common_pb2.EMAIL_PROVIDER_POSTMARK:
                raise Invalid([("account_token", "only Postmark providers take an account token")])
            if request.HasField("credential"):
                request.credential.provider = current[0].provider
                if new_token:
                    request.credential.account_token = new_token
                await self._validate_credential(request.credential, base_url)
            else:
                # Only the account token changes: check it alone (the server token stays).
                await self._validate_credential(
                    common_pb2.ProviderCredential(provider=current[0].provider, account_token=new_token), base_url
                )
        try:
            provider: common_pb2.ProviderConfig = (await self.ledger.UpdateProvider(request)).provider
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "provider") from error
        return provider

    async def delete_provider(self, tenant_id: str, provider_id: str) -> None:
        if parse_id(provider_id) is None:
            raise NotFound("provider not found")
        try:
            await self.ledger.DeleteProvider(
                ledger_pb2.DeleteProviderRequest(tenant_id=tenant_id, provider_id=provider_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "provider") from error

    # ---- webhook signing secret ------------------------------------------

    async def generate_webhook_secret(self, tenant_id: str) -> tuple[str, common_pb2.WebhookSecretStatus]:
        try:
            made = await self.ledger.GenerateWebhookSecret(ledger_pb2.GenerateWebhookSecretRequest(tenant_id=tenant_id))
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.ALREADY_EXISTS:
                raise Conflict("a webhook secret exists; rotate it or delete it first") from error
            raise _translate(error, "webhook secret") from error
        return made.secret, made.status

    async def rotate_webhook_secret(self, tenant_id: str) -> tuple[str, common_pb2.WebhookSecretStatus]:
        try:
            made = await self.ledger.RotateWebhookSecret(ledger_pb2.RotateWebhookSecretRequest(tenant_id=tenant_id))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "webhook secret") from error
        return made.secret, made.status

    async def webhook_secret_status(self, tenant_id: str) -> common_pb2.WebhookSecretStatus:
        try:
            found = await self.ledger.GetWebhookSecretStatus(
                ledger_pb2.GetWebhookSecretStatusRequest(tenant_id=tenant_id)
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "webhook secret") from error
        status: common_pb2.WebhookSecretStatus = found.status
        return status

    async def delete_webhook_secret(self, tenant_id: str) -> None:
        try:
            await self.ledger.DeleteWebhookSecret(ledger_pb2.DeleteWebhookSecretRequest(tenant_id=tenant_id))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "webhook secret") from error
