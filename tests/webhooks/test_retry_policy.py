"""The webhook retry policy: the schedule, its jitter, Retry-After, and how answers and errors
are classified. Clock and random source are injected; nothing waits."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from herald.webhooks.retry_policy import (
    DEFAULT_SCHEDULE_S,
    RetryPolicy,
    Verdict,
    classify_error,
    classify_status,
    decide,
    error_class,
    jittered,
    parse_retry_after,
    retry_status_problems,
    schedule_problems,
)
from herald.webhooks.target_guard import NAME_NOT_PUBLIC, Problem, TargetRefused

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
HOUR = 3600.0


def middle() -> float:
    """A random source that always lands in the middle, so jitter adds nothing."""
    return 0.5


def lowest() -> float:
    return 0.0


def highest() -> float:
    return 1.0 - 2**-53  # the largest value random.random() can return


def test_the_default_schedule_spans_about_a_day() -> None:
    policy = RetryPolicy()
    assert policy.schedule_s == DEFAULT_SCHEDULE_S == (5, 300, 1800, 7200, 18000, 28800, 28800)
    assert 23 * HOUR <= sum(policy.schedule_s) <= 25 * HOUR
    assert list(policy.schedule_s) == sorted(policy.schedule_s)
    assert policy.max_attempts == 8
    # Even at the jitter's extremes the day stays a day (±10 %).
    assert 21 * HOUR <= sum(s * 0.9 for s in policy.schedule_s)
    assert sum(s * 1.1 for s in policy.schedule_s) <= 26 * HOUR


def test_following_the_schedule_to_the_end() -> None:
    policy = RetryPolicy()
    delays = []
    for attempt in range(1, policy.max_attempts + 1):
        decision = decide(policy, attempt, status_code=503, random=middle)
        if decision.verdict is Verdict.RETRY:
            delays.append(decision.delay_s)
        else:
            assert attempt == policy.max_attempts
            assert decision.verdict is Verdict.EXHAUSTED and decision.delay_s is None
            assert decision.reason == "receiver answered 503; gave up after 8 attempts"
    assert delays == list(DEFAULT_SCHEDULE_S)


def test_jitter_is_bounded_to_ten_percent_either_way() -> None:
    assert jittered(100, 0.1, middle) == 100
    assert jittered(100, 0.1, lowest) == pytest.approx(90)
    assert jittered(100, 0.1, highest) == pytest.approx(110)
    source = random.Random(6)
    samples = [decide(RetryPolicy(), 4, status_code=500, random=source.random).delay_s for _ in range(2000)]
    assert all(s is not None and 0.9 * 7200 <= s <= 1.1 * 7200 for s in samples)
    # Spread over the whole band, not clustered: both outer fifths are reached.
    assert min(s for s in samples if s is not None) < 0.92 * 7200
    assert max(s for s in samples if s is not None) > 1.08 * 7200


def test_no_jitter_when_configured_off() -> None:
    policy = RetryPolicy(schedule_s=(0.2, 0.4), jitter=0)
    assert decide(policy, 1, status_code=500, random=highest).delay_s == 0.2
    assert decide(policy, 2, error=httpx.ConnectError("refused"), random=lowest).delay_s == 0.4
    assert decide(policy, 3, status_code=500).verdict is Verdict.EXHAUSTED


@pytest.mark.parametrize(
    ("status", "verdict"),
    [
        (200, Verdict.DELIVERED),
        (201, Verdict.DELIVERED),
        (202, Verdict.DELIVERED),
        (204, Verdict.DELIVERED),
        (299, Verdict.DELIVERED),
        (410, Verdict.GONE),
        (408, Verdict.RETRY),
        (425, Verdict.RETRY),
        (429, Verdict.RETRY),
        (500, Verdict.RETRY),
        (502, Verdict.RETRY),
        (503, Verdict.RETRY),
        (504, Verdict.RETRY),
        (599, Verdict.RETRY),
        (400, Verdict.FAILED),
        (401, Verdict.FAILED),
        (403, Verdict.FAILED),
        (404, Verdict.FAILED),
        (405, Verdict.FAILED),
        (409, Verdict.FAILED),
        (413, Verdict.FAILED),
        (422, Verdict.FAILED),
        (451, Verdict.FAILED),
        (301, Verdict.FAILED),  # redirects are not followed
        (302, Verdict.FAILED),
        (307, Verdict.FAILED),
        (304, Verdict.FAILED),
        (101, Verdict.FAILED),
        (600, Verdict.FAILED),
    ],
)
def test_classification_of_answers(status: int, verdict: Verdict) -> None:
    assert classify_status(status) is verdict


def test_tenant_configured_4xx_are_retried() -> None:
    policy = RetryPolicy().overridden(retry_statuses=[404, 409])
    assert classify_status(404, policy.retry_statuses) is Verdict.RETRY
    retried = decide(policy, 1, status_code=409, random=middle)
    assert (retried.verdict, retried.delay_s, retried.reason) == (Verdict.RETRY, 5, "receiver answered 409")
    assert decide(policy, 1, status_code=403).verdict is Verdict.FAILED
    assert decide(RetryPolicy(), 1, status_code=404).verdict is Verdict.FAILED


def test_gone_stops_at_once_whatever_it_asks() -> None:
    decision = decide(RetryPolicy(), 1, status_code=410, retry_after="60", now=NOW)
    assert decision.verdict is Verdict.GONE and decision.delay_s is None
    assert decision.reason == "receiver answered 410"


def test_permanent_failures_do_not_wait() -> None:
    decision = decide(RetryPolicy(), 1, status_code=400, retry_after="60", now=NOW)
    assert decision.verdict is Verdict.FAILED and decision.delay_s is None
    assert decide(RetryPolicy(), 3, status_code=201).verdict is Verdict.DELIVERED


@pytest.mark.parametrize(
    ("error", "verdict", "kind"),
    [
        (httpx.ConnectTimeout("slow"), Verdict.RETRY, "timeout"),
        (httpx.ReadTimeout("slow"), Verdict.RETRY, "timeout"),
        (httpx.WriteTimeout("slow"), Verdict.RETRY, "timeout"),
        (httpx.PoolTimeout("busy"), Verdict.RETRY, "timeout"),
        (httpx.ConnectError("refused"), Verdict.RETRY, "connect"),
        (httpx.ReadError("reset"), Verdict.RETRY, "network"),
        (httpx.RemoteProtocolError("garbage"), Verdict.RETRY, "protocol"),
        (ConnectionResetError(), Verdict.RETRY, "other"),
        (TargetRefused(Problem("non_public", NAME_NOT_PUBLIC)), Verdict.FAILED, "refused_by_guard"),
        (httpx.UnsupportedProtocol("ws"), Verdict.FAILED, "invalid_url"),
        (httpx.InvalidURL("bad"), Verdict.FAILED, "invalid_url"),
    ],
)
def test_classification_of_errors(error: BaseException, verdict: Verdict, kind: str) -> None:
    assert classify_error(error) is verdict
    assert error_class(error) == kind
    decision = decide(RetryPolicy(), 1, error=error, random=middle)
    assert decision.verdict is verdict
    assert (decision.delay_s == 5) is (verdict is Verdict.RETRY)


def test_error_reasons_are_short_and_safe() -> None:
    assert decide(RetryPolicy(), 1, error=httpx.ReadTimeout("internal detail")).reason == "timed out"
    refused = decide(RetryPolicy(), 1, error=TargetRefused(Problem("non_public", NAME_NOT_PUBLIC)))
    assert refused.reason == f"webhook target refused: {NAME_NOT_PUBLIC}"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        ("0", 0.0),
        (" 30 ", 30.0),
        ("000045", 45.0),
        (format_datetime(NOW + timedelta(seconds=90), usegmt=True), 90.0),  # IMF-fixdate
        ("Sunday, 01-Mar-26 12:10:00 GMT", 600.0),  # RFC 850
        ("Sun Mar  1 13:00:00 2026", 3600.0),  # asctime, read as GMT
        (format_datetime(NOW - timedelta(hours=1), usegmt=True), 0.0),  # in the past: now
        ("99999999999999999999999", 1e9),  # absurdly long: very long (the cap applies later)
        (None, None),
        ("", None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
        ("١٢٠", None),  # non-ASCII digits are not delay-seconds
    ],
)
def test_retry_after_forms(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, NOW) == seconds


def test_retry_after_can_lengthen_a_wait_but_never_shorten_it() -> None:
    policy = RetryPolicy()
    longer = decide(policy, 1, status_code=429, retry_after="120", now=NOW, random=lowest)
    assert longer.verdict is Verdict.RETRY and longer.delay_s == 120  # asked 120, scheduled 5
    # Jittered upwards only, never earlier than asked.
    upper = decide(policy, 1, status_code=503, retry_after="120", now=NOW, random=highest)
    assert upper.delay_s == pytest.approx(132)
    shorter = decide(policy, 2, status_code=503, retry_after="1", now=NOW, random=middle)
    assert shorter.delay_s == 300  # asked 1, scheduled 300


def test_retry_after_is_capped() -> None:
    policy = RetryPolicy()
    far = format_datetime(NOW + timedelta(days=30), usegmt=True)
    capped = decide(policy, 1, status_code=503, retry_after=far, now=NOW, random=middle)
    assert capped.delay_s == 6 * HOUR
    # The cap bounds the receiver's say, not the schedule's own longer delays.
    late = decide(policy, 6, status_code=503, retry_after="999999", now=NOW, random=middle)
    assert late.delay_s == 8 * HOUR
    assert (
        decide(RetryPolicy(retry_after_max_s=60), 1, status_code=429, retry_after="3600", random=middle).delay_s == 60
    )


def test_retry_after_is_ignored_on_errors_and_unreadable_values() -> None:
    policy = RetryPolicy()
    assert decide(policy, 1, status_code=503, retry_after="garbage", now=NOW, random=middle).delay_s == 5
    assert decide(policy, 1, error=httpx.ReadError("x"), retry_after="600", now=NOW, random=middle).delay_s == 5


def test_tenant_schedule_override() -> None:
    base = RetryPolicy(jitter=0.2, retry_statuses=frozenset({409}))
    tenant = base.overridden(schedule_s=[60, 600])
    assert tenant.schedule_s == (60.0, 600.0) and tenant.max_attempts == 3
    assert tenant.jitter == 0.2 and tenant.retry_statuses == {409}  # kept from the operator's policy
    assert decide(tenant, 2, status_code=500, random=middle).delay_s == 600
    assert decide(tenant, 3, status_code=500).verdict is Verdict.EXHAUSTED
    assert base.overridden().schedule_s == base.schedule_s


def test_policies_from_settings_values_are_immutable() -> None:
    policy = RetryPolicy(schedule_s=[0.2, 0.4], retry_statuses={409})  # type: ignore[arg-type]
    assert policy.schedule_s == (0.2, 0.4) and policy.retry_statuses == frozenset({409})
    assert hash(policy) == hash(RetryPolicy(schedule_s=(0.2, 0.4), retry_statuses=frozenset({409})))


def test_worst_case_wait_fits_inside_the_work_streams_retention() -> None:
    """Every wait at its longest (Retry-After at the cap where that is longer): well inside the
    work stream's default seven-day max age, which must outlast it."""
    worst = RetryPolicy().worst_case_wait_s()
    assert worst == pytest.approx(5 * 6 * HOUR + 2 * 8.8 * HOUR)
    assert worst < 7 * 24 * HOUR


