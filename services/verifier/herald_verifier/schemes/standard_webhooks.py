"""The symmetric (`v1`) signature of Standard Webhooks, which Svix originated: Resend sends it under `svix-*`
headers, Polar under `webhook-*` headers. Only the header names and the way the key is derived differ, so
both schemes share this check.

Signed content is `{id}.{timestamp}.{raw body}`, HMAC-SHA256, base64; the signature header holds one or more
space-separated `version,signature` entries (several during a key rotation), of which one `v1` match is enough.
Entries of other versions (`v1a` is the asymmetric variant) are ignored, as the reference libraries do.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from herald_verifier.schemes.common import (
    SYSTEM_CLOCK,
    TOLERANCE_S,
    VERIFIED,
    Clock,
    HmacKey,
    MalformedPayload,
    Outcome,
    Reason,
    Rejected,
    decode_base64,
    digests_equal,
    parse_unix_seconds,
    within_tolerance,
)

# Ids are opaque to us but are signed and later stored as de-duplication keys: printable ASCII, bounded.
_MESSAGE_ID = re.compile(r"[\x21-\x7e]{1,256}")

# How a scheme reads one header.
HeaderReader = Callable[[Mapping[str, str], str], str | None]


def sign_v1(key: HmacKey, msg_id: str, timestamp: str, body: bytes) -> bytes:
    """The raw HMAC for one message. The body goes in as bytes, never decoded and re-encoded."""
    signed = msg_id.encode("ascii") + b"." + timestamp.encode("ascii") + b"." + body
    return hmac.new(key.value, signed, hashlib.sha256).digest()


def verify_v1(
    *,
    msg_id: str | None,
    timestamp: str | None,
    signatures: str | None,
    body: bytes,
    key: HmacKey,
    now: Clock,
    tolerance_s: float,
) -> Outcome:
    """Checks the signature first and the timestamp second, so `stale_timestamp` only ever counts requests that
    really were signed with this key (replays, skewed clocks), and forgeries all count as `bad_signature`."""
    if msg_id is None or timestamp is None or signatures is None:
        return Rejected(Reason.MISSING_HEADER)
    seconds = parse_unix_seconds(timestamp)
    if seconds is None or not _MESSAGE_ID.fullmatch(msg_id):
        return Rejected(Reason.MALFORMED)
    candidates = _v1_signatures(signatures)
    if not candidates:
        return Rejected(Reason.MALFORMED)
    expected = sign_v1(key, msg_id, timestamp, body)
    # Compare against every candidate: which entry matched is no secret, but no early exit keeps it simple.
    matched = False
    for candidate in candidates:
        matched |= digests_equal(expected, candidate)
    if not matched:
        return Rejected(Reason.BAD_SIGNATURE)
    if not within_tolerance(seconds, now, tolerance_s):
        return Rejected(Reason.STALE_TIMESTAMP)
    return VERIFIED


@dataclass(frozen=True)
class Headers:
    """A scheme's id, timestamp and signature headers, and how it reads one (Resend's falls back from
    `svix-*` to `webhook-*`): with them, `verify` and `event_ids` are the scheme's own."""

    read: HeaderReader
    id: str
    timestamp: str
    signature: str

    def verify(
        self,
        headers: Mapping[str, str],
        body: bytes,
        key: HmacKey,
        *,
        now: Clock = SYSTEM_CLOCK,
        tolerance_s: float = TOLERANCE_S,
    ) -> Outcome:
        """Verifies a request against the raw body, before anything reads it."""
        return verify_v1(
            msg_id=self.read(headers, self.id),
            timestamp=self.read(headers, self.timestamp),
            signatures=self.read(headers, self.signature),
            body=body,
            key=key,
            now=now,
            tolerance_s=tolerance_s,
        )

    def event_ids(self, headers: Mapping[str, str], body: bytes) -> list[str]:
        """One event per request, identified by the id header, which the sender keeps across retries.
        Call after `verify`."""
        msg_id = self.read(headers, self.id)
        if not msg_id:
            raise MalformedPayload(f"no {self.id}")
        return [msg_id]


def _v1_signatures(header_value: str) -> list[bytes]:
    """The decoded `v1` entries. Unparseable entries are skipped rather than fatal, so one odd entry next to a
    good one does not block delivery; a header with no usable `v1` entry at all is malformed."""
    found: list[bytes] = []
    for entry in header_value.split():
        version, comma, encoded = entry.partition(",")
        if not comma or version != "v1":
            continue
        decoded = decode_base64(encoded)
        if decoded is not None:
            found.append(decoded)
    return found
