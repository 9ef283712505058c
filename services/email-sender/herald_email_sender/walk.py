"""The fallback walk: one delivery attempt of one email job over the tenant's providers.

Which providers: with no provider pinned, all of the tenant's providers, highest priority
first; with `provider_id` pinned, that provider and then `fallback_provider_id` if named,
and nothing else. The first acceptance ends the walk.

The verdict decides what happens to the job:
- ACCEPTED: delivered, through `result.accepted`.
- FAILED_PERMANENTLY: every provider refused for a reason no retry fixes (or there was no
  provider to try): fail the job now.
- FAILED_TRANSIENTLY: at least one provider failed transiently or was skipped by its open
  circuit: the whole walk counts as one of the job's attempts, and the next attempt walks
  again from the top, after the backoff (at least `retry_after_s`, when a provider gave one).

Credentials: `open_credential` is called for a provider right before its call and the
result is dropped right after; providers that are skipped, or that the walk never reaches,
are never decrypted.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from herald.v1 import common_pb2
from herald_email_sender import message
from herald_email_sender.breaker import BreakerBoard
from herald_email_sender.dispatch import Senders, provider_name
from herald_email_sender.outcome import Outcome, SendResult, permanent, safe_text

OpenCredential = Callable[[common_pb2.ProviderConfig], common_pb2.ProviderCredential]
OnAttempt = Callable[["Attempt"], Awaitable[None]]
# The walk's error (the job row's last_error) names every provider, so it may run longer than one.
MAX_SUMMARY_CHARS = 1000


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    FAILED_PERMANENTLY = "failed_permanently"
    FAILED_TRANSIENTLY = "failed_transiently"


@dataclass(frozen=True)
class Attempt:
    """One provider in one walk: a call, or a skip (outcome SKIPPED, no call made), or a
    refusal without a call (outcome PERMANENT, status 0: credential unusable, provider gone)."""

    provider_id: str
    provider: str  # the kind: "sendgrid", "resend", "postmark", "smtp"
    outcome: Outcome
    status_code: int
    duration_ms: int
    error: str
    message_id: str
    started_at: datetime
    # Whether the provider was actually called: what the ledger's attempt rows are about.
    called: bool
    retry_after_s: float | None = None


@dataclass(frozen=True)
class WalkResult:
    verdict: Verdict
    attempts: tuple[Attempt, ...]
    # For the job row: why the walk failed, one clause per provider; empty when accepted.
    error: str = ""
    # The largest Retry-After any provider gave (bounded); None when none gave one.
    retry_after_s: float | None = None

    @property
    def accepted(self) -> Attempt | None:
        return next((a for a in self.attempts if a.outcome is Outcome.ACCEPTED), None)


def plan(
    providers: Sequence[common_pb2.ProviderConfig], provider_id: str = "", fallback_provider_id: str = ""
) -> list[common_pb2.ProviderConfig | str]:
    """The providers to try, in order. A pinned id that is not among the tenant's providers
    (deleted since the send was accepted) stays in the plan as its id, to be recorded as a
    permanent refusal rather than silently dropped. A fallback counts only with a pinned
    provider (`walk` refuses a request that names one alone)."""
    if not provider_id:
        # Stable: equal priorities keep the order the caller gave.
        by_priority = sorted(providers, key=_priority_first)
        return [*by_priority]
    by_id = {p.id: p for p in providers}
    chosen: list[common_pb2.ProviderConfig | str] = [by_id.get(provider_id, provider_id)]
    if fallback_provider_id and fallback_provider_id != provider_id:
        chosen.append(by_id.get(fallback_provider_id, fallback_provider_id))
    return chosen


def _priority_first(config: common_pb2.ProviderConfig) -> int:
    return -config.priority


async def walk(
    request: common_pb2.EmailRequest,
    providers: Sequence[common_pb2.ProviderConfig],
    open_credential: OpenCredential,
    *,
    senders: Senders,
    tenant_id: str,
    idempotency_key: str,
    breakers: BreakerBoard | None = None,
    on_attempt: OnAttempt | None = None,
) -> WalkResult:
    """Walks the providers (see the module docstring) and reports every one it considered.

    `open_credential(config)` returns the decrypted credential; if it raises, that provider
    is a permanent refusal without a call. `on_attempt` runs after each provider, before the
    next: the place to persist the attempt at once and to tell JetStream the message is still
    in progress (a walk over several slow providers can outlast AckWait)."""
    if not request.provider_id and request.fallback_provider_id:
        return _result([], "a fallback provider was named without a pinned provider")
    problems = message.header_problems(request)
    if problems:
        # The gateway refuses these; a job that carries one anyway fails before any provider.
        return _result([], "; ".join(problems))
    chosen = plan(providers, request.provider_id, request.fallback_provider_id)
    if not chosen:
        return _result([], "the tenant has no email provider configured")
    attempts: list[Attempt] = []
    for entry in chosen:
        attempt = await _try(entry, request, open_credential, senders, tenant_id, idempotency_key, breakers)
        attempts.append(attempt)
        if on_attempt is not None:
            await on_attempt(attempt)
        if attempt.outcome is Outcome.ACCEPTED:
            break
    return _result(attempts)


async def _try(
    entry: common_pb2.ProviderConfig | str,
    request: common_pb2.EmailRequest,
    open_credential: OpenCredential,
    senders: Senders,
    tenant_id: str,
    idempotency_key: str,
    breakers: BreakerBoard | None,
) -> Attempt:
    started_at = datetime.now(UTC)
    if isinstance(entry, str):
        return _no_call(entry, "unknown", started_at, permanent(f"provider {entry} is not configured for this tenant"))
    config = entry
    kind = provider_name(config.provider)
    if config.secret_error:
        return _no_call(config.id, kind, started_at, permanent("the stored credential cannot be decrypted"))
    if breakers is not None and not breakers.allow(tenant_id, config.id, kind):
        skipped = SendResult(Outcome.SKIPPED, error="skipped: circuit open after repeated transient failures")
        return _no_call(config.id, kind, started_at, skipped)
    try:
        credential = open_credential(config)
    except Exception as error:  # any failure to open is this provider's, not the walk's
        if breakers is not None:
            breakers.release(tenant_id, config.id)
        reason = f"the stored credential cannot be opened ({type(error).__name__})"
        return _no_call(config.id, kind, started_at, permanent(reason))
    began = time.perf_counter()
    try:
        result = await senders.send(config, credential, request, idempotency_key)
    except BaseException:
        # Cancelled (shutdown): no outcome to report, but a half-open probe slot to free.
        if breakers is not None:
            breakers.release(tenant_id, config.id)
        raise
    finally:
        del credential
    duration_ms = int((time.perf_counter() - began) * 1000)
    if breakers is not None:
        breakers.record(tenant_id, config.id, kind, result.outcome)
    return Attempt(
        provider_id=config.id,
        provider=kind,
        outcome=result.outcome,
        status_code=result.status_code,
        duration_ms=duration_ms,
        error=result.error,
        message_id=result.message_id,
        started_at=started_at,
        called=True,
        retry_after_s=result.retry_after_s,
    )


def _no_call(provider_id: str, kind: str, started_at: datetime, result: SendResult) -> Attempt:
    return Attempt(
        provider_id=provider_id,
        provider=kind,
        outcome=result.outcome,
        status_code=0,
        duration_ms=0,
        error=result.error,
        message_id="",
        started_at=started_at,
        called=False,
    )


def _result(attempts: list[Attempt], reason: str = "") -> WalkResult:
    if any(a.outcome is Outcome.ACCEPTED for a in attempts):
        return WalkResult(Verdict.ACCEPTED, tuple(attempts))
    summary = "; ".join(f"{a.provider} {a.provider_id}: {a.error}" for a in attempts)
    error = reason or safe_text(summary, limit=MAX_SUMMARY_CHARS)
    waits = [a.retry_after_s for a in attempts if a.retry_after_s is not None]
    retry_after = max(waits) if waits else None
    if attempts and any(a.outcome in (Outcome.TRANSIENT, Outcome.SKIPPED) for a in attempts):
        return WalkResult(Verdict.FAILED_TRANSIENTLY, tuple(attempts), error, retry_after)
    return WalkResult(Verdict.FAILED_PERMANENTLY, tuple(attempts), error, retry_after)
