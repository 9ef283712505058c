"""How each provider signs a request, with the official library where one exists: `svix` for Resend,
`standardwebhooks` (keyed exactly as Polar's SDK keys it) for Polar, `cryptography` ECDSA P-256 for SendGrid,
`hmac` SHA-512 for Paystack, HTTP Basic for Postmark; and the mutations the cases make of a request."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime

import standardwebhooks
import svix
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


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
