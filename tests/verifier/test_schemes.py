"""The verifier's provider schemes, checked against requests signed the way each provider signs them.

Three layers:
- the corpus (tests/verifier/corpus.py): genuine, forged, replayed, truncated and malformed requests per scheme,
  each with the verdict it is owed, run against our modules at a fixed clock;
- the same corpus run through the providers' official verifiers (`svix`, `standardwebhooks` keyed as Polar's SDK
  keys it, `sendgrid`'s EventWebhook), which must agree with us wherever both check the same thing;
- direct tests of what the corpus cannot say: key loading, the tolerance edge at sub-second precision, the
  constant-time Basic comparison, secrets kept out of reprs and messages, and event ids for de-duplication.

No network, no services.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
import standardwebhooks
import standardwebhooks.webhooks
import svix
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from herald_verifier.schemes import (
    VERIFIED,
    HmacKey,
    MalformedPayload,
    Reason,
    Rejected,
    Verified,
    paystack,
    polar,
    postmark,
    resend,
    sendgrid,
    standard_webhooks,
)
from sendgrid.helpers.eventwebhook import EventWebhook  # type: ignore[import-untyped]
from starlette.datastructures import Headers

from tests.verifier import corpus
from tests.verifier.corpus import NOW, Case

# --- One tenant's keys, and another tenant's, generated per run like real ones. ---

RESEND_SECRET = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
RESEND_OTHER = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
# Fixed, so the corpus case "secret misread as base64" is always generated (some random strings do not decode).
POLAR_SECRET = "polar_whs_Q2hhbmdlTWVQbGVhc2VJdHNPbmx5QVRlc3Q"
POLAR_OTHER = "polar_whs_" + secrets.token_urlsafe(32)
SENDGRID_KEY = ec.generate_private_key(ec.SECP256R1())
SENDGRID_OTHER = ec.generate_private_key(ec.SECP256R1())
PAYSTACK_SECRET = "sk_test_" + secrets.token_hex(20)
PAYSTACK_OTHER = "sk_test_" + secrets.token_hex(20)
POSTMARK_CREDS = (f"pm_{secrets.token_hex(6)}", secrets.token_urlsafe(32))
POSTMARK_OTHER = (f"pm_{secrets.token_hex(6)}", secrets.token_urlsafe(32))

RESEND_KEY = resend.load_secret(RESEND_SECRET)
POLAR_KEY = polar.load_secret(POLAR_SECRET)
SENDGRID_PUBLIC = sendgrid.load_public_key(corpus.sendgrid_public_key(SENDGRID_KEY))
PAYSTACK_KEY = paystack.load_secret(PAYSTACK_SECRET)
POSTMARK_STORED = postmark.PostmarkCredentials.from_plaintext(*POSTMARK_CREDS)

RESEND_CASES = corpus.resend_cases(RESEND_SECRET, RESEND_OTHER)
POLAR_CASES = corpus.polar_cases(POLAR_SECRET, POLAR_OTHER)
SENDGRID_CASES = corpus.sendgrid_cases(SENDGRID_KEY, SENDGRID_OTHER)
PAYSTACK_CASES = corpus.paystack_cases(PAYSTACK_SECRET, PAYSTACK_OTHER)
POSTMARK_CASES = corpus.postmark_cases(POSTMARK_CREDS, POSTMARK_OTHER)


def at(seconds: float) -> Callable[[], float]:
    return lambda: seconds


def cases(items: list[Case]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", items, ids=[case.name for case in items])


def verdict(outcome: Verified | Rejected) -> Reason | None:
    return outcome.reason if isinstance(outcome, Rejected) else None


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


# --- Schemes, one by one: what the corpus cannot express. ---


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


# --- Keys as tenants configure them. ---


def test_resend_secret_forms() -> None:
    raw = secrets.token_bytes(24)
    encoded = base64.b64encode(raw).decode()
    assert resend.load_secret("whsec_" + encoded).value == raw
    assert resend.load_secret(encoded).value == raw  # the prefix is optional, as in Svix's library
    assert resend.load_secret(" whsec_" + encoded.rstrip("=") + "\n").value == raw  # unpadded, pasted with spaces


@pytest.mark.parametrize("bad", ["", "whsec_", "whsec_***", "whsec_Xyz!Qk7", "whsec_Z"])
def test_resend_secret_rejects_non_base64(bad: str) -> None:
    with pytest.raises(ValueError) as raised:
        resend.load_secret(bad)
    payload = bad.removeprefix("whsec_")
    assert not payload or payload not in str(raised.value)


def test_polar_secret_is_used_raw_never_decoded() -> None:
    """Polar's key is the secret's UTF-8 bytes, even when it looks like a Standard Webhooks `whsec_` secret."""
    assert polar.load_secret(POLAR_SECRET).value == POLAR_SECRET.encode()
    looks_standard = "whsec_" + base64.b64encode(b"k" * 24).decode()
    assert polar.load_secret(looks_standard).value == looks_standard.encode()
    with pytest.raises(ValueError):
        polar.load_secret("")


def test_paystack_secret() -> None:
    assert paystack.load_secret(PAYSTACK_SECRET).value == PAYSTACK_SECRET.encode()
    with pytest.raises(ValueError):
        paystack.load_secret("  ")


def test_sendgrid_key_forms() -> None:
    """As SendGrid shows it (bare base64 DER), or PEM-armoured and wrapped, all give the same key."""
    shown = corpus.sendgrid_public_key(SENDGRID_KEY)
    pem = SENDGRID_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    expected = SENDGRID_KEY.public_key().public_numbers()
    assert sendgrid.load_public_key(shown).public_numbers() == expected
    assert sendgrid.load_public_key(pem.decode()).public_numbers() == expected
    assert sendgrid.load_public_key(f"  {shown[:40]}\n{shown[40:]}\n").public_numbers() == expected


def _der_public(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode()


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("", id="empty"),
        pytest.param("SG.not-a-verification-key", id="an API key"),
        pytest.param(base64.b64encode(b"garbage").decode(), id="base64 garbage"),
        pytest.param(_der_public(ec.generate_private_key(ec.SECP384R1())), id="P-384"),
        pytest.param(_der_public(rsa.generate_private_key(public_exponent=65537, key_size=2048)), id="RSA"),
    ],
)
def test_sendgrid_key_rejects_anything_but_p256(bad: str) -> None:
    with pytest.raises(ValueError) as raised:
        sendgrid.load_public_key(bad)
    assert not bad or bad not in str(raised.value)


def test_secrets_stay_out_of_reprs() -> None:
    assert RESEND_SECRET.removeprefix("whsec_") not in repr(RESEND_KEY)
    assert repr(RESEND_KEY.value) not in repr(RESEND_KEY)
    assert POLAR_SECRET not in repr(POLAR_KEY)
    issued = postmark.issue_credentials()
    assert issued.password not in repr(issued)
    assert issued.stored.password_sha256.hex() not in repr(issued.stored)
    assert repr(issued.stored.password_sha256) not in repr(issued.stored)


# --- Postmark's Basic credentials. ---


def test_postmark_issued_credentials_work_and_are_unique() -> None:
    first, second = postmark.issue_credentials(), postmark.issue_credentials()
    assert (first.username, first.password) != (second.username, second.password)
    headers = corpus.postmark_headers(first.username, first.password)
    assert postmark.verify(headers, b"{}", first.stored) == VERIFIED
    assert postmark.verify(headers, b"{}", second.stored) == Rejected(Reason.BAD_SIGNATURE)


def test_postmark_credentials_refuse_a_colon_in_the_username() -> None:
    with pytest.raises(ValueError):
        postmark.PostmarkCredentials.from_plaintext("a:b", "password")
    with pytest.raises(ValueError):
        postmark.PostmarkCredentials.from_plaintext("user", "")


@pytest.mark.parametrize(
    "credentials",
    [POSTMARK_CREDS, (POSTMARK_CREDS[0], "wrong"), ("wrong", POSTMARK_CREDS[1]), ("wrong", "wrong")],
    ids=["right", "wrong password", "wrong username", "both wrong"],
)
def test_postmark_compares_both_parts_every_time(credentials: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Username and password are both compared, in constant time and as fixed-length digests, whatever fails."""
    compared: list[tuple[int, int]] = []

    def recording(a: bytes, b: bytes) -> bool:
        compared.append((len(a), len(b)))
        return hmac.compare_digest(a, b)

    monkeypatch.setattr(postmark, "digests_equal", recording)
    postmark.verify(corpus.postmark_headers(*credentials), b"{}", POSTMARK_STORED)
    assert compared == [(32, 32), (32, 32)]


