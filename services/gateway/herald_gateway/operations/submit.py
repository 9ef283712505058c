"""Submitting one webhook or one email: validated, made the router's `Submission`, and sent
through the coalescing batcher (concurrent requests reach the router as one SubmitJobs call)."""

from __future__ import annotations

from dataclasses import dataclass, field

from herald.v1 import common_pb2, gateway_pb2, ledger_jobs_pb2, router_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import ask, refuse_invalid, refused
from herald_gateway.idempotency import MAX_KEY_LENGTH
from herald_gateway.operations.base import OperationsBase
from herald_gateway.operations.validation import email_problems, keys_problems, nul_fields, webhook_problems


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

    @classmethod
    def of_grpc(cls, request: gateway_pb2.SendWebhookRequest, request_hash: bytes = b"") -> WebhookInput:
        """A SendWebhook request (alone, or an item of SubmitWebhooks) as the operations take it."""
        return cls(
            url=request.url,
            body=request.body,
            content_type=request.content_type or "application/json",
            headers=dict(request.headers),
            priority=request.priority,
            idempotency_key=request.idempotency_key,
            ordering_key=request.ordering_key,
            request_hash=request_hash,
        )


@dataclass(frozen=True)
class Submitted:
    job: common_pb2.Job
    # The idempotency key named a job created by an earlier request: this is that job.
    replayed: bool = False


def submitted(outcome: ledger_jobs_pb2.DraftOutcome) -> Submitted:
    """The job a submission created (or named again), or the error its refusal is."""
    if not outcome.HasField("job"):
        raise refused(outcome.rejection, outcome.detail)
    return Submitted(outcome.job, outcome.replayed)


def webhook_submission(principal: Principal, item: WebhookInput, request_hash: bytes) -> router_pb2.Submission:
    """The item as the router takes it, or Invalid: the rules of POST /v1/webhooks."""
    problems = webhook_problems(item.url, item.headers, item.body, item.idempotency_key)
    problems += keys_problems(item.priority, item.idempotency_key, item.ordering_key)
    request = common_pb2.WebhookRequest(
        url=item.url, headers=item.headers, body=item.body, content_type=item.content_type
    )
    problems += [(name, "must not contain NUL") for name in nul_fields(request)]
    refuse_invalid(problems)
    submission = _submission(principal, item.priority, item.idempotency_key, item.ordering_key, request_hash)
    submission.channel = common_pb2.CHANNEL_WEBHOOK
    submission.webhook.CopyFrom(request)
    return submission


def email_submission(
    principal: Principal,
    email: common_pb2.EmailRequest,
    priority: int,
    idempotency_key: str,
    ordering_key: str,
    request_hash: bytes,
) -> router_pb2.Submission:
    """The item as the router takes it, or Invalid: the rules of POST /v1/emails."""
    problems = email_problems(email) + keys_problems(priority, idempotency_key, ordering_key)
    if len(idempotency_key) > MAX_KEY_LENGTH:
        problems.append(("idempotency_key", f"must be at most {MAX_KEY_LENGTH} characters"))
    problems += [(name, "must not contain NUL") for name in nul_fields(email)]
    refuse_invalid(problems)
    submission = _submission(principal, priority, idempotency_key, ordering_key, request_hash)
    submission.channel = common_pb2.CHANNEL_EMAIL
    submission.email.CopyFrom(email)
    return submission


def _submission(
    principal: Principal, priority: int, idempotency_key: str, ordering_key: str, request_hash: bytes
) -> router_pb2.Submission:
    """What every submission carries besides its channel and request; the hash only with a key."""
    return router_pb2.Submission(
        tenant_id=principal.tenant_id,
        plan=principal.plan,  # type: ignore[arg-type]
        requested_priority=priority,  # type: ignore[arg-type]
        idempotency_key=idempotency_key,
        ordering_key=ordering_key,
        request_hash=request_hash if idempotency_key else b"",
    )


class SubmitOperations(OperationsBase):
    async def send_webhook(self, principal: Principal, item: WebhookInput) -> Submitted:
        submission = webhook_submission(principal, item, item.request_hash)
        if self.target_check is not None:
            problems = await self.target_check.problems(item.url)
            refuse_invalid(problems)
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

    async def _submit_one(self, submission: router_pb2.Submission, what: str) -> Submitted:
        return submitted(await ask(self.submitter.submit(submission), what))
