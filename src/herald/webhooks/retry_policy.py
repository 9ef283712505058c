"""When to try a webhook delivery again, and when to stop.

Pure functions over small frozen dataclasses: the worker feeds in what happened (a status code
and `Retry-After`, or the exception) and gets a `Decision` back. The clock and the random source
are parameters, so every decision is reproducible in tests.

The rules:
- 2xx delivered; 410 Gone stops at once and the target should be disabled; 408, 425, 429, 5xx,
  timeouts and connection errors are retried; any other status (other 4xx, and 3xx since
  redirects are not followed) fails at once, unless the tenant listed that 4xx code as worth
  retrying. A target the guard refuses fails at once.
- Retries follow a schedule of delays, by default about 24 hours in total (`DEFAULT_SCHEDULE_S`),
  each delay jittered by ±10 % (uniform) so deliveries that failed together do not all return
  together.
- The schedule's sum is the delivery's retry window: one held behind its target's open circuit
  (no call, no attempt) that long after it was accepted ends like one whose attempts all
  failed (`HELD_PAST_WINDOW`, exhausted), not queued for as long as the target stays dead.
- `Retry-After` (seconds or an HTTP-date) can only lengthen a wait, never shorten it: a receiver
  answering `Retry-After: 1` to every attempt must not burn the whole day's schedule in seconds.
  It is honoured up to `retry_after_max_s` (6 h by default) and jittered upwards only (0 to
  +10 %), never earlier than asked.
"""

from __future__ import annotations

import math
import random as random_module
import re
import ssl
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum

import httpx

from herald.webhooks.target_guard import NameNotResolved, TargetRefused

# 5 s, 5 min, 30 min, 2 h, 5 h, 8 h, 8 h: 84,905 s (23.6 h) of waiting, eight attempts in all.
DEFAULT_SCHEDULE_S: tuple[float, ...] = (5, 300, 1800, 7200, 18000, 28800, 28800)
DEFAULT_JITTER = 0.1
DEFAULT_RETRY_AFTER_MAX_S = 6 * 3600.0
# 4xx answers that say "later", not "never".
RETRYABLE_CLIENT_ERRORS = frozenset({408, 425, 429})
GONE = 410

# Bounds for a tenant's own schedule (the operator's settings are not bound by them).
TENANT_MIN_STEP_S = 1.0
TENANT_MAX_STEP_S = 24 * 3600.0
TENANT_MAX_STEPS = 20
TENANT_MAX_TOTAL_S = 3 * 24 * 3600.0

_DELAY_SECONDS = re.compile(r"[0-9]+")
_LONGEST_READ_S = 10**9  # seconds; beyond any sensible cap

Random = Callable[[], float]  # like random.random: uniform in [0, 1)

# The kind of a call not made: its target's circuit held the delivery past its retry window.
HELD_PAST_WINDOW = "circuit_open"
# What `ReceiverCallError.kind` may be: the classes `error_class` names for failed calls.
CALL_ERROR_KINDS = frozenset(
    {"timeout", "dns", "tls", "connect", "protocol", "network", "invalid_url", "other", HELD_PAST_WINDOW}
)