# --- Event ids, for de-duplication, read only after verification. ---


def test_resend_and_polar_event_ids_are_the_message_ids() -> None:
    resend_headers = corpus.resend_headers(RESEND_SECRET, corpus.RESEND_BODY, timestamp=NOW, msg_id="msg_abc")
    assert resend.event_ids(resend_headers, corpus.RESEND_BODY) == ["msg_abc"]
    assert resend.event_ids({"webhook-id": "msg_def"}, b"") == ["msg_def"]
    polar_headers = corpus.polar_headers(POLAR_SECRET, corpus.POLAR_BODY, timestamp=NOW, msg_id="msg_ghi")
    assert polar.event_ids(polar_headers, corpus.POLAR_BODY) == ["msg_ghi"]
    with pytest.raises(MalformedPayload):
        polar.event_ids({}, corpus.POLAR_BODY)


def test_sendgrid_event_ids_one_per_event_in_order() -> None:
    assert sendgrid.event_ids({}, corpus.SENDGRID_BODY) == [
        "Ym91bmNlLTEtMTc2NzIyNTU5MA",
        "ZGVsaXZlcmVkLTItMTc2NzIyNTU5NQ",
    ]


def test_sendgrid_event_without_id_gets_a_stable_digest() -> None:
    first = json.dumps([{"event": "open", "email": "a@example.net", "timestamp": 1}]).encode()
    same_event_reordered = b'[{"timestamp": 1, "email": "a@example.net", "event": "open"}]'
    other = json.dumps([{"event": "open", "email": "a@example.net", "timestamp": 2}]).encode()
    (first_id,) = sendgrid.event_ids({}, first)
    assert first_id.startswith("sha256:")
    assert sendgrid.event_ids({}, same_event_reordered) == [first_id]
    assert sendgrid.event_ids({}, other) != [first_id]


