"""Polar (payments): Standard Webhooks.

Headers `webhook-id`, `webhook-timestamp`, `webhook-signature`, signed content and tolerance exactly as for
Svix. The difference is the key. Standard Webhooks' libraries expect a base64 secret (`whsec_<base64>`) and
decode it; Polar's secret is used as it is: the HMAC key is the UTF-8 bytes of the whole string the tenant
set or generated in Polar, prefix included (e.g. `polar_whs_...`). Polar's docs warn that the secret "needs
to be base64 encoded" before handing it to a Standard Webhooks library, and their Python SDK's
`validate_event` does precisely `Webhook(base64.b64encode(secret.encode()).decode())`. So we never decode it.

Payment events change a tenant's plan, so this is the scheme a forger would aim at; nothing about it is lax.
"""

from __future__ import annotations

from typing import Final

from herald_verifier.schemes import standard_webhooks
from herald_verifier.schemes.common import HmacKey, header

PROVIDER: Final = "polar"
ID_HEADER: Final = "webhook-id"
TIMESTAMP_HEADER: Final = "webhook-timestamp"
SIGNATURE_HEADER: Final = "webhook-signature"


def load_secret(secret: str) -> HmacKey:
    """The HMAC key behind a Polar webhook secret: its UTF-8 bytes, not decoded (see the module docstring).

    Nothing is trimmed: a tenant may set its own secret in Polar, and Polar's SDK uses it exactly as given.
    Raises ValueError when empty.
    """
    if not secret:
        raise ValueError("a Polar webhook secret may not be empty")
    return HmacKey(secret.encode("utf-8"))


# One event per request, identified by `webhook-id`, which Standard Webhooks keeps across retries. It
# de-duplicates deliveries, not business facts: ordering plan changes (an older event arriving late) is the
# ledger's job, from the timestamps inside the payload.
_HEADERS: Final = standard_webhooks.Headers(header, ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER)
verify = _HEADERS.verify
event_ids = _HEADERS.event_ids
