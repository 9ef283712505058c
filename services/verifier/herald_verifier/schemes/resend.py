"""Resend: its webhooks are delivered by Svix, so they carry Svix's scheme.

Headers `svix-id`, `svix-timestamp` (Unix seconds), `svix-signature` (`v1,<base64>` entries, space-separated).
The signing secret the tenant copies from Resend reads `whsec_<base64>`; the HMAC key is the base64-decoded
part. Svix re-signs every retry with a fresh timestamp and keeps `svix-id`, so a five-minute tolerance both
ways rejects replays without losing retries, and `svix-id` de-duplicates them.

Like Svix's own library, each `svix-*` header falls back to its `webhook-*` twin (Svix's white-labelled names):
the key and the HMAC are the same, so this admits nothing a forger could use, and keeps working if Resend
ever switches names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from herald.inbound_keys import SVIX_SECRET_PREFIX, load_svix_secret
from herald_verifier.schemes import standard_webhooks
from herald_verifier.schemes.common import header

PROVIDER: Final = "resend"
ID_HEADER: Final = "svix-id"
TIMESTAMP_HEADER: Final = "svix-timestamp"
SIGNATURE_HEADER: Final = "svix-signature"
SECRET_PREFIX: Final = SVIX_SECRET_PREFIX


# The loader lives in the shared kernel: the gateway checks a secret with it when the tenant saves it.
load_secret = load_svix_secret


def _svix_header(headers: Mapping[str, str], name: str) -> str | None:
    """`svix-<x>`, or else `webhook-<x>`, header by header, as Svix's library reads them."""
    value = header(headers, name)
    return value if value is not None else header(headers, name.replace("svix-", "webhook-", 1))


# One event per request; Svix keeps `svix-id` across retries of the same message.
_HEADERS: Final = standard_webhooks.Headers(_svix_header, ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER)
verify = _HEADERS.verify
event_ids = _HEADERS.event_ids