@pytest.mark.parametrize(
    ("schedule", "ok"),
    [
        ([5, 300, 1800], True),
        ([1], True),
        ([], False),
        ([0.5], False),
        ([86401], False),
        ([float("nan")], False),
        ([float("inf")], False),
        ([86400] * 4, False),  # four days in total
        ([60] * 21, False),
    ],
)
def test_tenant_schedule_bounds(schedule: list[float], ok: bool) -> None:
    assert (schedule_problems(schedule) == []) is ok


def test_retry_status_bounds() -> None:
    assert retry_status_problems([404, 409, 499]) == []
    assert retry_status_problems([410]) != []
    assert retry_status_problems([500, 302]) != []
    with pytest.raises(ValueError, match="410"):
        RetryPolicy(retry_statuses=frozenset({410}))


@pytest.mark.parametrize(
    "arguments",
    [
        {"schedule_s": (-1.0,)},
        {"schedule_s": (float("inf"),)},
        {"jitter": 1.0},
        {"jitter": -0.1},
        {"retry_after_max_s": -1},
    ],
)
def test_invalid_policies_are_refused(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**arguments)  # type: ignore[arg-type]


def test_decide_needs_one_outcome_and_a_real_attempt_number() -> None:
    with pytest.raises(ValueError):
        decide(RetryPolicy(), 0, status_code=500)
    with pytest.raises(ValueError):
        decide(RetryPolicy(), 1)
    with pytest.raises(ValueError):
        decide(RetryPolicy(), 1, status_code=500, error=httpx.ReadError("x"))
