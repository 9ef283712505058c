"""One tenant's key material for each inbound provider scheme, and another tenant's, generated per run like real
ones and loaded as the verifier loads them; with the fixed clock and the verdict reading the scheme tests share."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable

from cryptography.hazmat.primitives.asymmetric import ec
from herald_verifier.schemes import Reason, Rejected, Verified, paystack, polar, postmark, resend, sendgrid

from tests.verifier import corpus

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


def at(seconds: float) -> Callable[[], float]:
    return lambda: seconds


def verdict(outcome: Verified | Rejected) -> Reason | None:
    return outcome.reason if isinstance(outcome, Rejected) else None
