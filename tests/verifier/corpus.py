"""Genuine, forged, replayed, truncated and malformed inbound webhook requests, per provider scheme.

Everything is generated, nothing is stored: each `*_cases` function takes the key material of one tenant (and of
another tenant, for the "someone else's key" cases) plus a fixed `now`, and returns `Case`s saying which verdict
the verifier owes each request. Genuine requests are signed the way the provider signs them, with the official
library where one exists: `svix` for Resend, `standardwebhooks` (keyed exactly as Polar's SDK keys it) for Polar,
`cryptography` ECDSA P-256 for SendGrid, `hmac` SHA-512 for Paystack.

The unit tests run every case against the scheme modules; the end-to-end receivers (tests/resilience/) can post the same
requests over HTTP and expect 200 for `expected is None` and 401 otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import standardwebhooks
import svix
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from herald_verifier.schemes import Reason

NOW = 1_767_225_600  # 2026-01-01T00:00:00Z: a fixed clock keeps the corpus deterministic.
TOLERANCE_S = 300

# The order of the P-256 group, to build the malleated (r, n - s) twin of a signature.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


@dataclass(frozen=True)
class Case:
    """One request and the verdict owed to it: None means accepted, otherwise the rejection reason."""

    name: str
    headers: dict[str, str]
    body: bytes
    expected: Reason | None
    note: str = field(default="", compare=False)

    @property
    def accepted(self) -> bool:
        return self.expected is None


# --- Sample bodies: realistic, with non-ASCII text, so "the raw bytes" is really tested. ---

RESEND_BODY = json.dumps(
    {
        "type": "email.bounced",
        "created_at": "2026-01-01T00:00:00.000Z",
        "data": {
            "email_id": "56761188-7520-42d8-8898-ff6fc54ce618",
            "from": "Acme <billing@example.com>",
            "to": ["ana@example.net"],
            "subject": "Réservation confirmée",
            "bounce": {"type": "Permanent", "subType": "General", "message": "550 5.1.1 user unknown"},
        },
    },
    ensure_ascii=False,
).encode()

POLAR_BODY = json.dumps(
    {
        "type": "subscription.active",
        "timestamp": "2026-01-01T00:00:00.000000Z",
        "data": {
            "id": "b6d3f1a4-0c5e-4f7e-9a51-3f2c1d0e9b87",
            "status": "active",
            "customer": {"email": "owner@example.com", "name": "Zoë"},
            "product": {"name": "Herald Pro"},
            "metadata": {"herald_tenant": "t_123"},
        },
    },
    ensure_ascii=False,
).encode()

# SendGrid's body ends with CRLF, and the signature covers it: a framework that trims the body breaks it.
SENDGRID_BODY = (
    json.dumps(
        [
            {
                "email": "ana@example.net",
                "timestamp": 1767225590,
                "event": "bounce",
                "type": "bounce",
                "reason": "550 5.1.1 user unknown",
                "sg_event_id": "Ym91bmNlLTEtMTc2NzIyNTU5MA",
                "sg_message_id": "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
            },
            {
                "email": "bo@example.net",
                "timestamp": 1767225595,
                "event": "delivered",
                "sg_event_id": "ZGVsaXZlcmVkLTItMTc2NzIyNTU5NQ",
                "sg_message_id": "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.1",
            },
        ]
    ).encode()
    + b"\r\n"
)

PAYSTACK_BODY = json.dumps(
    {
        "event": "charge.success",
        "data": {
            "id": 302961,
            "status": "success",
            "reference": "qTPrJoy9Bx",
            "amount": 10000,
            "currency": "NGN",
            "customer": {"email": "owner@example.com", "first_name": "Adébáyọ̀"},
            "plan": {"plan_code": "PLN_gx2wn530m0i3w3m"},
            "paid_at": "2026-01-01T00:00:00.000Z",
        },
    },
    ensure_ascii=False,
).encode()

POSTMARK_BODY = json.dumps(
    {
        "RecordType": "Bounce",
        "ID": 4323372036854775807,
        "Type": "HardBounce",
        "TypeCode": 1,
        "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
        "Email": "ana@example.net",
        "BouncedAt": "2026-01-01T00:00:00Z",
        "Inactive": True,
        "MessageStream": "outbound",
        "Subject": "Réservation confirmée",
    },
    ensure_ascii=False,
).encode()


# --- Signers: how each provider produces its headers. ---


def resend_headers(
    secret: str, body: bytes, *, timestamp: int, msg_id: str = "msg_2mYkaBQ1Fqj9DJ8Rb5Mu0QZx2Lw"
) -> dict[str, str]:
    """Signed with the official `svix` library, as Resend's Svix sends it."""
    signature = svix.Webhook(secret).sign(msg_id, datetime.fromtimestamp(timestamp, tz=UTC), body.decode())
    return {"svix-id": msg_id, "svix-timestamp": str(timestamp), "svix-signature": signature}


