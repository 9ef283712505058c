"""The normalised events a verified body becomes, per provider."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from herald_verifier import normalise
from herald_verifier.schemes import paystack, postmark, sendgrid

from tests.verifier import corpus

TENANT = "0192f1e0-0000-7000-8000-000000000001"


def test_sendgrid_batch_maps_each_event_and_strips_the_message_id_suffix() -> None:
    body = corpus.SENDGRID_BODY
    events = normalise.sendgrid(TENANT, body, sendgrid.event_ids({}, body))
    assert [(e.type, e.recipient, e.provider_message_id) for e in events] == [
        ("bounced_hard", "ana@example.net", "14c5d75ce93"),
        ("delivered", "bo@example.net", "14c5d75ce93"),
    ]
    assert events[0].event_id == "Ym91bmNlLTEtMTc2NzIyNTU5MA"
    assert events[0].occurred_at == datetime.fromtimestamp(1767225590, tz=UTC)
    blocked = json.dumps([{"event": "bounce", "type": "blocked", "email": "x@example.net", "sg_event_id": "b"}])
    [soft] = normalise.sendgrid(TENANT, blocked.encode(), ["b"])
    assert soft.type == "bounced_soft"


def test_resend_bounce_types_and_postmark_records() -> None:
    [hard] = normalise.resend(TENANT, corpus.RESEND_BODY, ["msg_1"])
    assert (hard.type, hard.provider_message_id, hard.recipient) == (
        "bounced_hard",
        "56761188-7520-42d8-8898-ff6fc54ce618",
        "ana@example.net",
    )
    body = corpus.POSTMARK_BODY
    [bounce] = normalise.postmark(TENANT, body, postmark.event_ids({}, body))
    assert (bounce.type, bounce.recipient) == ("bounced_hard", "ana@example.net")
    soft = json.dumps({"RecordType": "Bounce", "Type": "SoftBounce", "MessageID": "m", "Email": "a@b.c"}).encode()
    assert normalise.postmark(TENANT, soft, ["x"])[0].type == "bounced_soft"
    unknown = json.dumps({"RecordType": "Mystery", "MessageID": "m"}).encode()
    assert normalise.postmark(TENANT, unknown, ["y"])[0].type == "other"


def test_payment_events_name_their_tenant_in_metadata_or_are_dropped() -> None:
    body = corpus.PAYSTACK_BODY  # no metadata: names no tenant
    assert normalise.paystack(body, paystack.event_ids({}, body)) == []
    named = json.loads(body)
    named["data"]["metadata"] = {"tenant_id": TENANT, "plan": "Indie"}
    raw = json.dumps(named).encode()
    [event] = normalise.paystack(raw, ["d"])
    # The plan in metadata is the payer's word, not a payment: it is ignored.
    assert (event.type, event.tenant_id, event.plan) == ("payment_succeeded", TENANT, "")
    assert event.occurred_at == datetime(2026, 1, 1, tzinfo=UTC)
    [polar_event] = normalise.polar(corpus.POLAR_BODY, ["msg"])
    assert (polar_event.type, polar_event.tenant_id) == ("subscription_created", "t_123")
