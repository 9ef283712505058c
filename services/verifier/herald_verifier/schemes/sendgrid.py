"""SendGrid (Twilio) Event Webhook, signed.

SendGrid signs each POST with ECDSA P-256 / SHA-256 over the `X-Twilio-Email-Event-Webhook-Timestamp` header
value followed by the raw body, and sends the base64 DER signature in `X-Twilio-Email-Event-Webhook-Signature`.
The tenant pastes the verification key SendGrid shows: base64 of a DER SubjectPublicKeyInfo (a PEM body
without its armour). SendGrid's own helper verifies `(timestamp + payload)` with exactly this key and curve.

Tolerance: SendGrid documents none. We apply the same five minutes either way as the other schemes: each POST
is signed when it is sent (failed batches are retried, possibly re-batched, so they are signed again), and
SendGrid clocks are NTP-synchronised. Replays inside the window are caught by `sg_event_id` de-duplication.
If retries ever turn out to keep their first timestamp, widen `tolerance_s` for this provider only.

ECDSA signatures are malleable ((r, s) and (r, n - s) both verify); that is harmless here because nothing is
keyed on the signature bytes: de-duplication uses `sg_event_id`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Final

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from herald.inbound_keys import load_sendgrid_public_key
from herald_verifier.schemes.common import (
    SYSTEM_CLOCK,
    TOLERANCE_S,
    VERIFIED,
    Clock,
    MalformedPayload,
    Outcome,
    Reason,
    Rejected,
    decode_base64,
    header,
    json_of,
    parse_unix_seconds,
    within_tolerance,
)

PROVIDER: Final = "sendgrid"
SIGNATURE_HEADER: Final = "X-Twilio-Email-Event-Webhook-Signature"
TIMESTAMP_HEADER: Final = "X-Twilio-Email-Event-Webhook-Timestamp"

# The loader lives in the shared kernel: the gateway checks a key with it when the tenant saves it.
load_public_key = load_sendgrid_public_key


def verify(
    headers: Mapping[str, str],
    body: bytes,
    key: ec.EllipticCurvePublicKey,
    *,
    now: Clock = SYSTEM_CLOCK,
    tolerance_s: float = TOLERANCE_S,
) -> Outcome:
    """Verifies a signed Event Webhook POST against the raw body, before anything reads it.

    The signature is checked before the timestamp, so `stale_timestamp` counts only authentic old requests.
    """
    signature = header(headers, SIGNATURE_HEADER)
    timestamp = header(headers, TIMESTAMP_HEADER)
    if signature is None or timestamp is None:
        return Rejected(Reason.MISSING_HEADER)
    seconds = parse_unix_seconds(timestamp)
    der = decode_base64(signature)
    if seconds is None or der is None or not _is_der_signature(der):
        return Rejected(Reason.MALFORMED)
    try:
        key.verify(der, timestamp.encode("ascii") + body, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return Rejected(Reason.BAD_SIGNATURE)
    if not within_tolerance(seconds, now, tolerance_s):
        return Rejected(Reason.STALE_TIMESTAMP)
    return VERIFIED


def _is_der_signature(der: bytes) -> bool:
    """Whether the bytes parse as an ECDSA (r, s) DER sequence; telling garbage from a wrong signature."""
    try:
        decode_dss_signature(der)
    except ValueError:
        return False
    return True


def event_ids(headers: Mapping[str, str], body: bytes) -> list[str]:
    """One id per event in the batch, in body order: SendGrid posts a JSON array and recommends de-duplicating
    on `sg_event_id`, unique per event. An event without one (not expected from signed webhooks) is keyed by a
    digest of its canonical JSON, so it is still de-duplicated and never confused with another event.

    Call after `verify`. Raises MalformedPayload when the body is not a JSON array of objects.
    """
    events = json_of(body, "SendGrid", list, "array")
    ids: list[str] = []
    for event in events:
        if not isinstance(event, dict):
            raise MalformedPayload("SendGrid event is not a JSON object")
        event_id = event.get("sg_event_id")
        if isinstance(event_id, str) and event_id:
            ids.append(event_id)
        else:
            canonical = orjson.dumps(event, option=orjson.OPT_SORT_KEYS)
            ids.append("sha256:" + hashlib.sha256(canonical).hexdigest())
    return ids
