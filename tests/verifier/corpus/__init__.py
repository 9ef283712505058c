"""Genuine, forged, replayed, truncated and malformed inbound webhook requests, per provider scheme.

Everything is generated, nothing is stored: each `*_cases` function takes the key material of one tenant (and of
another tenant, for the "someone else's key" cases) plus a fixed `now`, and returns `Case`s saying which verdict
the verifier owes each request. The unit tests run every case against the scheme modules; the end-to-end receivers
(tests/resilience/) can post the same requests over HTTP and expect 200 for `expected is None` and 401 otherwise.

`samples` holds the clock, `Case` and the bodies; `signing` how each provider signs and the mutations of a request;
`standard_cases`, `sendgrid_cases` and `paystack_postmark_cases` the cases themselves.
"""

from tests.verifier.corpus.paystack_postmark_cases import paystack_cases, postmark_cases
from tests.verifier.corpus.samples import (
    NOW,
    PAYSTACK_BODY,
    POLAR_BODY,
    POSTMARK_BODY,
    RESEND_BODY,
    SENDGRID_BODY,
    Case,
)
from tests.verifier.corpus.sendgrid_cases import sendgrid_cases
from tests.verifier.corpus.signing import (
    flip_one_byte,
    paystack_headers,
    polar_headers,
    polar_library_secret,
    postmark_headers,
    resend_headers,
    sendgrid_headers,
    sendgrid_public_key,
    without,
)
from tests.verifier.corpus.standard_cases import polar_cases, resend_cases

__all__ = [
    "NOW",
    "PAYSTACK_BODY",
    "POLAR_BODY",
    "POSTMARK_BODY",
    "RESEND_BODY",
    "SENDGRID_BODY",
    "Case",
    "flip_one_byte",
    "paystack_cases",
    "paystack_headers",
    "polar_cases",
    "polar_headers",
    "polar_library_secret",
    "postmark_cases",
    "postmark_headers",
    "resend_cases",
    "resend_headers",
    "sendgrid_cases",
    "sendgrid_headers",
    "sendgrid_public_key",
    "without",
]