@pytest.mark.parametrize("body", [b"", b"not json", b'{"event": "bounce"}', b"[1, 2]"])
def test_sendgrid_event_ids_refuse_other_shapes(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        sendgrid.event_ids({}, body)


def test_paystack_event_id_is_the_body_digest() -> None:
    body = corpus.PAYSTACK_BODY
    assert paystack.event_ids({}, body) == ["sha256:" + hashlib.sha256(body).hexdigest()]
    assert paystack.event_ids({}, body) == paystack.event_ids({}, bytes(body))  # a replay: the same key
    # Same object id, another event: must not be merged.
    disable = json.loads(body) | {"event": "subscription.disable"}
    assert paystack.event_ids({}, json.dumps(disable).encode()) != paystack.event_ids({}, body)


def _postmark(**fields: object) -> bytes:
    return json.dumps({"MessageID": "m-1", **fields}).encode()


def test_postmark_event_ids() -> None:
    assert postmark.event_ids({}, corpus.POSTMARK_BODY) == [
        "Bounce:883953f4-6105-42a2-a16a-77a8eac79483:4323372036854775807"
    ]
    first_open = _postmark(RecordType="Open", ReceivedAt="2026-01-01T00:00:00Z", FirstOpen=True)
    reserialised = json.dumps(json.loads(first_open), indent=2).encode()
    second_open = _postmark(RecordType="Open", ReceivedAt="2026-01-01T01:00:00Z", FirstOpen=False)
    assert postmark.event_ids({}, first_open) == ["Open:m-1:2026-01-01T00:00:00Z"]
    assert postmark.event_ids({}, reserialised) == postmark.event_ids({}, first_open)  # a retry, re-serialised
    assert postmark.event_ids({}, second_open) != postmark.event_ids({}, first_open)  # opens recur
    click_a = _postmark(RecordType="Click", ReceivedAt="2026-01-01T00:00:00Z", OriginalLink="https://example.com/a")
    click_b = _postmark(RecordType="Click", ReceivedAt="2026-01-01T00:00:00Z", OriginalLink="https://example.com/b")
    assert postmark.event_ids({}, click_a) != postmark.event_ids({}, click_b)
    delivery = _postmark(RecordType="Delivery", DeliveredAt="2026-01-01T00:00:01Z")
    assert postmark.event_ids({}, delivery) == ["Delivery:m-1:2026-01-01T00:00:01Z"]
    change = _postmark(RecordType="SubscriptionChange", ChangedAt="2026-01-01T00:00:02Z", SuppressSending=True)
    assert postmark.event_ids({}, change) == ["SubscriptionChange:m-1:2026-01-01T00:00:02Z"]


@pytest.mark.parametrize(
    "body",
    [
        _postmark(RecordType="Inbound"),
        _postmark(RecordType="Open"),
        _postmark(RecordType="Bounce", ID=None),
        json.dumps({"RecordType": "Bounce", "ID": 7}).encode(),
    ],
    ids=["unknown record type", "open without ReceivedAt", "bounce with a null ID", "no MessageID"],
)
def test_postmark_event_ids_fall_back_to_the_body_digest(body: bytes) -> None:
    assert postmark.event_ids({}, body) == ["sha256:" + hashlib.sha256(body).hexdigest()]


@pytest.mark.parametrize("body", [b"", b"nope", b"[]"])
def test_postmark_event_ids_refuse_other_shapes(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        postmark.event_ids({}, body)


def test_frozen_clock_helper_matches_now() -> None:
    """Guards the differential tests: the libraries must see the corpus's clock, not the wall clock."""
    assert _FrozenDatetime.now(tz=UTC).timestamp() == NOW
