"""Secrets handling shared by every service.

API keys Herald issues are long random strings, so a single SHA-256 is enough to
store them: nobody can brute-force 192 bits. The key is shown once and never stored.
"""

from __future__ import annotations

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


def new_operator_token() -> str:
    return f"hk_op_{secrets.token_urlsafe(32)}"
