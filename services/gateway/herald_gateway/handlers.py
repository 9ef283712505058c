"""The gateway's operations, shared by the HTTP and gRPC surfaces."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import grpc

from herald.crypto import issue_api_key
from herald.grpcio.errors import field_violations
from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_pb2, ledger_pb2_grpc, router_pb2, router_pb2_grpc
from herald_gateway.auth import Principal
from herald_gateway.errors import Invalid, NotFound, Unavailable

MAX_URL_LENGTH = 2048
MAX_HEADERS = 50
MAX_BODY_BYTES = 5 * 1024 * 1024
# Headers Herald sets itself or that HTTP reserves for the connection.
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive"}
)
RESERVED_HEADER_PREFIXES = ("webhook-", "x-webhook-", "x-herald-")


@dataclass
class WebhookInput:
    url: str
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    priority: int = common_pb2.PRIORITY_UNSPECIFIED
    idempotency_key: str = ""


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


def _translate(error: grpc.aio.AioRpcError, what: str) -> Exception:
    code = error.code()
    if code == grpc.StatusCode.NOT_FOUND:
        return NotFound(f"{what} not found")
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return Invalid(field_violations(error) or [("request", error.details() or "invalid")])
    return Unavailable(f"{what}: a dependency is unavailable; retry shortly")


class Handlers:
    def __init__(
        self, ledger: ledger_pb2_grpc.LedgerServiceAsyncStub, router: router_pb2_grpc.RouterServiceAsyncStub
    ) -> None:
        self.ledger = ledger
        self.router = router

    async def send_webhook(self, principal: Principal, item: WebhookInput) -> common_pb2.Job:
        problems = validate_webhook(item)
        if problems:
            raise Invalid(problems)
        submission = router_pb2.Submission(
            tenant_id=principal.tenant_id,
            plan=principal.plan,  # type: ignore[arg-type]
            channel=common_pb2.CHANNEL_WEBHOOK,
            requested_priority=item.priority,  # type: ignore[arg-type]
            idempotency_key=item.idempotency_key,
            webhook=common_pb2.WebhookRequest(
                url=item.url, headers=item.headers, body=item.body, content_type=item.content_type
            ),
        )
        try:
            response = await self.router.SubmitJobs(router_pb2.SubmitJobsRequest(submissions=[submission]))
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "webhook") from error
        job: common_pb2.Job = response.jobs[0]
        return job

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
        job.job.webhook.body = b""
        return job.job, list(attempts.attempts)

    async def list_jobs(self, principal: Principal, request: ledger_pb2.ListJobsRequest) -> JobPage:
        request.tenant_id = principal.tenant_id
        try:
            page = await self.ledger.ListJobs(request)
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "jobs") from error
        return JobPage(jobs=list(page.jobs), next_cursor=page.next_cursor)

    async def create_tenant(self, name: str, plan: int) -> tuple[common_pb2.Tenant, str]:
        """Creates the tenant and its first API key; the key is returned once, never stored."""
        try:
            request = ledger_pb2.CreateTenantRequest(name=name, plan=plan)  # type: ignore[arg-type]
            tenant = (await self.ledger.CreateTenant(request)).tenant
            key = issue_api_key()
            await self.ledger.CreateApiKey(
                ledger_pb2.CreateApiKeyRequest(
                    tenant_id=tenant.id, name="initial", key_hash=key.sha256, public_id=key.public_id
                )
            )
        except grpc.aio.AioRpcError as error:
            raise _translate(error, "tenant") from error
        return tenant, key.plaintext
