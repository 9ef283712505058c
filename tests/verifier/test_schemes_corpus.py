"""The verifier's provider schemes against the corpus (tests/verifier/corpus/): genuine, forged, replayed,
truncated and malformed requests per scheme, each with the verdict it is owed, run against our modules at a fixed
clock, and through the providers' official verifiers (`svix`, `standardwebhooks` keyed as Polar's SDK keys it,
`sendgrid`'s EventWebhook), which must agree with us wherever both check the same thing. No network, no services."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
import standardwebhooks
import standardwebhooks.webhooks
import svix
from herald_verifier.schemes import Reason, paystack, polar, postmark, resend, sendgrid
from sendgrid.helpers.eventwebhook import EventWebhook  # type: ignore[import-untyped]

from tests.support.scheme_keys import (
    PAYSTACK_KEY,
    PAYSTACK_OTHER,
    PAYSTACK_SECRET,
    POLAR_KEY,
    POLAR_OTHER,
    POLAR_SECRET,
    POSTMARK_CREDS,
    POSTMARK_OTHER,
    POSTMARK_STORED,
    RESEND_KEY,
    RESEND_OTHER,
    RESEND_SECRET,
    SENDGRID_KEY,
    SENDGRID_OTHER,
    SENDGRID_PUBLIC,
    at,
    verdict,
)
from tests.verifier import corpus
from tests.verifier.corpus import NOW, Case

RESEND_CASES = corpus.resend_cases(RESEND_SECRET, RESEND_OTHER)
POLAR_CASES = corpus.polar_cases(POLAR_SECRET, POLAR_OTHER)
SENDGRID_CASES = corpus.sendgrid_cases(SENDGRID_KEY, SENDGRID_OTHER)
PAYSTACK_CASES = corpus.paystack_cases(PAYSTACK_SECRET, PAYSTACK_OTHER)
POSTMARK_CASES = corpus.postmark_cases(POSTMARK_CREDS, POSTMARK_OTHER)


def cases(items: list[Case]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", items, ids=[case.name for case in items])


# --- The corpus, against our modules. ---


@cases(RESEND_CASES)
def test_resend_corpus(case: Case) -> None:
    assert verdict(resend.verify(case.headers, case.body, RESEND_KEY, now=at(NOW))) == case.expected


@cases(POLAR_CASES)
def test_polar_corpus(case: Case) -> None:
    assert verdict(polar.verify(case.headers, case.body, POLAR_KEY, now=at(NOW))) == case.expected


@cases(SENDGRID_CASES)
def test_sendgrid_corpus(case: Case) -> None:
    assert verdict(sendgrid.verify(case.headers, case.body, SENDGRID_PUBLIC, now=at(NOW))) == case.expected


@cases(PAYSTACK_CASES)
def test_paystack_corpus(case: Case) -> None:
    assert verdict(paystack.verify(case.headers, case.body, PAYSTACK_KEY)) == case.expected


@cases(POSTMARK_CASES)
def test_postmark_corpus(case: Case) -> None:
    assert verdict(postmark.verify(case.headers, case.body, POSTMARK_STORED)) == case.expected


@pytest.mark.parametrize(
    "corpus_cases",
    [RESEND_CASES, POLAR_CASES, SENDGRID_CASES, PAYSTACK_CASES, POSTMARK_CASES],
    ids=["resend", "polar", "sendgrid", "paystack", "postmark"],
)
def test_corpus_covers_every_scheme_and_forgery(corpus_cases: list[Case]) -> None:
    """Each scheme has a genuine request and every rejection a forged one must get (stale only with a clock)."""
    names = " | ".join(case.name for case in corpus_cases)
    reasons = {case.expected for case in corpus_cases}
    assert "genuine" in names
    assert "another" in names  # another tenant's key or credentials
    assert {None, Reason.BAD_SIGNATURE, Reason.MISSING_HEADER, Reason.MALFORMED} <= reasons
    if corpus_cases not in (PAYSTACK_CASES, POSTMARK_CASES):
        assert "tampered: one byte of the body" in names
        assert "just inside tolerance, past" in names
        assert Reason.STALE_TIMESTAMP in reasons


# --- The official verifiers agree with the corpus. ---


class _FrozenDatetime(datetime):
    """Stands in for `datetime` inside `standardwebhooks` (which `svix` wraps), so its clock reads NOW."""

    @classmethod
    def now(cls, tz: object = None) -> _FrozenDatetime:  # type: ignore[override]
        return cls.fromtimestamp(NOW, tz=UTC)


@pytest.fixture
def frozen_library_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(standardwebhooks.webhooks, "datetime", _FrozenDatetime)
    yield


# Where the Python libraries are laxer than the spec, and we are not: they parse the timestamp with float(), so
# "1767225600.0" and "1_767_225_600" pass and are then signed as the integer. Svix never sends either.
LIBRARY_LAXER = {"timestamp with a fraction", "timestamp with underscores"}


def _library_accepts(verify: Callable[[], object]) -> bool:
    try:
        verify()
    except Exception:  # the libraries raise their own error, or ValueError / binascii.Error on garbage
        return False
    return True


@cases([case for case in RESEND_CASES if case.name not in LIBRARY_LAXER])
def test_svix_library_agrees_on_resend_corpus(case: Case, frozen_library_clock: None) -> None:
    webhook = svix.Webhook(RESEND_SECRET)
    assert _library_accepts(lambda: webhook.verify(case.body, case.headers)) == case.accepted


@cases([case for case in POLAR_CASES if case.name not in LIBRARY_LAXER])
def test_standardwebhooks_library_agrees_on_polar_corpus(case: Case, frozen_library_clock: None) -> None:
    """Keyed exactly as Polar's SDK `validate_event` keys it: the secret base64-encoded."""
    webhook = standardwebhooks.Webhook(corpus.polar_library_secret(POLAR_SECRET))
    assert _library_accepts(lambda: webhook.verify(case.body, case.headers)) == case.accepted


@cases([case for case in SENDGRID_CASES if case.expected is not Reason.MISSING_HEADER])
def test_sendgrid_library_agrees_on_signatures(case: Case) -> None:
    """SendGrid's helper checks the signature only (no tolerance), so a stale but genuine request passes it."""
    helper = EventWebhook(corpus.sendgrid_public_key(SENDGRID_KEY))
    headers = {name.lower(): value for name, value in case.headers.items()}
    signature = headers[sendgrid.SIGNATURE_HEADER.lower()]
    timestamp = headers[sendgrid.TIMESTAMP_HEADER.lower()]

    def check() -> None:
        assert helper.verify_signature(case.body.decode(), signature, timestamp)

    assert _library_accepts(check) == (case.expected in (None, Reason.STALE_TIMESTAMP))


def test_frozen_clock_helper_matches_now() -> None:
    """Guards the differential tests: the libraries must see the corpus's clock, not the wall clock."""
    assert _FrozenDatetime.now(tz=UTC).timestamp() == NOW
