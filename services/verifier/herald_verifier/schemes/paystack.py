"""Paystack (payments).

`x-paystack-signature` is the hex HMAC-SHA512 of the raw body, keyed with the Paystack secret key
(`sk_live_...` / `sk_test_...`) of the account the webhook belongs to. Paystack's own sample hashes
`JSON.stringify(req.body)`, which only matches while the re-serialisation happens to reproduce the bytes; we
hash the raw body, which is what was signed.

The scheme has no timestamp, so there is no tolerance to apply: a captured request can be replayed forever.
Replays are therefore stopped by de-duplication alone (see `event_ids`), and plan changes must be idempotent
and ordered by the event's own dates. Paystack also publishes source IPs; allow-listing them belongs to the
ingress, not here.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Final

from herald_verifier.schemes.common import (
    VERIFIED,
    HmacKey,
    Outcome,
    Reason,
    Rejected,
    body_digest,
    digests_equal,
    header,
)

PROVIDER: Final = "paystack"
SIGNATURE_HEADER: Final = "x-paystack-signature"

_HEX_SHA512 = re.compile(r"[0-9a-fA-F]{128}")


def load_secret(secret_key: str) -> HmacKey:
    """The HMAC key: the secret key's bytes, as Paystack uses them. Raises ValueError when empty."""
    text = secret_key.strip()
    if not text:
        raise ValueError("a Paystack secret key may not be empty")
    return HmacKey(text.encode("utf-8"))


def sign(key: HmacKey, body: bytes) -> bytes:
    """The raw HMAC-SHA512 Paystack sends, hex-encoded, in `x-paystack-signature`."""
    return hmac.new(key.value, body, hashlib.sha512).digest()


def verify(headers: Mapping[str, str], body: bytes, key: HmacKey) -> Outcome:
    """Verifies a Paystack webhook against the raw body, before anything reads it.

    Hex is compared as the decoded digest, so letter case does not matter and the comparison length is fixed.
    """
    signature = header(headers, SIGNATURE_HEADER)
    if signature is None:
        return Rejected(Reason.MISSING_HEADER)
    if not _HEX_SHA512.fullmatch(signature):
        return Rejected(Reason.MALFORMED)
    if not digests_equal(sign(key, body), bytes.fromhex(signature)):
        return Rejected(Reason.BAD_SIGNATURE)
    return VERIFIED


def event_ids(headers: Mapping[str, str], body: bytes) -> list[str]:
    """A digest of the body: the only key that never merges two different events.

    `data.id` is the id of the object, not of the event: `subscription.create` and `subscription.disable`
    share the subscription's id, and an invoice sees several `invoice.update`. Without a timestamp in the
    signature, a replay can only be the very same bytes, and Paystack's retries resend the stored event, so the
    body digest catches both. Call after `verify`.
    """
    return [body_digest(body)]
