"""The checks a request passes before anything is asked of the ledger, for every surface:
what nothing downstream could take is refused here (422), never passed on to fail as a 5xx."""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

from email_validator import EmailNotValidError, validate_email
from google.protobuf.message import Message

from herald.headers import RESERVED_EMAIL_HEADERS, RESERVED_WEBHOOK_HEADER_PREFIXES, RESERVED_WEBHOOK_HEADERS
from herald.ids import parse_id
from herald.v1 import common_pb2

MAX_URL_LENGTH = 2048
MAX_HEADERS = 50
MAX_BODY_BYTES = 5 * 1024 * 1024
PRIORITIES = frozenset(common_pb2.Priority.values())
# A DNS name: labels of letters, digits and hyphens, at least two of them, 253 characters at most.
DOMAIN_NAME = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$")


@lru_cache(maxsize=8192)
def normalized_email(value: str) -> tuple[str, str]:
    """(normalized address, "") or ("", why not). Cached: a tenant's senders and recipients repeat, and
    the check (no DNS) is a pure function costing more than the rest of an email's validation."""
    try:
        return validate_email(value, check_deliverability=False).normalized, ""
    except EmailNotValidError as error:
        return "", str(error)


def normalize_address(address: common_pb2.EmailAddress, field: str, problems: list[tuple[str, str]]) -> None:
    """Validates an address in place (normalized form), or adds a problem."""
    normalized, why = normalized_email(address.email)
    if why:
        problems.append((field, why))
    else:
        address.email = normalized
    if any(c in address.name for c in "\r\n\0"):
        problems.append((field, "the name must be one line"))


def email_problems(email: common_pb2.EmailRequest) -> list[tuple[str, str]]:
    """Validates (and normalizes the addresses of) an email request, for both surfaces."""
    problems: list[tuple[str, str]] = []
    normalize_address(email.__getattribute__("from"), "from", problems)
    if not email.to:
        problems.append(("to", "at least one recipient"))
    for name in ("to", "cc", "bcc"):
        addresses = getattr(email, name)
        if len(addresses) > 50:
            problems.append((name, "at most 50 addresses"))
        for i, address in enumerate(addresses):
            normalize_address(address, f"{name}[{i}]", problems)
    if email.HasField("reply_to") and email.reply_to.email:
        normalize_address(email.reply_to, "reply_to", problems)
    if not email.subject or len(email.subject) > 998:
        problems.append(("subject", "1-998 characters"))
    if not email.text and not email.html:
        problems.append(("text/html", "give text, html or both"))
    if email.fallback_provider_id and not email.provider_id:
        problems.append(("fallback", "a fallback needs a pinned provider"))
    for field_name, value in (("provider", email.provider_id), ("fallback", email.fallback_provider_id)):
        if value and parse_id(value) is None:
            problems.append((field_name, "must be one of your provider ids"))
    for name, value in email.headers.items():
        if not name or not all(33 <= ord(c) < 127 and c != ":" for c in name):
            problems.append((f"headers.{name}", "is not a valid header name"))
        elif name.lower() in RESERVED_EMAIL_HEADERS:
            problems.append((f"headers.{name}", "is set by Herald or the provider; use the field for it"))
        elif any(c in value for c in "\r\n\0"):
            problems.append((f"headers.{name}", "value must be one line"))
    return problems


def domain_name(value: str) -> str | None:
    """The domain in the form Herald stores it (lower case, no trailing dot), or None."""
    name = value.strip().lower().rstrip(".")
    return name if DOMAIN_NAME.fullmatch(name) else None


@lru_cache(maxsize=4096)
def url_problems(url: str) -> tuple[tuple[str, str], ...]:
    """A webhook URL's syntax (cached: a tenant's URLs repeat, and every item of a batch is checked)."""
    if len(url) > MAX_URL_LENGTH:
        return (("url", f"must be at most {MAX_URL_LENGTH} characters"),)
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:
        return (("url", "must be an absolute http or https URL"),)
    if parts.scheme not in ("http", "https") or not hostname:
        return (("url", "must be an absolute http or https URL"),)
    if parts.username or parts.password:
        return (("url", "must not carry credentials; use headers"),)
    return ()


