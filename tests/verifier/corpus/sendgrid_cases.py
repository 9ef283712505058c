"""Cases for SendGrid's signed Event Webhook: ECDSA P-256 / SHA-256 over the timestamp and the raw body."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from herald_verifier.schemes import Reason

from tests.verifier.corpus.samples import NOW, SENDGRID_BODY, TOLERANCE_S, Case
from tests.verifier.corpus.signing import (
    flip_one_byte,
    replaced,
    reserialised,
    sendgrid_headers,
    sendgrid_signature,
    without,
)

# The order of the P-256 group, to build the malleated (r, n - s) twin of a signature.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def sendgrid_cases(
    private_key: ec.EllipticCurvePrivateKey, other_key: ec.EllipticCurvePrivateKey, now: int = NOW
) -> list[Case]:
    """SendGrid signed Event Webhook requests, for the tenant whose verification key is `private_key`'s public key."""
    body = SENDGRID_BODY
    sig_h, ts_h = "X-Twilio-Email-Event-Webhook-Signature", "X-Twilio-Email-Event-Webhook-Timestamp"
    good = sendgrid_headers(private_key, body, timestamp=now)
    der = base64.b64decode(good[sig_h])
    r, s = decode_dss_signature(der)
    malleated = base64.b64encode(encode_dss_signature(r, P256_ORDER - s)).decode()
    p1363 = base64.b64encode(r.to_bytes(32, "big") + s.to_bytes(32, "big")).decode()
    sha1 = base64.b64encode(private_key.sign(str(now).encode() + body, ec.ECDSA(hashes.SHA1()))).decode()
    p384 = ec.generate_private_key(ec.SECP384R1())
    return [
        Case("genuine", good, body, None),
        Case("genuine, header names in lower case", {key.lower(): value for key, value in good.items()}, body, None),
        Case(
            "genuine, malleated (r, n - s)",
            replaced(good, sig_h, malleated),
            body,
            None,
            note="harmless: de-duplication keys on sg_event_id",
        ),
        Case(
            "just inside tolerance, past", sendgrid_headers(private_key, body, timestamp=now - TOLERANCE_S), body, None
        ),
        Case(
            "just inside tolerance, future",
            sendgrid_headers(private_key, body, timestamp=now + TOLERANCE_S),
            body,
            None,
        ),
        Case(
            "just outside tolerance, past (replay)",
            sendgrid_headers(private_key, body, timestamp=now - TOLERANCE_S - 1),
            body,
            Reason.STALE_TIMESTAMP,
        ),
        Case(
            "just outside tolerance, future",
            sendgrid_headers(private_key, body, timestamp=now + TOLERANCE_S + 1),
            body,
            Reason.STALE_TIMESTAMP,
        ),
        Case(
            "replayed a day later",
            sendgrid_headers(private_key, body, timestamp=now - 86_400),
            body,
            Reason.STALE_TIMESTAMP,
        ),
        Case(
            "forged: another account's key",
            sendgrid_headers(other_key, body, timestamp=now),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case(
            "forged: a P-384 key",
            replaced(good, sig_h, sendgrid_signature(p384, str(now).encode() + body)),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case("signed with SHA-1 instead of SHA-256", replaced(good, sig_h, sha1), body, Reason.BAD_SIGNATURE),
        Case(
            "signed over the body alone",
            replaced(good, sig_h, sendgrid_signature(private_key, body)),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case(
            "signed over body then timestamp",
            replaced(good, sig_h, sendgrid_signature(private_key, body + str(now).encode())),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case("tampered: one byte of the body", good, flip_one_byte(body), Reason.BAD_SIGNATURE),
        Case("tampered: first byte of the body", good, flip_one_byte(body, 0), Reason.BAD_SIGNATURE),
        Case("trailing CRLF stripped", good, body.rstrip(b"\r\n"), Reason.BAD_SIGNATURE),
        Case(
            "truncated body: one event dropped", good, body[: body.index(b"}, {") + 1] + b"]\r\n", Reason.BAD_SIGNATURE
        ),
        Case("empty body", good, b"", Reason.BAD_SIGNATURE),
        Case("body parsed and re-serialised", good, reserialised(body), Reason.BAD_SIGNATURE),
        Case("replay with a refreshed timestamp", replaced(good, ts_h, str(now + 1)), body, Reason.BAD_SIGNATURE),
        Case("signature as raw r||s instead of DER", replaced(good, sig_h, p1363), body, Reason.MALFORMED),
        Case(
            "DER signature truncated",
            replaced(good, sig_h, base64.b64encode(der[:-1]).decode()),
            body,
            Reason.MALFORMED,
        ),
        Case("signature cut inside the base64", replaced(good, sig_h, good[sig_h][:-3]), body, Reason.MALFORMED),
        Case("signature not base64", replaced(good, sig_h, "not a signature!"), body, Reason.MALFORMED),
        Case(
            "signature: base64 of garbage",
            replaced(good, sig_h, base64.b64encode(b"garbage garbage").decode()),
            body,
            Reason.MALFORMED,
        ),
        Case("empty signature", replaced(good, sig_h, ""), body, Reason.MALFORMED),
        Case("empty timestamp", replaced(good, ts_h, ""), body, Reason.MALFORMED),
        Case(
            "timestamp in a date format", replaced(good, ts_h, "Thu, 01 Jan 2026 00:00:00 GMT"), body, Reason.MALFORMED
        ),
        Case("timestamp with a sign", replaced(good, ts_h, f"+{now}"), body, Reason.MALFORMED),
        Case("missing signature", without(good, sig_h), body, Reason.MISSING_HEADER),
        Case("missing timestamp", without(good, ts_h), body, Reason.MISSING_HEADER),
        Case("no headers at all", {}, body, Reason.MISSING_HEADER),
    ]
