"""The corpus's fixed clock and tolerance, `Case` (a request and the verdict owed to it), and the sample
bodies: realistic, with non-ASCII text, so "the raw bytes" is really tested."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from herald_verifier.schemes import Reason

NOW = 1_767_225_600  # 2026-01-01T00:00:00Z: a fixed clock keeps the corpus deterministic.
TOLERANCE_S = 300


@dataclass(frozen=True)
class Case:
    """One request and the verdict owed to it: None means accepted, otherwise the rejection reason."""

    name: str
    headers: dict[str, str]
    body: bytes
    expected: Reason | None
    note: str = field(default="", compare=False)

    @property
    def accepted(self) -> bool:
        return self.expected is None


RESEND_BODY = json.dumps(
    {
        "type": "email.bounced",
        "created_at": "2026-01-01T00:00:00.000Z",
        "data": {
            "email_id": "56761188-7520-42d8-8898-ff6fc54ce618",
            "from": "Acme <billing@example.com>",
            "to": ["ana@example.net"],
            "subject": "Réservation confirmée",
            "bounce": {"type": "Permanent", "subType": "General", "message": "550 5.1.1 user unknown"},
        },
    },
    ensure_ascii=False,
).encode()

POLAR_BODY = json.dumps(
    {
        "type": "subscription.active",
        "timestamp": "2026-01-01T00:00:00.000000Z",
        "data": {
            "id": "b6d3f1a4-0c5e-4f7e-9a51-3f2c1d0e9b87",
            "status": "active",
            "customer": {"email": "owner@example.com", "name": "Zoë"},
            "product": {"name": "Herald Pro"},
            "metadata": {"herald_tenant": "t_123"},
        },
    },
    ensure_ascii=False,
).encode()

# SendGrid's body ends with CRLF, and the signature covers it: a framework that trims the body breaks it.
SENDGRID_BODY = (
    json.dumps(
        [
            {
                "email": "ana@example.net",
                "timestamp": 1767225590,
                "event": "bounce",
                "type": "bounce",
                "reason": "550 5.1.1 user unknown",
                "sg_event_id": "Ym91bmNlLTEtMTc2NzIyNTU5MA",
                "sg_message_id": "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
            },
            {
                "email": "bo@example.net",
                "timestamp": 1767225595,
                "event": "delivered",
                "sg_event_id": "ZGVsaXZlcmVkLTItMTc2NzIyNTU5NQ",
                "sg_message_id": "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.1",
            },
        ]
    ).encode()
    + b"\r\n"
)

PAYSTACK_BODY = json.dumps(
    {
        "event": "charge.success",
        "data": {
            "id": 302961,
            "status": "success",
            "reference": "qTPrJoy9Bx",
            "amount": 10000,
            "currency": "NGN",
            "customer": {"email": "owner@example.com", "first_name": "Adébáyọ̀"},
            "plan": {"plan_code": "PLN_gx2wn530m0i3w3m"},
            "paid_at": "2026-01-01T00:00:00.000Z",
        },
    },
    ensure_ascii=False,
).encode()

POSTMARK_BODY = json.dumps(
    {
        "RecordType": "Bounce",
        "ID": 4323372036854775807,
        "Type": "HardBounce",
        "TypeCode": 1,
        "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
        "Email": "ana@example.net",
        "BouncedAt": "2026-01-01T00:00:00Z",
        "Inactive": True,
        "MessageStream": "outbound",
        "Subject": "Réservation confirmée",
    },
    ensure_ascii=False,
).encode()
