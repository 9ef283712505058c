"""Provider keys and credentials as tenants configure them: the forms each scheme's secret or public key loads
from and what it refuses, without echoing it; secrets kept out of reprs; and Postmark's Basic credentials issued
unique and compared in constant time. No network, no services."""

from __future__ import annotations

import base64
import hmac
import secrets

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from herald_verifier.schemes import VERIFIED, Reason, Rejected, paystack, polar, postmark, resend, sendgrid

from tests.support.scheme_keys import (
    PAYSTACK_SECRET,
    POLAR_KEY,
    POLAR_SECRET,
    POSTMARK_CREDS,
    POSTMARK_STORED,
    RESEND_KEY,
    RESEND_SECRET,
    SENDGRID_KEY,
)
from tests.verifier import corpus

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
