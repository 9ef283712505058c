"""Cases for Paystack (HMAC-SHA512 of the body) and Postmark (HTTP Basic): schemes without a timestamp."""

from __future__ import annotations

import base64
import hashlib
import hmac

from herald_verifier.schemes import Reason

from tests.verifier.corpus.samples import PAYSTACK_BODY, POSTMARK_BODY, Case
from tests.verifier.corpus.signing import flip_one_byte, paystack_headers, postmark_headers, replaced, reserialised


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