class ReceiverCallError(Exception):
    """A receiver call that got no answer, already classed by the client that made it
    (`herald.webhooks.receiver_client`): `kind` is one of CALL_ERROR_KINDS."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(detail or kind)
        self.kind = kind if kind in CALL_ERROR_KINDS else "other"


class Verdict(StrEnum):
    DELIVERED = "delivered"
    RETRY = "retry"
    EXHAUSTED = "exhausted"  # worth retrying, but that was the last attempt
    FAILED = "failed"  # permanent: trying again cannot help
    GONE = "gone"  # 410: stop, and disable the target


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str  # short, safe to record on the attempt and show the tenant
    delay_s: float | None = None  # set only for RETRY


@dataclass(frozen=True)
class RetryPolicy:
    """One tenant's effective policy: the operator's defaults with the tenant's overrides applied."""

    schedule_s: tuple[float, ...] = DEFAULT_SCHEDULE_S
    jitter: float = DEFAULT_JITTER
    retry_statuses: frozenset[int] = field(default_factory=frozenset)
    retry_after_max_s: float = DEFAULT_RETRY_AFTER_MAX_S

    def __post_init__(self) -> None:
        # Settings hand over lists and sets; the policy keeps immutable copies.
        object.__setattr__(self, "schedule_s", tuple(float(step) for step in self.schedule_s))
        object.__setattr__(self, "retry_statuses", frozenset(self.retry_statuses))
        if any(not math.isfinite(step) or step < 0 for step in self.schedule_s):
            raise ValueError("retry delays must be finite and not negative")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter must be at least 0 and below 1")
        if not math.isfinite(self.retry_after_max_s) or self.retry_after_max_s < 0:
            raise ValueError("the Retry-After cap must be finite and not negative")
        problems = retry_status_problems(self.retry_statuses)
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def max_attempts(self) -> int:
        return len(self.schedule_s) + 1

    @property
    def window_s(self) -> float:
        """How long after it was accepted a delivery is still tried: the schedule's delays."""
        return sum(self.schedule_s)

    def overridden(
        self, schedule_s: Sequence[float] | None = None, retry_statuses: Iterable[int] | None = None
    ) -> RetryPolicy:
        """This policy with a tenant's overrides; None keeps the operator's value."""
        return replace(
            self,
            schedule_s=self.schedule_s if schedule_s is None else tuple(schedule_s),
            retry_statuses=self.retry_statuses if retry_statuses is None else frozenset(retry_statuses),
        )

    def worst_case_wait_s(self) -> float:
        """The longest a delivery can wait between its first and last attempt (attempt durations
        aside): the work stream must keep messages longer than this."""
        return sum(max(step * (1 + self.jitter), self.retry_after_max_s) for step in self.schedule_s)


def schedule_problems(schedule_s: Sequence[float]) -> list[str]:
    """What is wrong with a schedule a tenant submitted; empty when it is acceptable."""
    if not 1 <= len(schedule_s) <= TENANT_MAX_STEPS:
        return [f"must have between 1 and {TENANT_MAX_STEPS} delays"]
    if any(not math.isfinite(step) or not TENANT_MIN_STEP_S <= step <= TENANT_MAX_STEP_S for step in schedule_s):
        return [f"each delay must be between {TENANT_MIN_STEP_S:g} and {TENANT_MAX_STEP_S:g} seconds"]
    if sum(schedule_s) > TENANT_MAX_TOTAL_S:
        return [f"the delays must add up to at most {TENANT_MAX_TOTAL_S:g} seconds"]
    return []


def retry_status_problems(codes: Iterable[int]) -> list[str]:
    """Only 4xx codes can be made retryable, and never 410, which always disables the target."""
    wrong = sorted(c for c in codes if not 400 <= c <= 499 or c == GONE)
    if wrong:
        return [f"only 4xx codes other than 410 can be retried: {', '.join(map(str, wrong))}"]
    return []


def classify_status(status_code: int, retry_statuses: frozenset[int] = frozenset()) -> Verdict:
    """DELIVERED, RETRY, FAILED or GONE for a receiver's answer (before counting attempts)."""
    if 200 <= status_code <= 299:
        return Verdict.DELIVERED
    if status_code == GONE:
        return Verdict.GONE
    if 500 <= status_code <= 599 or status_code in RETRYABLE_CLIENT_ERRORS or status_code in retry_statuses:
        return Verdict.RETRY
    return Verdict.FAILED


def classify_error(error: BaseException) -> Verdict:
    """RETRY, FAILED or EXHAUSTED for a request that got no answer.

    Refused targets and URLs httpx cannot send are permanent; a delivery its target's circuit
    held past its retry window is out of time (EXHAUSTED, whatever its attempts); everything
    else (timeouts, connection and protocol errors, and anything unexpected) is retried, since
    delivery is at least once and giving up on an unknown error would drop the event.
    """
    if isinstance(error, TargetRefused | httpx.UnsupportedProtocol | httpx.InvalidURL):
        return Verdict.FAILED
    if isinstance(error, ReceiverCallError) and error.kind == "invalid_url":
        return Verdict.FAILED
    if isinstance(error, ReceiverCallError) and error.kind == HELD_PAST_WINDOW:
        return Verdict.EXHAUSTED
    return Verdict.RETRY