def polar_library_secret(secret: str) -> str:
    """What Polar's SDK hands to `standardwebhooks`: the secret base64-encoded, because the key is its raw bytes."""
    return base64.b64encode(secret.encode()).decode()


def polar_headers(
    secret: str, body: bytes, *, timestamp: int, msg_id: str = "msg_3wq1Sk8UaHgGNfhNLpq0r1pJ2bZ"
) -> dict[str, str]:
    """Signed with the official `standardwebhooks` library, keyed exactly as Polar's SDK keys it."""
    webhook = standardwebhooks.Webhook(polar_library_secret(secret))
    signature = webhook.sign(msg_id, datetime.fromtimestamp(timestamp, tz=UTC), body.decode())
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def sendgrid_public_key(private_key: ec.EllipticCurvePrivateKey) -> str:
    """The verification key as SendGrid displays it: base64 DER SubjectPublicKeyInfo, no PEM armour."""
    der = private_key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(der).decode()


def sendgrid_signature(private_key: ec.EllipticCurvePrivateKey, signed: bytes) -> str:
    return base64.b64encode(private_key.sign(signed, ec.ECDSA(hashes.SHA256()))).decode()


def sendgrid_headers(private_key: ec.EllipticCurvePrivateKey, body: bytes, *, timestamp: int) -> dict[str, str]:
    """ECDSA P-256 / SHA-256 over the timestamp header value followed by the raw body, base64 DER."""
    return {
        "X-Twilio-Email-Event-Webhook-Signature": sendgrid_signature(private_key, str(timestamp).encode() + body),
        "X-Twilio-Email-Event-Webhook-Timestamp": str(timestamp),
    }


def paystack_headers(secret_key: str, body: bytes) -> dict[str, str]:
    """Hex HMAC-SHA512 of the raw body with the secret key, as Paystack computes it."""
    return {"x-paystack-signature": hmac.new(secret_key.encode(), body, hashlib.sha512).hexdigest()}


def postmark_headers(username: str, password: str) -> dict[str, str]:
    """HTTP Basic, as Postmark sends the credentials embedded in the webhook URL."""
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


# --- Mutations shared by the schemes. ---


def flip_one_byte(body: bytes, index: int | None = None) -> bytes:
    """The body with one byte changed (low bit of an ASCII byte, so it stays valid UTF-8)."""
    at = len(body) // 2 if index is None else index
    while body[at] >= 0x80:
        at += 1
    return body[:at] + bytes([body[at] ^ 0x01]) + body[at + 1 :]


def reserialised(body: bytes) -> bytes:
    """The same JSON, parsed and dumped again: what a handler that parses before verifying would hash."""
    return json.dumps(json.loads(body)).encode()


def without(headers: dict[str, str], name: str) -> dict[str, str]:
    return {key: value for key, value in headers.items() if key != name}


def replaced(headers: dict[str, str], name: str, value: str) -> dict[str, str]:
    return {**headers, name: value}


# --- Svix / Standard Webhooks: Resend and Polar share the scheme, not the key or header names. ---

Signer = Callable[[bytes, int, str], dict[str, str]]


