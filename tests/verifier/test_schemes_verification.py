"""The verifier's provider schemes, one by one, on what the corpus cannot express: Svix's documented example, the
tolerance edge at sub-second precision and its setting per provider, forgeries counted as such before staleness,
headers read case-insensitively, bodies verified as bytes, and verdicts' truth values. No network, no services."""

from __future__ import annotations

import base64
import secrets

import pytest
from herald_verifier.schemes import (
    VERIFIED,
    HmacKey,
    Reason,
    Rejected,
    paystack,
    polar,
    resend,
    sendgrid,
    standard_webhooks,
)
from starlette.datastructures import Headers

from tests.support.scheme_keys import (
    PAYSTACK_KEY,
    PAYSTACK_SECRET,
    POLAR_KEY,
    POLAR_SECRET,
    RESEND_KEY,
    RESEND_OTHER,
    RESEND_SECRET,
    SENDGRID_KEY,
    SENDGRID_PUBLIC,
    at,
    verdict,
)
from tests.verifier import corpus
from tests.verifier.corpus import NOW


def test_svix_documented_example() -> None:
    """The worked example in Svix's "verifying manually" docs, byte for byte."""
    key = resend.load_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    body = b'{"test": 2432232314}'
    signature = standard_webhooks.sign_v1(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", body)
    assert base64.b64encode(signature).decode() == "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    headers = {
        "svix-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "svix-timestamp": "1614265330",
        "svix-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }
    assert resend.verify(headers, body, key, now=at(1614265330)) == VERIFIED


@pytest.mark.parametrize(
    ("offset", "expected"),
    [(-300.0, None), (-300.001, Reason.STALE_TIMESTAMP), (300.0, None), (300.001, Reason.STALE_TIMESTAMP)],
)
def test_tolerance_edge_with_a_fractional_clock(offset: float, expected: Reason | None) -> None:
    """Five minutes either way, to the millisecond, for each timestamped scheme."""
    sent = NOW
    now = at(sent - offset)
    resend_headers = corpus.resend_headers(RESEND_SECRET, corpus.RESEND_BODY, timestamp=sent)
    polar_headers = corpus.polar_headers(POLAR_SECRET, corpus.POLAR_BODY, timestamp=sent)
    sendgrid_headers = corpus.sendgrid_headers(SENDGRID_KEY, corpus.SENDGRID_BODY, timestamp=sent)
    assert verdict(resend.verify(resend_headers, corpus.RESEND_BODY, RESEND_KEY, now=now)) == expected
    assert verdict(polar.verify(polar_headers, corpus.POLAR_BODY, POLAR_KEY, now=now)) == expected
    assert verdict(sendgrid.verify(sendgrid_headers, corpus.SENDGRID_BODY, SENDGRID_PUBLIC, now=now)) == expected


def test_tolerance_is_adjustable_per_provider() -> None:
    headers = corpus.sendgrid_headers(SENDGRID_KEY, corpus.SENDGRID_BODY, timestamp=NOW - 3600)
    assert sendgrid.verify(headers, corpus.SENDGRID_BODY, SENDGRID_PUBLIC, now=at(NOW)) == Rejected(
        Reason.STALE_TIMESTAMP
    )
    assert sendgrid.verify(headers, corpus.SENDGRID_BODY, SENDGRID_PUBLIC, now=at(NOW), tolerance_s=3600) == VERIFIED


def test_forged_stale_request_counts_as_bad_signature() -> None:
    """Signature before timestamp: `stale_timestamp` is only ever an authentic request, a forgery is a forgery."""
    headers = corpus.resend_headers(RESEND_OTHER, corpus.RESEND_BODY, timestamp=NOW - 86_400)
    assert resend.verify(headers, corpus.RESEND_BODY, RESEND_KEY, now=at(NOW)) == Rejected(Reason.BAD_SIGNATURE)


def test_starlette_headers_are_read_case_insensitively() -> None:
    """The HTTP layer will hand over Starlette's `Headers`, built from the raw lower-cased ASGI pairs."""
    signed = corpus.sendgrid_headers(SENDGRID_KEY, corpus.SENDGRID_BODY, timestamp=NOW)
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in signed.items()]
    assert sendgrid.verify(Headers(raw=raw), corpus.SENDGRID_BODY, SENDGRID_PUBLIC, now=at(NOW)) == VERIFIED


def test_signatures_cover_bytes_not_text() -> None:
    """Bodies that are not JSON, or not even UTF-8, verify when genuinely signed: nothing parses before the check."""
    body = b"\xff\xfe not json, not utf-8 \x00\x80"
    key = HmacKey(secrets.token_bytes(32))
    headers = {
        "svix-id": "msg_1",
        "svix-timestamp": str(NOW),
        "svix-signature": "v1," + base64.b64encode(standard_webhooks.sign_v1(key, "msg_1", str(NOW), body)).decode(),
    }
    assert resend.verify(headers, body, key, now=at(NOW)) == VERIFIED
    assert polar.verify({k.replace("svix", "webhook"): v for k, v in headers.items()}, body, key, now=at(NOW))
    assert paystack.verify(corpus.paystack_headers(PAYSTACK_SECRET, body), body, PAYSTACK_KEY) == VERIFIED
    signed = corpus.sendgrid_headers(SENDGRID_KEY, body, timestamp=NOW)
    assert sendgrid.verify(signed, body, SENDGRID_PUBLIC, now=at(NOW)) == VERIFIED


def test_verdicts_are_truthy_only_when_verified() -> None:
    assert VERIFIED
    assert not Rejected(Reason.BAD_SIGNATURE)
    assert [reason.value for reason in Reason] == [
        "bad_signature",
        "stale_timestamp",
        "missing_header",
        "malformed",
        "unknown_tenant",
    ]
