"""What one provider call concluded, and the rules every adapter shares to get there.

Each adapter maps every answer (and every way of not getting one) onto exactly one of
three outcomes, because the walk and the retry schedule decide on nothing else:
accepted (with the provider's message id), permanent (trying again cannot help) or
transient (trying again later may). Error texts are shown to tenants and logged, so
they are built from status codes, exception type names and the provider's own error
message, and `safe_text` removes the credential should a provider ever echo it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any

import orjson

from herald.webhooks.receiver_client import Answer
from herald.webhooks.retry_policy import ReceiverCallError
from herald.webhooks.target_guard import PROVIDER_REFUSED, TargetRefused

# How long one provider call may take before it counts as a transient failure.
SEND_TIMEOUT_S = 15.0
# A Retry-After beyond this is treated as this: the job's own schedule (3 walks) is far
# shorter, and a provider's "come back tomorrow" must not park a job for a day.
MAX_RETRY_AFTER_S = 3600.0
# Provider error texts are cut to this length before they reach a row or a log line.
MAX_ERROR_CHARS = 300
# Statuses that mean "not now" rather than "not this": request timeout, too early, rate limited.
TRANSIENT_4XX = frozenset({408, 425, 429})


class Outcome(StrEnum):
    ACCEPTED = "accepted"
    PERMANENT = "permanent"
    TRANSIENT = "transient"
    # Only in a walk: the provider's circuit was open, so it was not called at all.
    SKIPPED = "skipped"


@dataclass(frozen=True)
class SendResult:
    outcome: Outcome
    # The HTTP status or SMTP reply code; 0 when nothing was answered (timeout, refused connection).
    status_code: int = 0
    # The provider's id for the accepted message (SendGrid X-Message-Id, Resend id, Postmark
    # MessageID, SMTP Message-ID): provider events (bounces, opens) refer to it.
    message_id: str = ""
    # Why it failed, in words safe to show the tenant; a note on an accepted send (refused recipients).
    error: str = ""
    # Seconds the provider asked us to wait (Retry-After), bounded by MAX_RETRY_AFTER_S.
    retry_after_s: float | None = None

    @property
    def accepted(self) -> bool:
        return self.outcome is Outcome.ACCEPTED


def accepted(status_code: int, message_id: str, note: str = "") -> SendResult:
    return SendResult(Outcome.ACCEPTED, status_code, message_id, note)


def permanent(error: str, status_code: int = 0) -> SendResult:
    return SendResult(Outcome.PERMANENT, status_code, error=error)


def transient(error: str, status_code: int = 0, retry_after_s: float | None = None) -> SendResult:
    return SendResult(Outcome.TRANSIENT, status_code, error=error, retry_after_s=retry_after_s)


def classify_status(status_code: int) -> Outcome:
    """The default reading of an HTTP status: 2xx accepted; 408/425/429 and 5xx transient;
    everything else (401/403 credentials, 400/422 malformed or rejected, 3xx a wrong base
    URL) permanent, because sending the same request again would get the same answer."""
    if 200 <= status_code < 300:
        return Outcome.ACCEPTED
    if status_code >= 500 or status_code in TRANSIENT_4XX:
        return Outcome.TRANSIENT
    return Outcome.PERMANENT


def from_status(response: Answer, error: str, secret: str = "") -> SendResult:
    """A failed answer with its default outcome and, when transient, its Retry-After."""
    outcome = classify_status(response.status_code)
    text = safe_text(f"{response.status_code} {error}".strip(), secret)
    if outcome is Outcome.TRANSIENT:
        return transient(text, response.status_code, parse_retry_after(response.header("retry-after")))
    return permanent(text, response.status_code)


# What the guarded client raises when there is no answer.
NoAnswer = TargetRefused | ReceiverCallError
# Problems with the URL's form (not with where it leads): configuration, shown as such.
URL_PROBLEMS = frozenset({"scheme", "malformed"})


def error_name(error: NoAnswer) -> str:
    """The name shown for a failed call: the client library's exception (`ClientConnectorError`,
    `ConnectionTimeoutError`), never its text, which may hold addresses."""
    cause = error.__cause__
    return type(cause).__name__ if cause is not None else type(error).__name__


def from_http_error(error: NoAnswer, timeout_s: float) -> SendResult:
    """No answer. A timeout does not prove the provider dropped the message (hence idempotency
    keys); a URL the client cannot use is configuration, which no retry fixes, and an address
    the target guard refuses is policy, with one answer whatever the reason."""
    if isinstance(error, TargetRefused):
        if error.problem.code in URL_PROBLEMS:
            return permanent(f"the provider URL is unusable ({error.problem.code})")
        return permanent(f"the provider's address is refused: {PROVIDER_REFUSED}")
    if error.kind == "invalid_url":
        return permanent(f"the provider URL is unusable ({error_name(error)})")
    if error.kind == "timeout":
        return transient(f"no answer within {timeout_s:g} s ({error_name(error)})")
    return transient(f"the provider could not be reached ({error_name(error)})")


def parse_retry_after(value: str | None, now: datetime | None = None, cap_s: float = MAX_RETRY_AFTER_S) -> float | None:
    """RFC 9110 Retry-After: delay-seconds or an HTTP-date. Unparseable or absent: None;
    a date in the past: 0; anything longer than `cap_s`: `cap_s`."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), cap_s)


def retry_after_from_reset(reset_epoch_s: str | None, now: datetime | None = None) -> float | None:
    """SendGrid's 429 carries X-RateLimit-Reset (a Unix time) instead of Retry-After."""
    if not reset_epoch_s:
        return None
    try:
        reset = float(reset_epoch_s)
    except ValueError:
        return None
    if math.isnan(reset) or math.isinf(reset):
        return None
    seconds = reset - (now or datetime.now(UTC)).timestamp()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def api_root(base_url: str, default: str) -> str:
    """The provider's API root: the configured base URL (a stand-in, a regional or EU
    endpoint) or the real one, without a trailing slash."""
    return (base_url or default).rstrip("/")


def json_body(response: Answer) -> Any:
    """The answer's JSON, or None when it is empty, not JSON, or longer than the client read."""
    if not response.excerpt:
        return None
    try:
        return orjson.loads(response.excerpt)
    except orjson.JSONDecodeError:
        return None


def safe_text(text: str, secret: str = "", limit: int = MAX_ERROR_CHARS) -> str:
    """Cut to `limit` characters, single line, with the credential masked if a provider echoed it."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "****")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
