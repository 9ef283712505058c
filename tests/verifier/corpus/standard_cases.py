"""Cases for Svix / Standard Webhooks: Resend and Polar share the scheme, not the key or header names."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime

import standardwebhooks
from herald_verifier.schemes import Reason

from tests.verifier.corpus.samples import NOW, POLAR_BODY, RESEND_BODY, TOLERANCE_S, Case
from tests.verifier.corpus.signing import flip_one_byte, polar_headers, replaced, resend_headers, reserialised, without

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
