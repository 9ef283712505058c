"""The rules every adapter shares: reading HTTP statuses, Retry-After, and keeping
secrets out of error texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from herald_email_sender.outcome import (
    MAX_RETRY_AFTER_S,
    Outcome,
    classify_status,
    parse_retry_after,
    retry_after_from_reset,
    safe_text,
)

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (200, Outcome.ACCEPTED),
        (202, Outcome.ACCEPTED),
        (301, Outcome.PERMANENT),
        (400, Outcome.PERMANENT),
        (401, Outcome.PERMANENT),
        (403, Outcome.PERMANENT),
        (404, Outcome.PERMANENT),
        (408, Outcome.TRANSIENT),
        (413, Outcome.PERMANENT),
        (422, Outcome.PERMANENT),
        (425, Outcome.TRANSIENT),
        (429, Outcome.TRANSIENT),
        (500, Outcome.TRANSIENT),
        (502, Outcome.TRANSIENT),
        (503, Outcome.TRANSIENT),
        (504, Outcome.TRANSIENT),
    ],
)
def test_status_classes(status: int, outcome: Outcome) -> None:
    assert classify_status(status) is outcome


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        (" 30 ", 30.0),
        ("1.5", 1.5),
        ("0", 0.0),
        ("-5", 0.0),
        ("86400", MAX_RETRY_AFTER_S),
        (format_datetime(NOW + timedelta(seconds=90), usegmt=True), 90.0),
        (format_datetime(NOW - timedelta(seconds=90), usegmt=True), 0.0),
        (format_datetime(NOW + timedelta(days=2), usegmt=True), MAX_RETRY_AFTER_S),
        ("soon", None),
        ("", None),
        (None, None),
        ("nan", None),
    ],
)
def test_retry_after_is_parsed_and_bounded(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == seconds


def test_sendgrid_rate_limit_reset_is_a_unix_time() -> None:
    assert retry_after_from_reset(str(int(NOW.timestamp()) + 42), now=NOW) == 42.0
    assert retry_after_from_reset(str(int(NOW.timestamp()) - 42), now=NOW) == 0.0
    assert retry_after_from_reset("junk", now=NOW) is None
    assert retry_after_from_reset(None, now=NOW) is None


def test_error_texts_never_carry_the_secret_and_stay_short() -> None:
    secret = "SG.very-secret-key-123456"
    text = safe_text(f"provider said: invalid key {secret}\nplease check", secret)
    assert secret not in text and "****" in text and "\n" not in text
    assert len(safe_text("x" * 5000)) == 300
