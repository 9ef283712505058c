"""The event ids each provider scheme reads from a verified request, for de-duplication: message ids where the
provider sends them, stable digests where it does not, and refusals of bodies of another shape. No network, no
services."""

from __future__ import annotations

import hashlib
import json

import pytest
from herald_verifier.schemes import MalformedPayload, paystack, polar, postmark, resend, sendgrid

from tests.support.scheme_keys import POLAR_SECRET, RESEND_SECRET
from tests.verifier import corpus
from tests.verifier.corpus import NOW


def test_resend_and_polar_event_ids_are_the_message_ids() -> None:
    resend_headers = corpus.resend_headers(RESEND_SECRET, corpus.RESEND_BODY, timestamp=NOW, msg_id="msg_abc")
    assert resend.event_ids(resend_headers, corpus.RESEND_BODY) == ["msg_abc"]
    assert resend.event_ids({"webhook-id": "msg_def"}, b"") == ["msg_def"]
    polar_headers = corpus.polar_headers(POLAR_SECRET, corpus.POLAR_BODY, timestamp=NOW, msg_id="msg_ghi")
    assert polar.event_ids(polar_headers, corpus.POLAR_BODY) == ["msg_ghi"]
    with pytest.raises(MalformedPayload):
        polar.event_ids({}, corpus.POLAR_BODY)


def test_sendgrid_event_ids_one_per_event_in_order() -> None:
    assert sendgrid.event_ids({}, corpus.SENDGRID_BODY) == [
        "Ym91bmNlLTEtMTc2NzIyNTU5MA",
        "ZGVsaXZlcmVkLTItMTc2NzIyNTU5NQ",
    ]


def test_sendgrid_event_without_id_gets_a_stable_digest() -> None:
    first = json.dumps([{"event": "open", "email": "a@example.net", "timestamp": 1}]).encode()
    same_event_reordered = b'[{"timestamp": 1, "email": "a@example.net", "event": "open"}]'
    other = json.dumps([{"event": "open", "email": "a@example.net", "timestamp": 2}]).encode()
    (first_id,) = sendgrid.event_ids({}, first)
    assert first_id.startswith("sha256:")
    assert sendgrid.event_ids({}, same_event_reordered) == [first_id]
    assert sendgrid.event_ids({}, other) != [first_id]


@pytest.mark.parametrize("body", [b"", b"not json", b'{"event": "bounce"}', b"[1, 2]"])
def test_sendgrid_event_ids_refuse_other_shapes(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        sendgrid.event_ids({}, body)


def test_paystack_event_id_is_the_body_digest() -> None:
    body = corpus.PAYSTACK_BODY
    assert paystack.event_ids({}, body) == ["sha256:" + hashlib.sha256(body).hexdigest()]
    assert paystack.event_ids({}, body) == paystack.event_ids({}, bytes(body))  # a replay: the same key
    # Same object id, another event: must not be merged.
    disable = json.loads(body) | {"event": "subscription.disable"}
    assert paystack.event_ids({}, json.dumps(disable).encode()) != paystack.event_ids({}, body)


def _postmark(**fields: object) -> bytes:
    return json.dumps({"MessageID": "m-1", **fields}).encode()


def test_postmark_event_ids() -> None:
    assert postmark.event_ids({}, corpus.POSTMARK_BODY) == [
        "Bounce:883953f4-6105-42a2-a16a-77a8eac79483:4323372036854775807"
    ]
    first_open = _postmark(RecordType="Open", ReceivedAt="2026-01-01T00:00:00Z", FirstOpen=True)
    reserialised = json.dumps(json.loads(first_open), indent=2).encode()
    second_open = _postmark(RecordType="Open", ReceivedAt="2026-01-01T01:00:00Z", FirstOpen=False)
    assert postmark.event_ids({}, first_open) == ["Open:m-1:2026-01-01T00:00:00Z"]
    assert postmark.event_ids({}, reserialised) == postmark.event_ids({}, first_open)  # a retry, re-serialised
    assert postmark.event_ids({}, second_open) != postmark.event_ids({}, first_open)  # opens recur
    click_a = _postmark(RecordType="Click", ReceivedAt="2026-01-01T00:00:00Z", OriginalLink="https://example.com/a")
    click_b = _postmark(RecordType="Click", ReceivedAt="2026-01-01T00:00:00Z", OriginalLink="https://example.com/b")
    assert postmark.event_ids({}, click_a) != postmark.event_ids({}, click_b)
    delivery = _postmark(RecordType="Delivery", DeliveredAt="2026-01-01T00:00:01Z")
    assert postmark.event_ids({}, delivery) == ["Delivery:m-1:2026-01-01T00:00:01Z"]
    change = _postmark(RecordType="SubscriptionChange", ChangedAt="2026-01-01T00:00:02Z", SuppressSending=True)
    assert postmark.event_ids({}, change) == ["SubscriptionChange:m-1:2026-01-01T00:00:02Z"]


@pytest.mark.parametrize(
    "body",
    [
        _postmark(RecordType="Inbound"),
        _postmark(RecordType="Open"),
        _postmark(RecordType="Bounce", ID=None),
        json.dumps({"RecordType": "Bounce", "ID": 7}).encode(),
    ],
    ids=["unknown record type", "open without ReceivedAt", "bounce with a null ID", "no MessageID"],
)
def test_postmark_event_ids_fall_back_to_the_body_digest(body: bytes) -> None:
    assert postmark.event_ids({}, body) == ["sha256:" + hashlib.sha256(body).hexdigest()]


@pytest.mark.parametrize("body", [b"", b"nope", b"[]"])
def test_postmark_event_ids_refuse_other_shapes(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        postmark.event_ids({}, body)
