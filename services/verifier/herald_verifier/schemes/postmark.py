"""Postmark: its webhooks carry no signature, so each tenant gets its own HTTP Basic credentials, which it
puts in the webhook URL it gives Postmark (`https://user:password@.../inbound/postmark/{tenant}`); Postmark
sends them in the `Authorization` header.

Credentials are checked in constant time, username and password both, every time, even when the username is
already wrong, and as SHA-256 digests so the comparison length reveals nothing either. Herald issues long
random passwords, so (as with API keys) a single SHA-256 is a safe way to store them: only the digest needs
keeping. Postmark has no timestamp and no signature over the body, so replay protection is de-duplication.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from herald.inbound_keys import IssuedCredentials as IssuedCredentials
from herald.inbound_keys import PostmarkCredentials as PostmarkCredentials
from herald.inbound_keys import issue_postmark_credentials, sha256
from herald_verifier.schemes.common import (
    VERIFIED,
    Outcome,
    Reason,
    Rejected,
    body_digest,
    decode_base64,
    digests_equal,
    header,
    json_of,
)

PROVIDER: Final = "postmark"
AUTHORIZATION_HEADER: Final = "Authorization"

# What makes one Postmark event different from another event of the same type on the same message. Opens and
# clicks recur, so MessageID + RecordType alone would drop real events; bounces and complaints have their own id.
_DISCRIMINATORS: Final[dict[str, tuple[str, ...]]] = {
    "Bounce": ("ID",),
    "SpamComplaint": ("ID",),
    "Delivery": ("DeliveredAt",),
    "Open": ("ReceivedAt",),
    "Click": ("ReceivedAt", "OriginalLink"),
    "SubscriptionChange": ("ChangedAt",),
}


# Issued by the gateway, so the credentials and their issuing live in the shared kernel.
issue_credentials = issue_postmark_credentials


def verify(headers: Mapping[str, str], body: bytes, credentials: PostmarkCredentials) -> Outcome:
    """Checks the Basic credentials of a Postmark webhook. The body is not involved, but nothing may read it
    before this has passed."""
    authorization = header(headers, AUTHORIZATION_HEADER)
    if authorization is None:
        return Rejected(Reason.MISSING_HEADER)
    scheme, _, token = authorization.partition(" ")
    decoded = decode_base64(token.strip(" ")) if scheme.lower() == "basic" else None
    if decoded is None:
        return Rejected(Reason.MALFORMED)
    username, colon, password = decoded.partition(b":")
    if not colon:
        return Rejected(Reason.MALFORMED)
    # Both are compared before either result is looked at, so a wrong username takes as long as a wrong password.
    username_ok = digests_equal(sha256(username), credentials.username_sha256)
    password_ok = digests_equal(sha256(password), credentials.password_sha256)
    if not (username_ok and password_ok):
        return Rejected(Reason.BAD_SIGNATURE)
    return VERIFIED


def event_ids(headers: Mapping[str, str], body: bytes) -> list[str]:
    """`{RecordType}:{MessageID}:{discriminator}`, e.g. `Open:<message id>:<ReceivedAt>`.

    Postmark retries resend the same event, which this key matches even if re-serialised; distinct opens or
    clicks of one message stay distinct. A record type we do not know, or one missing its fields, falls back
    to a digest of the body, which still stops replays (Basic auth has no timestamp). Call after `verify`.
    """
    event = json_of(body, "Postmark", dict, "object")
    record_type = _scalar(event.get("RecordType"))
    message_id = _scalar(event.get("MessageID"))
    fields = _DISCRIMINATORS.get(record_type or "")
    if record_type is None or not message_id or fields is None:
        return [body_digest(body)]
    parts = [record_type, message_id]
    for name in fields:
        part = _scalar(event.get(name))
        if part is None:
            return [body_digest(body)]
        parts.append(part)
    return [":".join(parts)]


def _scalar(value: Any) -> str | None:
    """A string or integer field as text; anything else (absent, null, nested, boolean, empty) as None."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None