def _standard_cases(
    sign: Signer,
    forge: Signer,
    prefix: str,
    other_prefix: str,
    other_prefix_verdict: Reason | None,
    body: bytes,
    now: int,
) -> list[Case]:
    """`sign` signs with the tenant's key, `forge` with someone else's; both (body, timestamp, msg_id) -> headers.

    `other_prefix_verdict` is owed to a genuine request sent under the other family's header names.
    """
    id_h, ts_h, sig_h = f"{prefix}-id", f"{prefix}-timestamp", f"{prefix}-signature"
    msg = "msg_2mYkaBQ1Fqj9DJ8Rb5Mu0QZx2Lw"
    good = sign(body, now, msg)
    good_sig = good[sig_h]
    forged_sig = forge(body, now, msg)[sig_h]
    raw = base64.b64decode(good_sig.split(",", 1)[1])
    cases = [
        Case("genuine", good, body, None),
        Case(
            "genuine, secret rotation: old key's signature first",
            replaced(good, sig_h, f"{forged_sig} {good_sig}"),
            body,
            None,
        ),
        Case(
            "genuine, with v1a and future-version entries",
            replaced(good, sig_h, f"v1a,{base64.b64encode(b'x' * 64).decode()} v2,abcd {good_sig}"),
            body,
            None,
        ),
        Case(
            "genuine, an unparseable entry after the good one", replaced(good, sig_h, f"{good_sig} garbage"), body, None
        ),
        Case("genuine, header names in capitals", {key.title(): value for key, value in good.items()}, body, None),
        Case("just inside tolerance, past", sign(body, now - TOLERANCE_S, msg), body, None),
        Case("just inside tolerance, future", sign(body, now + TOLERANCE_S, msg), body, None),
        Case(
            "just outside tolerance, past (replay)",
            sign(body, now - TOLERANCE_S - 1, msg),
            body,
            Reason.STALE_TIMESTAMP,
        ),
        Case("just outside tolerance, future", sign(body, now + TOLERANCE_S + 1, msg), body, Reason.STALE_TIMESTAMP),
        Case("replayed a day later", sign(body, now - 86_400, msg), body, Reason.STALE_TIMESTAMP),
        Case("forged: another tenant's key", forge(body, now, msg), body, Reason.BAD_SIGNATURE),
        Case(
            "forged: signature of nothing",
            replaced(good, sig_h, "v1," + base64.b64encode(bytes(32)).decode()),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case("tampered: one byte of the body", good, flip_one_byte(body), Reason.BAD_SIGNATURE),
        Case("tampered: first byte of the body", good, flip_one_byte(body, 0), Reason.BAD_SIGNATURE),
        Case("tampered: last byte of the body", good, flip_one_byte(body, len(body) - 1), Reason.BAD_SIGNATURE),
        Case("truncated body", good, body[:-10], Reason.BAD_SIGNATURE),
        Case("empty body", good, b"", Reason.BAD_SIGNATURE),
        Case("body with a trailing newline", good, body + b"\n", Reason.BAD_SIGNATURE),
        Case("body parsed and re-serialised", good, reserialised(body), Reason.BAD_SIGNATURE),
        Case("replay with a refreshed timestamp", replaced(good, ts_h, str(now + 1)), body, Reason.BAD_SIGNATURE),
        Case(
            "replay under a new id (dodging de-duplication)",
            replaced(good, id_h, msg + "x"),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case(
            "truncated signature (16 of 32 bytes)",
            replaced(good, sig_h, "v1," + base64.b64encode(raw[:16]).decode()),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case(
            "signature moved to an unknown version",
            replaced(good, sig_h, good_sig.replace("v1,", "v2,")),
            body,
            Reason.MALFORMED,
        ),
        Case("signature without its version", replaced(good, sig_h, good_sig.split(",", 1)[1]), body, Reason.MALFORMED),
        Case("signature cut inside the base64", replaced(good, sig_h, good_sig[:-3]), body, Reason.MALFORMED),
        Case(
            "signature not base64",
            replaced(good, sig_h, "v1,***not-base64***"),
            body,
            Reason.MALFORMED,
        ),
        Case("empty signature entry", replaced(good, sig_h, "v1,"), body, Reason.MALFORMED),
        Case("empty signature header", replaced(good, sig_h, ""), body, Reason.MALFORMED),
        Case("empty timestamp", replaced(good, ts_h, ""), body, Reason.MALFORMED),
        Case("empty id", replaced(good, id_h, ""), body, Reason.MALFORMED),
        Case("timestamp with a fraction", replaced(good, ts_h, f"{now}.0"), body, Reason.MALFORMED),
        Case("timestamp negative", replaced(good, ts_h, f"-{now}"), body, Reason.MALFORMED),
        Case("timestamp as a date", replaced(good, ts_h, "2026-01-01T00:00:00Z"), body, Reason.MALFORMED),
        Case("timestamp with underscores", replaced(good, ts_h, f"{now:_}"), body, Reason.MALFORMED),
        Case("id with a space", replaced(good, id_h, "msg 1"), body, Reason.MALFORMED),
        Case("missing id", without(good, id_h), body, Reason.MISSING_HEADER),
        Case("missing timestamp", without(good, ts_h), body, Reason.MISSING_HEADER),
        Case("missing signature", without(good, sig_h), body, Reason.MISSING_HEADER),
        Case("no headers at all", {}, body, Reason.MISSING_HEADER),
        Case(
            f"{other_prefix}-* headers instead of {prefix}-*",
            {key.replace(prefix, other_prefix): value for key, value in good.items()},
            body,
            other_prefix_verdict,
        ),
    ]
    return cases


def resend_cases(secret: str, other_secret: str, now: int = NOW) -> list[Case]:
    """Resend (Svix) requests for the tenant whose signing secret is `secret` (`whsec_...`)."""

    def sign(body: bytes, timestamp: int, msg_id: str) -> dict[str, str]:
        return resend_headers(secret, body, timestamp=timestamp, msg_id=msg_id)

    def forge(body: bytes, timestamp: int, msg_id: str) -> dict[str, str]:
        return resend_headers(other_secret, body, timestamp=timestamp, msg_id=msg_id)

    # Svix's library reads webhook-* when svix-* is absent, and so do we.
    return _standard_cases(sign, forge, "svix", "webhook", None, RESEND_BODY, now)


def polar_cases(secret: str, other_secret: str, now: int = NOW) -> list[Case]:
    """Polar (Standard Webhooks) requests for the platform whose Polar webhook secret is `secret`."""

    def sign(body: bytes, timestamp: int, msg_id: str) -> dict[str, str]:
        return polar_headers(secret, body, timestamp=timestamp, msg_id=msg_id)

    def forge(body: bytes, timestamp: int, msg_id: str) -> dict[str, str]:
        return polar_headers(other_secret, body, timestamp=timestamp, msg_id=msg_id)

    cases = _standard_cases(sign, forge, "webhook", "svix", Reason.MISSING_HEADER, POLAR_BODY, now)
    # The gotcha Polar's docs warn about: the secret handed to a Standard Webhooks library without base64-encoding
    # it first, so the library decodes it into other key bytes. A verifier keyed that way is keyed wrongly.
    try:
        misread = standardwebhooks.Webhook(secret)
    except (ValueError, standardwebhooks.webhooks.EmptyWebhookSecretError):
        return cases  # this secret does not even decode as base64: nobody could sign with the misread key
    wrong = misread.sign("msg_x", datetime.fromtimestamp(now, tz=UTC), POLAR_BODY.decode())
    headers = {"webhook-id": "msg_x", "webhook-timestamp": str(now), "webhook-signature": wrong}
    cases.append(Case("signed with the secret misread as base64", headers, POLAR_BODY, Reason.BAD_SIGNATURE))
    return cases


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


def paystack_cases(secret_key: str, other_secret_key: str) -> list[Case]:
    """Paystack requests for the account whose secret key is `secret_key`. No timestamp: a replay of the very
    same bytes verifies, and is stopped by de-duplication on the body digest, not here."""
    body = PAYSTACK_BODY
    h = "x-paystack-signature"
    good = paystack_headers(secret_key, body)
    return [
        Case("genuine", good, body, None),
        Case("genuine, upper-case hex", replaced(good, h, good[h].upper()), body, None),
        Case("genuine, header name capitalised", {"X-Paystack-Signature": good[h]}, body, None),
        Case("replay of the same bytes", good, body, None, note="stopped by event_ids de-duplication"),
        Case(
            "forged: another account's secret key", paystack_headers(other_secret_key, body), body, Reason.BAD_SIGNATURE
        ),
        Case(
            "forged: plain SHA-512 of the body",
            replaced(good, h, hashlib.sha512(body).hexdigest()),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case("forged: all zeros", replaced(good, h, "0" * 128), body, Reason.BAD_SIGNATURE),
        Case("tampered: one byte of the body", good, flip_one_byte(body), Reason.BAD_SIGNATURE),
        Case(
            "tampered: amount changed", good, body.replace(b'"amount": 10000', b'"amount": 10001'), Reason.BAD_SIGNATURE
        ),
        Case("truncated body", good, body[:-1], Reason.BAD_SIGNATURE),
        Case("empty body", good, b"", Reason.BAD_SIGNATURE),
        Case("body parsed and re-serialised", good, reserialised(body), Reason.BAD_SIGNATURE),
        Case(
            "HMAC-SHA256 instead of SHA-512",
            replaced(good, h, hmac.new(secret_key.encode(), body, hashlib.sha256).hexdigest()),
            body,
            Reason.MALFORMED,
        ),
        Case("truncated signature", replaced(good, h, good[h][:-1]), body, Reason.MALFORMED),
        Case(
            "signature in base64",
            replaced(good, h, base64.b64encode(bytes.fromhex(good[h])).decode()),
            body,
            Reason.MALFORMED,
        ),
        Case("signature with sha512= prefix", replaced(good, h, "sha512=" + good[h]), body, Reason.MALFORMED),
        Case("signature not hex", replaced(good, h, "z" * 128), body, Reason.MALFORMED),
        Case("empty signature", replaced(good, h, ""), body, Reason.MALFORMED),
        Case("missing signature", {}, body, Reason.MISSING_HEADER),
    ]


def postmark_cases(credentials: tuple[str, str], other_credentials: tuple[str, str]) -> list[Case]:
    """Postmark requests for the tenant whose Basic credentials are `credentials` (username, password)."""
    body = POSTMARK_BODY
    user, password = credentials
    other_user, other_password = other_credentials
    good = postmark_headers(user, password)
    token = good["Authorization"].split(" ", 1)[1]

    def basic(raw: bytes) -> dict[str, str]:
        return {"Authorization": "Basic " + base64.b64encode(raw).decode()}

    return [
        Case("genuine", good, body, None),
        Case("genuine, scheme in lower case", {"authorization": f"basic {token}"}, body, None),
        Case("replay of the same request", good, body, None, note="no timestamp: stopped by event_ids de-duplication"),
        Case("another tenant's credentials", postmark_headers(other_user, other_password), body, Reason.BAD_SIGNATURE),
        Case(
            "right username, another tenant's password",
            postmark_headers(user, other_password),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case(
            "another tenant's username, right password",
            postmark_headers(other_user, password),
            body,
            Reason.BAD_SIGNATURE,
        ),
        Case("username and password swapped", postmark_headers(password, user), body, Reason.BAD_SIGNATURE),
        Case("password truncated by one character", postmark_headers(user, password[:-1]), body, Reason.BAD_SIGNATURE),
        Case("password with one more character", postmark_headers(user, password + "x"), body, Reason.BAD_SIGNATURE),
        Case("password in another case", postmark_headers(user, password.swapcase()), body, Reason.BAD_SIGNATURE),
        Case("empty password", postmark_headers(user, ""), body, Reason.BAD_SIGNATURE),
        Case("username alone, colon and all", basic(user.encode() + b":"), body, Reason.BAD_SIGNATURE),
        Case("no colon", basic(f"{user}{password}".encode()), body, Reason.MALFORMED),
        Case("Bearer instead of Basic", {"Authorization": f"Bearer {password}"}, body, Reason.MALFORMED),
        Case("Basic without credentials", {"Authorization": "Basic"}, body, Reason.MALFORMED),
        Case("Basic with bad base64", {"Authorization": "Basic !!!!"}, body, Reason.MALFORMED),
        Case("Basic token cut inside the base64", {"Authorization": "Basic " + token[:-1]}, body, Reason.MALFORMED),
        Case("plain user:password, not encoded", {"Authorization": f"Basic {user}:{password}"}, body, Reason.MALFORMED),
        Case("empty Authorization", {"Authorization": ""}, body, Reason.MALFORMED),
        Case("missing Authorization", {}, body, Reason.MISSING_HEADER),
    ]