# What no header value may hold (HTTP allows tab; the rest could split or smuggle a header).
CONTROL_CHARACTERS = frozenset(chr(c) for c in (*range(32), 127)) - {"\t"}


def webhook_problems(
    url: str, headers: dict[str, str], body: bytes = b"", idempotency_key: str = ""
) -> list[tuple[str, str]]:
    """A webhook's URL, headers and body: the rules of POST /v1/webhooks and of a target."""
    problems = list(url_problems(url))
    if len(headers) > MAX_HEADERS:
        problems.append(("headers", f"at most {MAX_HEADERS} headers"))
    for name, value in headers.items():
        lowered = name.lower()
        if not name or not all(33 <= ord(c) < 127 and c not in '()<>@,;:\\"/[]?={}' for c in name):
            problems.append((f"headers.{name}", "is not a valid header name"))
        elif lowered in RESERVED_WEBHOOK_HEADERS or lowered.startswith(RESERVED_WEBHOOK_HEADER_PREFIXES):
            problems.append((f"headers.{name}", "is set by Herald and cannot be overridden"))
        elif any(c in CONTROL_CHARACTERS for c in value) or len(value) > 8192:
            problems.append((f"headers.{name}", "value must be at most 8192 characters, without control characters"))
    if len(body) > MAX_BODY_BYTES:
        problems.append(("payload", f"must be at most {MAX_BODY_BYTES} bytes"))
    if len(idempotency_key) > 255:
        problems.append(("idempotency_key", "must be at most 255 characters"))
    return problems


# A message up to this size is first checked whole, serialized: text goes into the wire form as
# it is, so a form with no zero byte has no NUL in any text field (most requests: one C call
# instead of a walk over every field, which profiled at a tenth of the gateway's submit work).
# A larger one (a body of megabytes) is walked without being copied.
NUL_CHECK_WHOLE_BYTES = 64 * 1024


def nul_fields(message: Message, prefix: str = "") -> list[str]:
    """Text fields holding NUL, which PostgreSQL cannot store: refused here, so one bad item
    never fails the transaction its chunk (and other requests) share in the ledger."""
    if not prefix and message.ByteSize() <= NUL_CHECK_WHOLE_BYTES and b"\0" not in message.SerializeToString():
        return []
    found = []
    for descriptor, value in message.ListFields():
        name = f"{prefix}{descriptor.name}"
        if descriptor.message_type is not None and descriptor.message_type.GetOptions().map_entry:
            found += [f"{name}.{k}" for k, v in value.items() if "\0" in k or (isinstance(v, str) and "\0" in v)]
        elif descriptor.type == descriptor.TYPE_MESSAGE and descriptor.is_repeated:
            for i, child in enumerate(value):
                found += nul_fields(child, f"{name}[{i}].")
        elif descriptor.type == descriptor.TYPE_MESSAGE:
            found += nul_fields(value, f"{name}.")
        elif descriptor.type == descriptor.TYPE_STRING:
            values = value if descriptor.is_repeated else [value]
            found += [name for v in values if "\0" in v][:1]
    return found


def keys_problems(priority: int, idempotency_key: str, ordering_key: str) -> list[tuple[str, str]]:
    """The keys and the priority, for every submission: a priority the ledger does not know, or a
    NUL in a key, would fail the whole coalesced transaction other requests (and tenants) share."""
    problems = []
    if priority not in PRIORITIES:
        problems.append(("priority", "must be one of the Priority values"))
    if not idempotency_key.isprintable():
        problems.append(("idempotency_key", "must be printable characters"))
    if len(ordering_key) > 255 or "\0" in ordering_key:
        problems.append(("ordering_key", "must be at most 255 characters, without NUL"))
    return problems


def base_url_problems(base_url: str) -> list[tuple[str, str]]:
    if not base_url:
        return []
    parts = urlsplit(base_url)
    if len(base_url) > MAX_URL_LENGTH or parts.scheme not in ("http", "https") or not parts.hostname:
        return [("base_url", "must be an absolute http or https URL")]
    if parts.username or parts.password or parts.query or parts.fragment:
        return [("base_url", "must not carry credentials, a query or a fragment")]
    return []
