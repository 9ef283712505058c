"""A webhook's custom headers (a target's or a direct webhook's) often carry a credential
(`Authorization: Bearer …`), so their values are sealed wherever they rest: the target row,
the job's request, the work message (and so the dead-letter stream). Beside the envelope the
values are kept masked (`Bearer ****3c9a`), which is what every reader shows: the API, the
consoles, the operator's dead-letter page. Only the webhook-sender opens the envelope, right
before the call.

The envelope is one AES-256-GCM seal (herald.secrets) of the whole map, bound to the tenant:
copied onto another tenant's job it fails to open."""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from herald.secrets import KeyRing, associated_data
from herald.v1 import common_pb2

PURPOSE = "webhook-headers"
# A credential shorter than this shows nothing of itself; a longer one its last four characters.
SHOW_TAIL_FROM = 16


def headers_aad(tenant_id: str) -> bytes:
    return associated_data(PURPOSE, tenant_id, "headers")


def mask_header_value(value: str) -> str:
    """`Bearer 9f1c…3c9a` -> `Bearer ****3c9a`: an authorization scheme stays (it says what kind
    of credential it is), the last four characters only of a long credential."""
    scheme, space, credential = value.strip().partition(" ")
    if not (space and scheme.isalpha() and len(scheme) <= 20):
        scheme, credential = "", value.strip()
    tail = credential[-4:] if len(credential) >= SHOW_TAIL_FROM else ""
    return f"{scheme} ****{tail}" if scheme else f"****{tail}"


def masked(headers: Mapping[str, str]) -> dict[str, str]:
    return {name: mask_header_value(value) for name, value in headers.items()}


def seal_headers(ring: KeyRing, tenant_id: str, headers: Mapping[str, str]) -> tuple[dict[str, str], bytes]:
    """(the masked headers, the envelope of the real ones)."""
    envelope = ring.seal(orjson.dumps(dict(headers)), headers_aad(tenant_id)).envelope
    return masked(headers), envelope


def open_headers(ring: KeyRing, tenant_id: str, envelope: bytes) -> dict[str, str]:
    """The real headers; raises herald.secrets.SecretUnavailable (which names no value)."""
    opened: dict[str, str] = orjson.loads(ring.open(envelope, headers_aad(tenant_id)))
    return opened


def seal_request(ring: KeyRing | None, tenant_id: str, request: common_pb2.WebhookRequest) -> None:
    """Seals a request's headers in place, unless it has none or they are sealed already (a
    target's, sealed when the target was saved). Without master keys they stay as given."""
    if ring is None or request.sealed_headers or not request.headers:
        return
    shown, envelope = seal_headers(ring, tenant_id, request.headers)
    request.headers.clear()
    request.headers.update(shown)
    request.sealed_headers = envelope


def delivered_headers(ring: KeyRing | None, tenant_id: str, request: common_pb2.WebhookRequest) -> dict[str, str]:
    """The headers to send: the request's, the sealed ones opened over their masked values.
    Raises RuntimeError when they are sealed and this process holds no master keys."""
    headers = dict(request.headers)
    if request.sealed_headers:
        if ring is None:
            raise RuntimeError("the webhook's headers are sealed but no master keys are configured")
        headers.update(open_headers(ring, tenant_id, request.sealed_headers))
    return headers
