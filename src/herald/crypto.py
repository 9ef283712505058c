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


def new_webhook_secret() -> str:
    """A Standard Webhooks style secret: `whsec_` + base64 of 32 random bytes."""
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


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
