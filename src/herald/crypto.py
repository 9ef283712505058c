"""Secrets handling shared by every service.

API keys Herald issues are long random strings, so a single SHA-256 is enough to
store them: nobody can brute-force 192 bits. The key is shown once and never stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

API_KEY_PREFIX = "hk_live_"


@dataclass(frozen=True)
class IssuedApiKey:
    plaintext: str
    public_id: str
    sha256: bytes


def issue_api_key() -> IssuedApiKey:
    public_id = secrets.token_hex(4)
    plaintext = f"{API_KEY_PREFIX}{public_id}_{secrets.token_urlsafe(24)}"
    return IssuedApiKey(plaintext=plaintext, public_id=public_id, sha256=hash_api_key(plaintext))


def hash_api_key(plaintext: str) -> bytes:
    return hashlib.sha256(plaintext.encode("utf-8", "surrogatepass")).digest()


def constant_time_equals(a: str | bytes, b: str | bytes) -> bool:
    """Compares secrets without leaking, through timing, how much of a guess was right."""
    left = a.encode() if isinstance(a, str) else a
    right = b.encode() if isinstance(b, str) else b
    return hmac.compare_digest(left, right)


OPERATOR_TOKEN_PREFIX = "hk_op_"  # noqa: S105 (a prefix, not a secret)


def new_operator_token() -> str:
    """A named operator's token: shown once, stored (by the ledger) as its SHA-256 like an API key."""
    return f"{OPERATOR_TOKEN_PREFIX}{secrets.token_urlsafe(32)}"


WEBHOOK_SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)


ED25519_PRIVATE_PREFIX = "whsk_"
ED25519_PUBLIC_PREFIX = "whpk_"
WEBHOOK_SECRET_BYTES = (24, 64)  # what a secret a tenant brings may hold


def new_webhook_secret() -> str:
    """A Standard Webhooks style secret: `whsec_` + base64 of 32 random bytes."""
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def webhook_secret_problem(value: str) -> str | None:
    """Why `value` cannot be a webhook signing secret a tenant brings (None: it can). The
    answer never repeats the value: it may be a real secret, typed in the wrong field."""
    low, high = WEBHOOK_SECRET_BYTES
    why = f"must be {WEBHOOK_SECRET_PREFIX} followed by the base64 of {low}-{high} bytes"
    if not value.startswith(WEBHOOK_SECRET_PREFIX):
        return why
    try:
        raw = base64.b64decode(value.removeprefix(WEBHOOK_SECRET_PREFIX), validate=True)
    except ValueError:
        return why
    return None if low <= len(raw) <= high else why


def new_ed25519_key_pair() -> tuple[str, str]:
    """(`whsk_` private key, `whpk_` public key), each the base64 of the raw 32 bytes, as
    Standard Webhooks writes asymmetric keys."""
    private = Ed25519PrivateKey.generate()
    raw_private = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    raw_public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return (
        ED25519_PRIVATE_PREFIX + base64.b64encode(raw_private).decode(),
        ED25519_PUBLIC_PREFIX + base64.b64encode(raw_public).decode(),
    )


def sign_standard_webhook_ed25519(private_key: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`webhook-signature` `v1a,` + base64 Ed25519 signature over `"{id}.{timestamp}.{body}"`
    (Standard Webhooks' asymmetric version): a receiver holding the public key can verify
    and cannot sign."""
    raw = base64.b64decode(private_key.removeprefix(ED25519_PRIVATE_PREFIX))
    message = f"{message_id}.{timestamp}.".encode() + body
    return "v1a," + base64.b64encode(Ed25519PrivateKey.from_private_bytes(raw).sign(message)).decode()


def sign_payload(secret: str, timestamp: int, body: bytes) -> str:
    """`X-Webhook-Signature`: hex HMAC-SHA256 over `"{timestamp}.{body}"`, keyed with the
    secret string exactly as the tenant holds it (its UTF-8 bytes), so a receiver needs
    no decoding step."""
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def sign_standard_webhook(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`webhook-signature` per Standard Webhooks: `v1,` + base64 HMAC-SHA256 over
    `"{id}.{timestamp}.{body}"`, keyed with the base64-decoded part after `whsec_`."""
    key = base64.b64decode(secret.removeprefix(WEBHOOK_SECRET_PREFIX))
    message = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode()
