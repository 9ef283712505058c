"""Each webhook target signs with a secret of its own: a receiver that can verify one target's
deliveries cannot forge or replay for another target of the same tenant (checked with Herald's
verifier, clients/python, and the official standardwebhooks library); a rotation keeps the
previous keys signing for the overlap, and an overlap of 0 stops them at once; a target from
before targets had keys signs with the tenant's secret beside its own until its first
rotation; bad keys and overlaps are refused with the field named and the key not repeated; an
Ed25519 key pair signs `v1a`, checked with `cryptography` directly and with Herald's verifier
(the standardwebhooks library does not verify `v1a`); a target's test sends a signed ping now
and answers what the receiver said."""

from __future__ import annotations

import base64
import os
from typing import Any

import grpc
import httpx
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from herald_webhooks.verification import WebhookVerificationError, verify, verify_standard
from standardwebhooks.webhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as StandardError

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant, remember_secret, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Received, Receiver


def created(gateway: str, tenant: TenantKey, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{gateway}{path}", json=body, headers=tenant.headers, timeout=30)
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()
    return found


def target_secret(gateway: str, tenant: TenantKey, target_id: str) -> str:
    response = httpx.get(f"{gateway}/v1/webhooks/targets/{target_id}/secret", headers=tenant.headers, timeout=30)
    assert response.status_code == 200, response.text
    return remember_secret(response.json()["key"])


def rotate(gateway: str, tenant: TenantKey, target_id: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.post(
        f"{gateway}/v1/webhooks/targets/{target_id}/secret/rotate", json=body, headers=tenant.headers, timeout=30
    )


def subscribed_target(gateway: str, tenant: TenantKey, url: str, event_type: str, **fields: Any) -> str:
    target = created(gateway, tenant, "/v1/webhooks/targets", {"url": url, **fields})
    event_filter = created(gateway, tenant, "/v1/webhooks/filters", {"event_types": [event_type]})
    created(gateway, tenant, "/v1/webhooks/subscriptions", {"target_id": target["id"], "filter_id": event_filter["id"]})
    target_id: str = target["id"]
    return target_id


def fan_out(
    gateway: str, tenant: TenantKey, receiver: Receiver, event_type: str, payload: object
) -> dict[str, Received]:
    """Publishes one event; what each target received, by target id."""
    response = httpx.post(
        f"{gateway}/v1/events", json={"event_type": event_type, "payload": payload}, headers=tenant.headers, timeout=30
    )
    assert response.status_code == 202, response.text
    received = {}
    for delivery in response.json()["deliveries"]:
        assert wait_for_status(gateway, tenant, delivery["job_id"])["status"] == "delivered"
        [received[delivery["target_id"]]] = receiver.for_job(delivery["job_id"])
    return received


def verifies(secret: str, received: Received) -> bool:
    """Whether both Herald's verifiers and the official library accept the delivery with
    `secret`; they must agree."""
    verdicts = []
    for check in (verify, verify_standard):
        try:
            check(secret, received.body, received.headers)
            verdicts.append(True)
        except WebhookVerificationError:
            verdicts.append(False)
    standard = {k: received.headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    try:
        Webhook(secret).verify(received.body, standard)
        verdicts.append(True)
    except StandardError:
        verdicts.append(False)
    assert len(set(verdicts)) == 1, f"the verifiers disagree: {verdicts}"
    return verdicts[0]


def test_each_target_verifies_only_with_its_own_secret_and_rotates_with_overlap(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    brought = remember_secret("whsec_" + base64.b64encode(os.urandom(32)).decode())
    a = subscribed_target(gateway, tenant, f"{receiver.url}/a", "orders.paid")
    b = subscribed_target(gateway, tenant, f"{receiver.url}/b", "orders.paid", signing_key=brought)
    secret_a, secret_b = target_secret(gateway, tenant, a), target_secret(gateway, tenant, b)
    assert secret_a.startswith("whsec_") and secret_b == brought and secret_a != secret_b

    got = fan_out(gateway, tenant, receiver, "orders.paid", {"order": 1})
    assert verifies(secret_a, got[a]) and verifies(secret_b, got[b])
    assert not verifies(secret_b, got[a]), "A's delivery replayed as-is to B fails B's check"
    assert not verifies(secret_a, got[b])

    # Rotation with the default overlap: the previous key signs beside the new one.
    rotated = rotate(gateway, tenant, a)
    assert rotated.status_code == 200, rotated.text
    second = remember_secret(rotated.json()["key"])
    assert second != secret_a and target_secret(gateway, tenant, a) == second
    during = fan_out(gateway, tenant, receiver, "orders.paid", {"order": 2})
    assert verifies(second, during[a]) and verifies(secret_a, during[a])
    assert len(during[a].headers["webhook-signature"].split(" ")) == 2
    assert verifies(secret_b, during[b]) and not verifies(secret_a, during[b]) and not verifies(second, during[b])

    # A rotation with no overlap (after a leak) stops every previous key at once.
    third = remember_secret("whsec_" + base64.b64encode(os.urandom(24)).decode())
    assert rotate(gateway, tenant, a, {"key": third, "overlap_s": 0}).json() == {"key": third}
    after = fan_out(gateway, tenant, receiver, "orders.paid", {"order": 3})
    assert verifies(third, after[a])
    assert not verifies(second, after[a]) and not verifies(secret_a, after[a])


def test_a_target_from_before_signs_with_the_tenant_secret_until_its_first_rotation(
    gateway: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    old = subscribed_target(gateway, tenant, f"{receiver.url}/old", "invoices.paid")
    # As migration 0017 leaves a target: marked, and without a key of its own yet.
    query(infra["database_url"], "DELETE FROM target_signing_keys WHERE target_id = $1::uuid", old)
    query(infra["database_url"], "UPDATE webhook_targets SET tenant_secret_signs = true WHERE id = $1::uuid", old)
    made = httpx.post(f"{gateway}/v1/webhook-secret", headers=tenant.headers, timeout=30)
    tenant_secret = remember_secret(made.json()["secret"])

    got = fan_out(gateway, tenant, receiver, "invoices.paid", {"invoice": 1})
    own = target_secret(gateway, tenant, old)
    assert verifies(tenant_secret, got[old]) and verifies(own, got[old])

    new = remember_secret(rotate(gateway, tenant, old, {"overlap_s": 3600}).json()["key"])
    after = fan_out(gateway, tenant, receiver, "invoices.paid", {"invoice": 2})
    assert verifies(new, after[old]) and verifies(own, after[old])
    assert not verifies(tenant_secret, after[old]), "the first rotation ends the tenant's secret here"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"key": "whsec_" + base64.b64encode(b"x" * 16).decode()}, "key"),
        ({"key": "sk_live_" + "y" * 40}, "key"),
        ({"overlap_s": 7 * 24 * 3600 + 1}, "overlap_s"),
        ({"overlap_s": -1}, "overlap_s"),
    ],
)
def test_bad_keys_and_overlaps_are_refused(gateway: str, tenant: TenantKey, body: dict[str, Any], field: str) -> None:
    target = created(gateway, tenant, "/v1/webhooks/targets", {"url": "https://example.com/hooks"})
    refused = rotate(gateway, tenant, target["id"], body)
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert [e["field"] for e in refused.json()["errors"]] == [field]
    if "key" in body:
        assert body["key"] not in refused.text
    creating = httpx.post(
        f"{gateway}/v1/webhooks/targets",
        json={"url": "https://example.com/hooks", "signing_key": "whsec_not-base64!"},
        headers=tenant.headers,
        timeout=30,
    )
    assert creating.status_code == 422 and [e["field"] for e in creating.json()["errors"]] == ["signing_key"]
    other = httpx.get(
        f"{gateway}/v1/webhooks/targets/00000000-0000-7000-8000-000000000000/secret", headers=tenant.headers
    )
    assert other.status_code == 404


def test_the_grpc_twins(stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    target = created(gateway, tenant, "/v1/webhooks/targets", {"url": f"{receiver.url}/grpc"})
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        mine = (("authorization", f"Bearer {tenant.api_key}"),)
        read = api.GetWebhookTargetSecret(
            gateway_pb2.GetWebhookTargetSecretRequest(target_id=target["id"]), metadata=mine
        )
        assert remember_secret(read.key) == target_secret(gateway, tenant, target["id"])
        rotated = api.RotateWebhookTargetSecret(
            gateway_pb2.RotateWebhookTargetSecretRequest(target_id=target["id"], overlap_s=60), metadata=mine
        )
        assert remember_secret(rotated.key) == target_secret(gateway, tenant, target["id"])
        with pytest.raises(grpc.RpcError) as refused:
            api.RotateWebhookTargetSecret(
                gateway_pb2.RotateWebhookTargetSecretRequest(target_id=target["id"], overlap_s=8 * 86400),
                metadata=mine,
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        tested = api.TestWebhookTarget(gateway_pb2.TestWebhookTargetRequest(target_id=target["id"]), metadata=mine).ping
        assert tested.status_code == 200 and tested.response_excerpt == "ok" and not tested.error
        [ping] = receiver.for_job(tested.ping_id)
        assert verifies(target_secret(gateway, tenant, target["id"]), ping)


def test_an_ed25519_key_pair_signs_v1a_that_the_public_key_verifies(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    a = subscribed_target(gateway, tenant, f"{receiver.url}/ed-a", "keys.made")
    b = subscribed_target(gateway, tenant, f"{receiver.url}/ed-b", "keys.made")
    public_a = rotate(gateway, tenant, a, {"algorithm": "ed25519"}).json()["key"]
    public_b = rotate(gateway, tenant, b, {"algorithm": "ed25519"}).json()["key"]
    assert public_a.startswith("whpk_") and public_a != public_b
    read = httpx.get(f"{gateway}/v1/webhooks/targets/{a}/secret", headers=tenant.headers, timeout=30).json()
    assert read["public_key"] == public_a and remember_secret(read["key"]).startswith("whsec_")

    got = fan_out(gateway, tenant, receiver, "keys.made", {"n": 1})
    # Independently of Herald's client: the v1a signature is Ed25519 over "{id}.{timestamp}.{body}".
    delivered = got[a]
    signed = f"{delivered.headers['webhook-id']}.{delivered.headers['webhook-timestamp']}.".encode() + delivered.body
    [v1a] = [s.split(",", 1)[1] for s in delivered.headers["webhook-signature"].split(" ") if s.startswith("v1a,")]
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_a.removeprefix("whpk_")))
    public.verify(base64.b64decode(v1a), signed)
    with pytest.raises(InvalidSignature):
        public.verify(base64.b64decode(v1a), signed.replace(b'"n":1', b'"n":2'))
    other = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_b.removeprefix("whpk_")))
    with pytest.raises(InvalidSignature):
        other.verify(base64.b64decode(v1a), signed)

    # Herald's verifier takes the public key.
    assert verify_standard(public_a, delivered.body, delivered.headers).webhook_id == delivered.headers["webhook-id"]
    with pytest.raises(WebhookVerificationError):
        verify_standard(public_b, delivered.body, delivered.headers)
    with pytest.raises(WebhookVerificationError):
        verify_standard(public_a, got[b].body, got[b].headers)