def _caused_by(error: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]) -> bool:
    """True when `error` or anything in its cause/context chain is a `kind` (httpx wraps
    httpcore's errors, which wrap the socket's and the TLS library's)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def error_class(error: BaseException) -> str:
    """A stable, short name for what went wrong, for attempt records and metrics:
    refused_by_guard, timeout, dns, tls, connect, protocol, network, invalid_url or other
    (and "http_status" for an answer that was not 2xx, see `attempt_error_class`)."""
    if isinstance(error, TargetRefused):
        return "refused_by_guard"
    if isinstance(error, ReceiverCallError):
        return error.kind
    if isinstance(error, httpx.TimeoutException):
        return "timeout"
    if isinstance(error, httpx.ConnectError):
        if _caused_by(error, NameNotResolved):
            return "dns"
        if _caused_by(error, ssl.SSLError):
            return "tls"
        return "connect"
    if isinstance(error, httpx.RemoteProtocolError | httpx.LocalProtocolError):
        return "protocol"
    if isinstance(error, httpx.ReadError | httpx.WriteError | httpx.CloseError):
        return "network"
    if isinstance(error, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return "invalid_url"
    return "other"


def attempt_error_class(status_code: int | None, error: BaseException | None) -> str:
    """The class recorded on an attempt: "" for a 2xx, "http_status" for any other answer."""
    if error is not None:
        return error_class(error)
    if status_code is not None and not 200 <= status_code <= 299:
        return "http_status"
    return ""


def _error_reason(error: BaseException) -> str:
    if isinstance(error, TargetRefused):
        return str(error)
    return {
        "timeout": "timed out",
        "dns": "the host name did not resolve",
        "tls": "the TLS handshake failed",
        "connect": "could not connect",
        "protocol": "the receiver broke the HTTP protocol",
        "network": "the connection failed mid-request",
        "invalid_url": "the URL cannot be requested",
        HELD_PAST_WINDOW: "not called: the target's circuit stayed open past the retry window",
    }.get(error_class(error), "the request failed")


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a `Retry-After` value (delay-seconds or an HTTP-date, RFC 9110);
    None when absent or unreadable. A date in the past means 0."""
    if value is None:
        return None
    text = value.strip()
    if _DELAY_SECONDS.fullmatch(text):
        # A value too long to be meant is read as "very long" (the cap applies), not parsed digit by digit.
        return float(min(int(text), _LONGEST_READ_S)) if len(text) <= 12 else float(_LONGEST_READ_S)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # asctime dates carry no zone; HTTP-dates are always GMT
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def jittered(delay_s: float, jitter: float, random: Random) -> float:
    """`delay_s` moved uniformly within ±`jitter` of itself, between d·(1-j) and d·(1+j)."""
    return delay_s * (1 + jitter * (2 * random() - 1))


def decide(
    policy: RetryPolicy,
    attempt: int,
    *,
    status_code: int | None = None,
    error: BaseException | None = None,
    retry_after: str | None = None,
    now: datetime | None = None,
    random: Random = random_module.random,
) -> Decision:
    """What to do after attempt number `attempt` (1 for the first) ended with `status_code`
    (and its `Retry-After` header, if any) or with `error`."""
    if attempt < 1:
        raise ValueError("attempts are numbered from 1")
    if (status_code is None) == (error is None):
        raise ValueError("give either a status code or an error")
    if status_code is not None:
        verdict = classify_status(status_code, policy.retry_statuses)
        reason = f"receiver answered {status_code}"
    else:
        assert error is not None
        verdict = classify_error(error)
        reason = _error_reason(error)
    if verdict is not Verdict.RETRY:
        return Decision(verdict, reason)
    if attempt >= policy.max_attempts:
        return Decision(Verdict.EXHAUSTED, f"{reason}; gave up after {attempt} attempts")
    delay = jittered(policy.schedule_s[attempt - 1], policy.jitter, random)
    asked = parse_retry_after(retry_after, now or datetime.now(UTC)) if status_code is not None else None
    if asked is not None:
        honoured = min(asked * (1 + policy.jitter * random()), policy.retry_after_max_s)
        delay = max(delay, honoured)
    return Decision(Verdict.RETRY, reason, delay)
