"""An `EmailRequest` read the ways the adapters need it: display addresses, recipient
lists, the sending domain, and a MIME message for SMTP.

The gateway validates addresses; this module still refuses what would corrupt a message
(CR/LF in a header, a header Herald or the provider owns) rather than pass it through.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Any

from herald.headers import RESERVED_EMAIL_HEADERS
from herald.v1 import common_pb2

# RFC 5322 atext plus spaces: a display name made of these needs no quoting.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~ ]+")
_HEADER_NAME = re.compile(r"[!-9;-~]+")
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")


def display(address: common_pb2.EmailAddress) -> str:
    """`Name <email>` (name quoted when it holds punctuation, as Postmark requires), or the bare email."""
    name = address.name.strip()
    if not name:
        return address.email
    if not _PLAIN_NAME.fullmatch(name):
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        name = f'"{escaped}"'
    return f"{name} <{address.email}>"


@dataclass(frozen=True)
class JsonFields:
    """How a provider's JSON send body names the parts every message has (Postmark's `From`,
    `TextBody`; Resend's `from`, `text`), and how it writes a list of addresses."""

    sender: str
    to: str
    subject: str
    cc: str
    bcc: str
    reply_to: str
    text: str
    html: str
    addresses: Callable[[list[str]], Any]  # display addresses -> the body's value


def common_fields(request: common_pb2.EmailRequest, fields: JsonFields) -> dict[str, Any]:
    """The parts of `request` every message has, in a provider's names and in this order (an
    empty one left out); the provider adds its own (headers, tags) after them."""
    body: dict[str, Any] = {
        fields.sender: display(sender(request)),
        fields.to: fields.addresses([display(a) for a in request.to]),
        fields.subject: request.subject,
    }
    if request.cc:
        body[fields.cc] = fields.addresses([display(a) for a in request.cc])
    if request.bcc:
        body[fields.bcc] = fields.addresses([display(a) for a in request.bcc])
    if has_reply_to(request):
        body[fields.reply_to] = display(request.reply_to)
    if request.text:
        body[fields.text] = request.text
    if request.html:
        body[fields.html] = request.html
    return body


def has_reply_to(request: common_pb2.EmailRequest) -> bool:
    return request.HasField("reply_to") and bool(request.reply_to.email)


def envelope_recipients(request: common_pb2.EmailRequest) -> list[str]:
    """Everyone the message goes to, Bcc included, each once, in order."""
    seen: dict[str, None] = {}
    for address in [*request.to, *request.cc, *request.bcc]:
        seen.setdefault(address.email, None)
    return list(seen)


def sender_domain(request: common_pb2.EmailRequest) -> str:
    """The from-address's domain, lower-cased: what domain verification is about."""
    return sender(request).email.rpartition("@")[2].lower()


def sender(request: common_pb2.EmailRequest) -> common_pb2.EmailAddress:
    """`from` is a Python keyword, so the field is read by name."""
    address: common_pb2.EmailAddress = getattr(request, "from")
    return address


def header_problems(request: common_pb2.EmailRequest) -> list[str]:
    """Custom headers that cannot go out as given: reserved names, bad names, line breaks."""
    problems = []
    for name, value in sorted(request.headers.items()):
        if name.lower() in RESERVED_EMAIL_HEADERS:
            problems.append(f"header {name!r} is set by Herald or the provider")
        elif not _HEADER_NAME.fullmatch(name):
            problems.append(f"header name {name!r} is not a valid header name")
        elif "\r" in value or "\n" in value:
            problems.append(f"header {name!r} contains a line break")
    return problems


def message_id_for(request: common_pb2.EmailRequest, idempotency_key: str) -> str:
    """The Message-ID (without brackets) an SMTP send carries. Derived from the idempotency
    key, so a retry after a timeout sends the same Message-ID and receivers that de-duplicate
    on it (many do) show one message; random when there is no key."""
    domain = sender_domain(request) or "herald.invalid"
    if not idempotency_key:
        return make_msgid(domain=domain)[1:-1]
    token = idempotency_key if _SAFE_ID.fullmatch(idempotency_key) else _digest(idempotency_key)
    return f"herald.{token}@{domain}"


def mime_message(request: common_pb2.EmailRequest, message_id: str, now: datetime | None = None) -> EmailMessage:
    """The RFC 5322 message for SMTP. Bcc recipients are not written into it (only the envelope
    carries them). Raises ValueError for an address or header the email package refuses."""
    message = EmailMessage()
    message["From"] = _address(sender(request))
    if request.to:
        message["To"] = [_address(a) for a in request.to]
    if request.cc:
        message["Cc"] = [_address(a) for a in request.cc]
    if has_reply_to(request):
        message["Reply-To"] = _address(request.reply_to)
    message["Subject"] = request.subject
    message["Date"] = format_datetime(now or datetime.now(UTC))
    message["Message-ID"] = f"<{message_id}>"
    for name, value in sorted(request.headers.items()):
        message[name] = value
    if request.text and request.html:
        message.set_content(request.text)
        message.add_alternative(request.html, subtype="html")
    elif request.html:
        message.set_content(request.html, subtype="html")
    else:
        message.set_content(request.text)
    return message


def _address(address: common_pb2.EmailAddress) -> Address:
    try:
        return Address(display_name=address.name, addr_spec=address.email)
    except (ValueError, IndexError) as error:
        raise ValueError(f"malformed address ({type(error).__name__})") from error


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:40]