def test_a_target_test_sends_a_signed_ping_now_and_answers_what_the_receiver_said(
    gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver
) -> None:
    credential = remember_secret(f"Bearer {os.urandom(16).hex()}")
    target = created(
        gateway,
        tenant,
        "/v1/webhooks/targets",
        {"url": f"{receiver.url}/ping", "headers": {"Authorization": credential}},
    )
    secret = target_secret(gateway, tenant, target["id"])
    receiver.behaviour.body = b"pong"
    tested = httpx.post(f"{gateway}/v1/webhooks/targets/{target['id']}/test", headers=tenant.headers, timeout=60)
    assert tested.status_code == 200, tested.text
    answer = tested.json()
    assert answer["status_code"] == 200 and answer["response_excerpt"] == "pong" and answer["error"] is None
    assert answer["duration_ms"] >= 0 and answer["sent_at"]
    [ping] = receiver.for_job(answer["ping_id"])
    assert ping.headers["authorization"] == credential and ping.headers["x-herald-event-type"] == "herald.ping"
    assert verifies(secret, ping)

    # A refusal is the answer, not a failure: nothing is retried.
    receiver.behaviour.status = 503
    refused = httpx.post(f"{gateway}/v1/webhooks/targets/{target['id']}/test", headers=tenant.headers, timeout=60)
    assert refused.status_code == 200 and refused.json()["status_code"] == 503
    assert len(receiver.for_job(refused.json()["ping_id"])) == 1

    other = create_tenant(gateway, operator_token, "target-test-other")
    theirs = httpx.post(f"{gateway}/v1/webhooks/targets/{target['id']}/test", headers=other.headers, timeout=60)
    assert theirs.status_code == 404


def test_at_most_ten_previous_keys_sign_beside_the_current_one(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    target = subscribed_target(gateway, tenant, f"{receiver.url}/many", "keys.rotated")
    made = [target_secret(gateway, tenant, target)]
    for _ in range(12):
        rotated = rotate(gateway, tenant, target, {"overlap_s": 3600})
        assert rotated.status_code == 200, rotated.text
        made.append(remember_secret(rotated.json()["key"]))
    got = fan_out(gateway, tenant, receiver, "keys.rotated", {"n": 1})[target]
    assert len(got.headers["webhook-signature"].split(" ")) == 11
    assert len(got.headers["x-webhook-signature"].split(",")) == 11
    assert [verifies(secret, got) for secret in made] == [False, False] + [True] * 11
