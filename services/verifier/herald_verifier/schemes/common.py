"""What every provider scheme shares: the verdict, the reasons a request is refused, the clock, and the
small strict parsers for header values (`HmacKey` and `decode_base64` live in the shared kernel,
`herald.inbound_keys`, with the key loaders the gateway uses too).

A scheme answers with a verdict instead of raising, so the HTTP layer cannot forget a branch: it answers 401
with no detail for any `Rejected` and counts it by (provider, reason). Reasons are few and coarse on purpose:
they feed metrics and logs, never the caller.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from herald.inbound_keys import HmacKey as HmacKey
from herald.inbound_keys import decode_base64 as decode_base64

# What the package re-exports (`herald_verifier.schemes`): the vocabulary a scheme's callers need. The parsers
# below stay for the schemes themselves, imported from here.
__all__ = [
    "SYSTEM_CLOCK",
    "TOLERANCE_S",
    "VERIFIED",
    "Clock",
    "HmacKey",
    "MalformedPayload",
    "Outcome",
    "Reason",
    "Rejected",
    "Verified",
]

Clock = Callable[[], float]
"""Seconds since the epoch, like `time.time`; injected so tests can sit just inside or outside a tolerance."""

SYSTEM_CLOCK: Final[Clock] = time.time

TOLERANCE_S: Final = 300
"""Five minutes either way: the Svix / Standard Webhooks value, and the one Herald's own outbound webhooks use."""


class Reason(StrEnum):
    """Why a request was refused. The values are metric labels: keep them stable."""

    BAD_SIGNATURE = "bad_signature"
    """Well formed, but the signature (or Basic credentials) does not match this tenant's key."""
    STALE_TIMESTAMP = "stale_timestamp"
    """Authentically signed, but its timestamp is outside the tolerance: a replay, or a badly skewed clock."""
    MISSING_HEADER = "missing_header"
    """A header the scheme requires is absent."""
    MALFORMED = "malformed"
    """A header is present but cannot be what the provider sends: empty, bad base64, not a number, garbage."""
    UNKNOWN_TENANT = "unknown_tenant"
    """No such tenant, or it has no key for this provider. Decided by the caller, before any scheme runs."""


@dataclass(frozen=True, slots=True)
class Verified:
    """The request comes from the provider, untouched, and (where the scheme has a timestamp) is recent.

    Truthy, so `if not outcome:` reads naturally; `isinstance` narrows the type for mypy.
    """

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Rejected:
    """The request must not be believed. `reason` is for metrics and logs only, never for the caller."""

    reason: Reason

    def __bool__(self) -> bool:
        return False


Outcome = Verified | Rejected

VERIFIED: Final = Verified()


class MalformedPayload(ValueError):
    """An authentic body that still cannot be read for event ids (the provider changed its format, say).

    Raised only after verification; the message never quotes the body.
    """


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value, whatever the case of its name, with surrounding whitespace removed.

    Starlette's `Headers` already matches case-insensitively; a plain dict (tests, other callers) may not, so
    fall back to a scan. Whitespace around a field value is not part of it (RFC 9110 §5.5).
    """
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        for key, candidate in headers.items():
            if key.lower() == lowered:
                value = candidate
                break
    return None if value is None else value.strip(" \t")


_UNIX_SECONDS = re.compile(r"[0-9]{1,15}")


def parse_unix_seconds(value: str) -> int | None:
    """Whole seconds since the epoch, or None. Stricter than `int()`, which also takes signs, underscores and
    non-ASCII digits: the signed text must be exactly what the provider sent, so only plain digits pass."""
    if not _UNIX_SECONDS.fullmatch(value):
        return None
    return int(value)


def within_tolerance(timestamp: int, now: Clock, tolerance_s: float) -> bool:
    """True when `timestamp` is at most `tolerance_s` seconds away from now, in the past or the future."""
    return abs(now() - timestamp) <= tolerance_s


def json_of(body: bytes, provider: str, shape: type[dict[str, Any]] | type[list[Any]], what: str) -> Any:
    """The body's JSON when it is `shape` (a JSON `what`: "object", "array"), or MalformedPayload."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise MalformedPayload(f"{provider} body is not JSON") from None
    if not isinstance(value, shape):
        raise MalformedPayload(f"{provider} body is not a JSON {what}")
    return value


def body_digest(body: bytes) -> str:
    """A de-duplication key for a body that carries no usable id: a replay of a signed body is byte-identical."""
    return "sha256:" + hashlib.sha256(body).hexdigest()


def digests_equal(a: bytes, b: bytes) -> bool:
    """Constant-time equality, the only way any scheme compares a MAC, a signature or a credential."""
    return hmac.compare_digest(a, b)
