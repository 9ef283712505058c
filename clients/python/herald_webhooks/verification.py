"""Checks that a webhook really comes from Herald, and recently.

Herald signs each delivery two ways when the tenant has a signing secret:
- `X-Webhook-Timestamp` + `X-Webhook-Signature`: hex HMAC-SHA256 over `"{timestamp}.{body}"`,
  keyed with the secret string's UTF-8 bytes (`verify`);
- the Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature`:
  `v1,` + base64 HMAC-SHA256 over `"{id}.{timestamp}.{body}"`, keyed with the base64-decoded
  part of the secret after `whsec_` (`verify_standard`).

Each webhook target has a secret of its own (`GET /v1/webhooks/targets/{id}/secret`); a target
may also have an Ed25519 key pair: its deliveries then carry a `v1a,` signature too, which
`verify_standard` checks when given the target's `whpk_` public key (that needs the
`cryptography` package: `pip install herald-webhooks[ed25519]`). A public key verifies and
cannot sign.

While a secret is rotated, the old and new secrets sign and the signature header carries one
signature per secret; any one matching is enough. A receiver rotating on its side can pass
both of its secrets. Timestamps more than five minutes away from the receiver's clock are
refused, so a captured request cannot be replayed later. Digests are compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    HeaderPairs = Iterable[tuple[str | bytes, str | bytes]]
    Headers = Mapping[str, str] | HeaderPairs
    Body = bytes | bytearray | memoryview

DEFAULT_TOLERANCE_S = 300.0
STANDARD_SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)
PUBLIC_KEY_PREFIX = "whpk_"
_TIMESTAMP = re.compile(r"[0-9]{1,15}")


class WebhookVerificationError(Exception):
    """The request is not a genuine, recent Herald webhook. `reason` says why, as one of the
    constants below; the message is safe to log (it never contains a secret or a signature)."""

    MISSING_HEADER = "missing_header"
    INVALID_HEADER = "invalid_header"
    TIMESTAMP_TOO_OLD = "timestamp_too_old"
    TIMESTAMP_IN_FUTURE = "timestamp_in_future"
    SIGNATURE_MISMATCH = "signature_mismatch"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class VerifiedWebhook:
    timestamp: int
    # The signed `webhook-id` (Herald's job id, stable across retries: de-duplicate on it).
    # Only the Standard Webhooks signature covers it, so only `verify_standard` sets it.
    webhook_id: str | None = None


def verify(
    secret: str | Sequence[str],
    body: Body,
    headers: Headers,
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> VerifiedWebhook:
    """Checks `X-Webhook-Timestamp` and `X-Webhook-Signature` against the raw request body.

    `secret` is the tenant's signing secret exactly as Herald showed it (or several, while the
    receiver rotates); `headers` any mapping (looked up case-insensitively) or (name, value)
    pairs; `now` the current Unix time, for tests. Raises WebhookVerificationError.
    """
    keys = [s.encode("utf-8") for s in _secrets(secret)]
    data = _body(body)
    timestamp = _timestamp(headers, "x-webhook-timestamp", tolerance_s, now)
    candidates = [c.strip().lower() for c in _all_values(headers, "x-webhook-signature", ",")]
    message = str(timestamp).encode() + b"." + data
    expected = [hmac.new(key, message, hashlib.sha256).hexdigest() for key in keys]
    if not _any_equal(expected, candidates):
        raise WebhookVerificationError(
            WebhookVerificationError.SIGNATURE_MISMATCH, "no X-Webhook-Signature matches the body and timestamp"
        )
    return VerifiedWebhook(timestamp)


def verify_standard(
    secret: str | Sequence[str],
    body: Body,
    headers: Headers,
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> VerifiedWebhook:
    """Checks the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
    `webhook-signature`); same arguments as `verify`. A `whsec_` secret checks the `v1`
    (HMAC) signatures, a `whpk_` public key the `v1a` (Ed25519) ones; signatures of other
    versions are ignored. Raises WebhookVerificationError, or ValueError for a key that is
    neither `whsec_` + base64 nor `whpk_` + base64 of 32 bytes."""
    given = _secrets(secret)
    public_keys = [_public_key(s) for s in given if s.startswith(PUBLIC_KEY_PREFIX)]
    keys = [_standard_key(s) for s in given if not s.startswith(PUBLIC_KEY_PREFIX)]
    data = _body(body)
    webhook_id = _single(headers, "webhook-id")
    timestamp = _timestamp(headers, "webhook-timestamp", tolerance_s, now)
    signatures = _all_values(headers, "webhook-signature", " ")
    candidates = [signature.split(",", 1)[1] for signature in signatures if signature.startswith("v1,")]
    message = f"{webhook_id}.{timestamp}.".encode() + data
    expected = [base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode() for key in keys]
    asymmetric = [signature.split(",", 1)[1] for signature in signatures if signature.startswith("v1a,")]
    if not _any_equal(expected, candidates) and not _any_ed25519(public_keys, message, asymmetric):
        raise WebhookVerificationError(
            WebhookVerificationError.SIGNATURE_MISMATCH, "no webhook-signature matches the id, timestamp and body"
        )
    return VerifiedWebhook(timestamp, webhook_id)


def _any_ed25519(public_keys: list[object], message: bytes, candidates: list[str]) -> bool:
    """Whether any `v1a` candidate is a valid Ed25519 signature of `message` by any key."""
    for key in public_keys:
        for candidate in candidates:
            try:
                key.verify(base64.b64decode(candidate, validate=True), message)  # type: ignore[attr-defined]
                return True
            except Exception:  # noqa: S112 (an invalid signature, or one that is not base64: try the next)
                continue
    return False


def _public_key(value: str) -> object:
    """A `whpk_` key as an Ed25519 public key (needs `cryptography`)."""
    try:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:  # pragma: no cover (depends on the receiver's environment)
        raise ImportError("verifying v1a (Ed25519) signatures needs `pip install herald-webhooks[ed25519]`") from None
    try:
        raw = base64.b64decode(value[len(PUBLIC_KEY_PREFIX) :], validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError):
        raise ValueError("the public key is not whpk_ followed by the base64 of 32 bytes") from None


def _any_equal(expected: list[str], candidates: list[str]) -> bool:
    """Whether any candidate equals any expected digest, each comparison in constant time."""
    matched = False
    for want in expected:
        for candidate in candidates:
            # Unreadable bytes become "?", which no hex or base64 digest contains.
            if hmac.compare_digest(want.encode(), candidate.encode("utf-8", "replace")):
                matched = True
    return matched


def _secrets(secret: str | Sequence[str]) -> list[str]:
    found = [secret] if isinstance(secret, str) else list(secret)
    if not found or not all(isinstance(s, str) and s for s in found):
        raise ValueError("give the signing secret (or several), as non-empty strings")
    return found


def _standard_key(secret: str) -> bytes:
    encoded = secret[len(STANDARD_SECRET_PREFIX) :] if secret.startswith(STANDARD_SECRET_PREFIX) else secret
    encoded += "=" * (-len(encoded) % 4)  # unpadded secrets are accepted, as the reference library does
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the secret is not a Standard Webhooks secret (whsec_ followed by base64)") from None


def _body(body: Body) -> bytes:
    if isinstance(body, str):
        raise TypeError("pass the raw request body as bytes: a decoded or re-serialised body no longer matches")
    return bytes(body)


def _pairs(headers: Headers) -> Iterable[tuple[str | bytes, str | bytes]]:
    items = getattr(headers, "items", None)
    return items() if callable(items) else headers  # type: ignore[return-value]


def _values(headers: Headers, name: str) -> list[str]:
    """Every value of header `name`, matched case-insensitively (bytes read as Latin-1, as HTTP does)."""
    found = []
    for key, value in _pairs(headers):
        key_text = key.decode("latin-1") if isinstance(key, bytes) else key
        if key_text.lower() == name:
            found.append((value.decode("latin-1") if isinstance(value, bytes) else value).strip())
    return found


def _single(headers: Headers, name: str) -> str:
    values = set(_values(headers, name)) - {""}
    if not values:
        raise WebhookVerificationError(WebhookVerificationError.MISSING_HEADER, f"the {name} header is missing")
    if len(values) > 1:
        raise WebhookVerificationError(WebhookVerificationError.INVALID_HEADER, f"the {name} header has several values")
    return values.pop()


def _all_values(headers: Headers, name: str, separator: str) -> list[str]:
    found = [part for value in _values(headers, name) for part in value.split(separator) if part.strip()]
    if not found:
        raise WebhookVerificationError(WebhookVerificationError.MISSING_HEADER, f"the {name} header is missing")
    return [part.strip() for part in found]


def _timestamp(headers: Headers, name: str, tolerance_s: float, now: float | None) -> int:
    text = _single(headers, name)
    if not _TIMESTAMP.fullmatch(text):
        raise WebhookVerificationError(
            WebhookVerificationError.INVALID_HEADER, f"the {name} header is not a Unix time in seconds"
        )
    timestamp = int(text)
    current = time.time() if now is None else now
    if current - timestamp > tolerance_s:
        raise WebhookVerificationError(
            WebhookVerificationError.TIMESTAMP_TOO_OLD, f"the {name} is more than {tolerance_s:g} s old"
        )
    if timestamp - current > tolerance_s:
        raise WebhookVerificationError(
            WebhookVerificationError.TIMESTAMP_IN_FUTURE, f"the {name} is more than {tolerance_s:g} s in the future"
        )
    return timestamp
