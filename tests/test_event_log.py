"""Events as a record: every event is kept with its payload and the deliveries it led to (GET
/v1/events, GET /v1/events/{id}, GET /v1/jobs?event_id=&target_id=); a delivery to a disabled
target or through a paused subscription is recorded `skipped` (not counted against the quota)
and the target's recover runs it (counted then); a finished job can be resent and an event
replayed. Through HTTP and gRPC."""

from __future__ import annotations

import base64
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant, remember_secret, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import post, publish, settle, subscribe
from tests.test_admission import set_limits
from tests.test_webhook_signing import verify_standard


def get(gateway: str, tenant: TenantKey, path: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{gateway}{path}", params=params, headers=tenant.headers, timeout=10)


def usage(gateway: str, tenant: TenantKey) -> int:
    found: int = get(gateway, tenant, "/v1/usage").json()["webhooks"]
    return found


def test_an_event_for_a_disabled_target_is_kept_skipped_and_recovered(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    disabled = subscribe(
        gateway, tenant, f"{receiver.url}/off", ["log.orders.*"], enabled=False, disabled_reason="maintenance"
    )
    paused = subscribe(gateway, tenant, f"{receiver.url}/paused", ["log.orders.*"])
    response = httpx.patch(
        f"{gateway}/v1/webhooks/subscriptions/{paused['subscription']}", json={"active": False}, headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    since = datetime.now(UTC) - timedelta(seconds=1)
    accepted = publish(gateway, tenant, "log.orders.created", payload={"order": 42}, event_id="order-42")
    assert accepted["deliveries"] == []
    publish(gateway, tenant, "log.other.v1", payload={"n": 2})

    # Listed (newest first, filtered by type pattern and time), without its payload.
    listed = get(gateway, tenant, "/v1/events", event_type="log.orders.*", since=since.isoformat()).json()
    assert [e["id"] for e in listed["data"]] == ["order-42"] and listed["data"][0]["payload"] is None
    assert [e["id"] for e in get(gateway, tenant, "/v1/events").json()["data"]][:2] == [
        get(gateway, tenant, "/v1/events", event_type="log.other.v1").json()["data"][0]["id"],
        "order-42",
    ]
    assert get(gateway, tenant, "/v1/events", until=since.isoformat()).json()["data"] == []
    # With its payload and a skipped delivery per target, each with its reason.
    event = get(gateway, tenant, "/v1/events/order-42").json()
    assert event["payload"] == {"order": 42} and event["event_type"] == "log.orders.created"
    assert base64.b64decode(event["payload_base64"]) == b'{"order":42}'
    by_target = {d["target_id"]: d for d in event["deliveries"]}
    assert set(by_target) == {disabled["target"], paused["target"]}
    assert {d["status"] for d in event["deliveries"]} == {"skipped"}
    assert (
        "disabled" in by_target[disabled["target"]]["reason"]
        and "maintenance" in by_target[disabled["target"]]["reason"]
    )
    assert "paused" in by_target[paused["target"]]["reason"]
    # A skipped delivery does not count against the quota.
    assert usage(gateway, tenant) == 0
    jobs = get(gateway, tenant, "/v1/jobs", event_id="order-42").json()["data"]
    assert {j["status"] for j in jobs} == {"skipped"} and len(jobs) == 2
    [skipped] = get(gateway, tenant, "/v1/jobs", event_id="order-42", target_id=disabled["target"]).json()["data"]
    assert skipped["id"] == by_target[disabled["target"]]["job_id"] and skipped["event_id"] == "order-42"
    assert get(gateway, tenant, "/v1/jobs", status="skipped").json()["data"]

    recover_url = f"{gateway}/v1/webhooks/targets/{disabled['target']}/recover"
    # Still disabled: 409; a window that ends before it starts: 422.
    assert httpx.post(recover_url, json={"since": since.isoformat()}, headers=tenant.headers).status_code == 409
    backwards = {"since": since.isoformat(), "until": (since - timedelta(hours=1)).isoformat()}
    refused = httpx.post(recover_url, json=backwards, headers=tenant.headers)
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "until"
    enabled = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{disabled['target']}", json={"enabled": True}, headers=tenant.headers
    )
    assert enabled.status_code == 200, enabled.text
    # A window that ended before the event finds nothing; one that holds it runs it again.
    earlier = {"since": (since - timedelta(hours=1)).isoformat(), "until": since.isoformat()}
    assert httpx.post(recover_url, json=earlier, headers=tenant.headers).json()["job_ids"] == []
    recovered = httpx.post(recover_url, json={"since": since.isoformat()}, headers=tenant.headers)
    assert recovered.status_code == 202, recovered.text
    assert recovered.json()["job_ids"] == [skipped["id"]]
    [arrived] = receiver.wait_for(skipped["id"])
    assert arrived.body == b'{"order":42}' and arrived.path.endswith("/off")
    assert wait_for_status(gateway, tenant, skipped["id"])["status"] == "delivered"
    # A recovered delivery counts; the paused subscription's stays skipped.
    assert usage(gateway, tenant) == 1
    statuses = {d["target_id"]: d["status"] for d in get(gateway, tenant, "/v1/events/order-42").json()["deliveries"]}
    assert statuses == {disabled["target"]: "delivered", paused["target"]: "skipped"}
    settle(gateway, tenant)


def test_resend_delivers_a_delivered_job_again_and_replay_fans_out_again(
    gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver
) -> None:
    ids = subscribe(gateway, tenant, receiver.url, ["again.v1"])
    # Deliveries to a target are signed with the target's own secret.
    read = httpx.get(f"{gateway}/v1/webhooks/targets/{ids['target']}/secret", headers=tenant.headers)
    assert read.status_code == 200, read.text
    secret = remember_secret(read.json()["key"])
    other = subscribe(gateway, tenant, f"{receiver.url}/other", ["again.*"])
    [first, second] = sorted(
        publish(gateway, tenant, "again.v1", payload={"n": 7}, event_id="again-1")["deliveries"],
        key=lambda d: d["target_id"] != ids["target"],
    )
    original = first["job_id"]
    assert wait_for_status(gateway, tenant, original)["status"] == "delivered"
    [delivered] = receiver.wait_for(original)

    resent = httpx.post(f"{gateway}/v1/jobs/{original}/resend", headers=tenant.headers)
    assert resent.status_code == 202, resent.text
    job = resent.json()
    assert job["id"] != original and job["origin_job_id"] == original and job["event_id"] == "again-1"
    [again] = receiver.wait_for(job["id"])
    assert again.body == delivered.body == b'{"n":7}'
    # Signed afresh: its own message id and a signature over it that verifies.
    assert again.headers["webhook-id"] != delivered.headers["webhook-id"]
    assert again.headers["webhook-signature"] != delivered.headers["webhook-signature"]
    verify_standard(secret, again)
    assert wait_for_status(gateway, tenant, job["id"])["status"] == "delivered"

    # Replay: to one target, then to every matching subscription.
    one = httpx.post(f"{gateway}/v1/events/again-1/replay", json={"target_id": other["target"]}, headers=tenant.headers)
    assert one.status_code == 202, one.text
    assert [d["target_id"] for d in one.json()["deliveries"]] == [other["target"]]
    every = httpx.post(f"{gateway}/v1/events/again-1/replay", headers=tenant.headers)
    assert every.status_code == 202, every.text
    assert sorted(d["target_id"] for d in every.json()["deliveries"]) == sorted([ids["target"], other["target"]])
    for d in one.json()["deliveries"] + every.json()["deliveries"]:
        assert receiver.wait_for(d["job_id"])[0].body == b'{"n":7}'
    # Every delivery of the event is in its record: 2 fanned out, 1 resend, 3 replayed.
    deliveries = get(gateway, tenant, "/v1/events/again-1").json()["deliveries"]
    assert len(deliveries) == 6 and second["job_id"] in {d["job_id"] for d in deliveries}
    assert usage(gateway, tenant) == 6

    # Bad input: unknown or another tenant's event, a target no subscription of it names: 404.
    stranger = create_tenant(gateway, operator_token, "event-log-stranger")
    assert httpx.post(f"{gateway}/v1/events/again-1/replay", headers=stranger.headers).status_code == 404
    assert httpx.post(f"{gateway}/v1/events/nope/replay", headers=tenant.headers).status_code == 404
    assert get(gateway, stranger, "/v1/events/again-1").status_code == 404
    unknown_target = {"target_id": "01a22d54-65c5-728e-89e1-6294d238e05a"}
    assert (
        httpx.post(f"{gateway}/v1/events/again-1/replay", json=unknown_target, headers=tenant.headers).status_code
        == 404
    )
    assert httpx.post(f"{gateway}/v1/jobs/{original}/resend", headers=stranger.headers).status_code == 404

    # A job still under way is not resent: 409 with the reason.
    receiver.behaviour.delay_path = ("/slow", 1.5)  # under the 3 s timeout: it ends delivered
    slow = subscribe(gateway, tenant, f"{receiver.url}/slow", ["slow.v1"])
    [busy] = publish(gateway, tenant, "slow.v1")["deliveries"]
    assert busy["target_id"] == slow["target"]
    conflict = httpx.post(f"{gateway}/v1/jobs/{busy['job_id']}/resend", headers=tenant.headers)
    assert conflict.status_code == 409, conflict.text
    assert "only a delivered or failed" in conflict.json()["detail"]
    settle(gateway, tenant)


def test_event_input_rules(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    refused = post(gateway, tenant, "/v1/events", {"event_type": "herald.target.disabled", "payload": {}})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "event_type"
    ids = subscribe(gateway, tenant, receiver.url, ["ordered.v1"])
    accepted = [publish(gateway, tenant, "ordered.v1", payload={"n": n}, ordering_key="cart-9") for n in range(3)]
    event = get(gateway, tenant, f"/v1/events/{accepted[0]['event_id']}").json()
    assert event["ordering_key"] == "cart-9"
    job_ids = [a["deliveries"][0]["job_id"] for a in accepted]
    for job_id in job_ids:
        assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"
    arrivals = sorted((receiver.for_job(j)[0].at, receiver.for_job(j)[0].body) for j in job_ids)
    assert [body for _, body in arrivals] == [b'{"n":0}', b'{"n":1}', b'{"n":2}']
    assert ids["target"] == accepted[0]["deliveries"][0]["target_id"]

    # A delivery skipped with the key (the subscription paused) holds no later one back.
    subscription_url = f"{gateway}/v1/webhooks/subscriptions/{ids['subscription']}"
    assert httpx.patch(subscription_url, json={"active": False}, headers=tenant.headers).status_code == 200
    deadline = time.monotonic() + 10  # the routers hear of a change within a second
    while publish(gateway, tenant, "ordered.v1", ordering_key="cart-9")["deliveries"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert httpx.patch(subscription_url, json={"active": True}, headers=tenant.headers).status_code == 200
    while not (after := publish(gateway, tenant, "ordered.v1", ordering_key="cart-9")["deliveries"]):
        assert time.monotonic() < deadline + 10
        time.sleep(0.05)
    assert wait_for_status(gateway, tenant, after[0]["job_id"])["status"] == "delivered"
    backwards = get(gateway, tenant, "/v1/events", since="2026-01-02T00:00:00Z", until="2026-01-01T00:00:00Z")
    assert backwards.status_code == 422
    assert get(gateway, tenant, "/v1/events", event_type="orders.*.v1").status_code == 422
    assert get(gateway, tenant, "/v1/jobs", target_id="not-a-uuid").status_code == 422
    assert get(gateway, tenant, "/v1/jobs", event_id="a\x00b").status_code == 422
    assert get(gateway, tenant, "/v1/events/a%00b").status_code == 404
    settle(gateway, tenant)


def test_an_event_id_with_slashes_and_reserved_characters_is_read_replayed_and_expunged(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    """Event ids are any printable ASCII: one shaped like a path (`orders/42`), or holding `?`,
    `#` or `%`, is read, replayed and expunged at its percent-encoded address."""
    subscribe(gateway, tenant, receiver.url, ["shipped.v1"])
    for event_id in ("orders/42/shipped", "a?b#c%d"):
        accepted = publish(gateway, tenant, "shipped.v1", event_id=event_id)
        address = f"/v1/events/{quote(event_id, safe='')}"
        event = get(gateway, tenant, address)
        assert event.status_code == 200, event.text
        assert event.json()["id"] == event_id and len(event.json()["deliveries"]) == 1
        assert wait_for_status(gateway, tenant, accepted["deliveries"][0]["job_id"])["status"] == "delivered"
        replayed = post(gateway, tenant, f"{address}/replay", {})
        assert replayed.status_code == 202, replayed.text
        assert wait_for_status(gateway, tenant, replayed.json()["deliveries"][0]["job_id"])["status"] == "delivered"
        expunged = httpx.delete(f"{gateway}{address}/payload", headers=tenant.headers)
        assert expunged.status_code == 204, expunged.text
        assert get(gateway, tenant, address).json()["payload_expunged_at"]
    settle(gateway, tenant)


def test_the_grpc_twins(stack: Stack, gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver) -> None:
    ids = subscribe(gateway, tenant, receiver.url, ["grpc.log.*"])
    stranger = create_tenant(gateway, operator_token, "event-log-grpc-stranger")
    mine = (("authorization", f"Bearer {tenant.api_key}"),)
    theirs = (("authorization", f"Bearer {stranger.api_key}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        published = api.PublishEvent(
            gateway_pb2.NotificationServicePublishEventRequest(
                event_type="grpc.log.v1", payload=b'{"g":1}', event_id="grpc-1", ordering_key="k"
            ),
            metadata=mine,
        )
        [delivery] = published.deliveries
        page = api.ListEvents(gateway_pb2.NotificationServiceListEventsRequest(event_type="grpc.*"), metadata=mine)
        assert [e.id for e in page.events] == ["grpc-1"] and page.events[0].ordering_key == "k"
        event = api.GetEvent(gateway_pb2.NotificationServiceGetEventRequest(id="grpc-1"), metadata=mine).event
        assert event.payload == b'{"g":1}' and [d.job_id for d in event.deliveries] == [delivery.job_id]
        jobs = api.ListJobs(
            gateway_pb2.NotificationServiceListJobsRequest(event_id="grpc-1", target_id=ids["target"]), metadata=mine
        ).jobs
        assert [j.id for j in jobs] == [delivery.job_id] and jobs[0].event_id == "grpc-1"
        assert wait_for_status(gateway, tenant, delivery.job_id)["status"] == "delivered"

        resent = api.ResendJob(gateway_pb2.NotificationServiceResendJobRequest(id=delivery.job_id), metadata=mine).job
        assert resent.origin_job_id == delivery.job_id and resent.id != delivery.job_id
        assert receiver.wait_for(resent.id)[0].body == b'{"g":1}'
        replayed = api.ReplayEvent(gateway_pb2.NotificationServiceReplayEventRequest(id="grpc-1"), metadata=mine)
        [again] = replayed.deliveries
        assert receiver.wait_for(again.job_id)[0].body == b'{"g":1}'

        for call, metadata in (
            (lambda m: api.GetEvent(gateway_pb2.NotificationServiceGetEventRequest(id="grpc-1"), metadata=m), theirs),
            (
                lambda m: api.ReplayEvent(gateway_pb2.NotificationServiceReplayEventRequest(id="grpc-1"), metadata=m),
                theirs,
            ),
            (lambda m: api.ReplayEvent(gateway_pb2.NotificationServiceReplayEventRequest(id="nope"), metadata=m), mine),
        ):
            with pytest.raises(grpc.RpcError) as missing:
                call(metadata)
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as herald_type:
            api.PublishEvent(
                gateway_pb2.NotificationServicePublishEventRequest(event_type="herald.quota.warning", payload=b"{}"),
                metadata=mine,
            )
        assert herald_type.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        request = gateway_pb2.RecoverWebhookTargetRequest(target_id=ids["target"])
        request.since.FromDatetime(datetime.now(UTC))
        request.until.FromDatetime(datetime.now(UTC) - timedelta(hours=1))
        with pytest.raises(grpc.RpcError) as backwards:
            api.RecoverWebhookTarget(request, metadata=mine)
        assert backwards.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    settle(gateway, tenant)


def test_events_in_a_batch_and_on_a_stream(stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    subscribe(gateway, tenant, receiver.url, ["batch.*"])
    items: list[dict[str, Any]] = [
        {"event_type": "batch.a", "payload": {"i": 0}, "event_id": "b-0", "ordering_key": "k"},
        {"event_type": "herald.quota.warning", "payload": {}},
        {"event_type": "batch.a", "payload": {"i": 2}, "ordering_key": "k"},
        {"event_type": "batch.a"},
        {"event_type": "batch.a", "payload": {"i": 4}, "event_id": "b-0"},
    ]
    response = post(gateway, tenant, "/v1/events/batch", {"items": items})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
    assert [r["status"] for r in results] == [202, 422, 202, 422, 202]
    assert results[0]["event_id"] == "b-0" and len(results[0]["deliveries"]) == 1
    assert results[1]["problem"]["errors"][0]["field"] == "event_type"
    assert results[4]["replayed"] is True and results[4]["deliveries"] == results[0]["deliveries"]
    for index in (0, 2):
        [delivery] = results[index]["deliveries"]
        assert wait_for_status(gateway, tenant, delivery["job_id"])["status"] == "delivered"
    assert post(gateway, tenant, "/v1/events/batch", {"items": []}).status_code == 422
    keyed = httpx.post(
        f"{gateway}/v1/events/batch",
        json={"items": items[:1]},
        headers={**tenant.headers, "Idempotency-Key": "whole-batch"},
    )
    assert keyed.status_code == 422

    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    requests = [
        gateway_pb2.PublishEventsRequest(
            event=gateway_pb2.NotificationServicePublishEventRequest(event_type=t, payload=b'{"s":1}')
        )
        for t in ("batch.stream", "herald.target.enabled", "batch.stream")
    ]
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        answers = list(api.PublishEvents(iter(requests), metadata=metadata, timeout=30))
    assert [a.index for a in answers] == [0, 1, 2]
    assert answers[0].event_id and len(answers[0].deliveries) == 1 and not answers[0].HasField("error")
    assert answers[1].error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert len(answers[2].deliveries) == 1
    for answer in (answers[0], answers[2]):
        assert receiver.wait_for(answer.deliveries[0].job_id)[0].body == b'{"s":1}'
    settle(gateway, tenant)


def test_skipped_deliveries_cost_nothing_until_recovered_within_the_quota(
    gateway: str, operator_token: str, receiver: Receiver
) -> None:
    tenant = create_tenant(gateway, operator_token, "event-log-quota")
    set_limits(gateway, operator_token, tenant, rate_per_min="unlimited", webhooks_per_month=1)
    ids = subscribe(gateway, tenant, receiver.url, ["quota.kept.v1"], enabled=False)
    since = datetime.now(UTC) - timedelta(seconds=1)
    # Three skipped deliveries with room for one: none counts, so none is refused.
    for n in range(3):
        assert publish(gateway, tenant, "quota.kept.v1", payload={"n": n})["deliveries"] == []
    assert usage(gateway, tenant) == 0
    httpx.patch(f"{gateway}/v1/webhooks/targets/{ids['target']}", json={"enabled": True}, headers=tenant.headers)
    recovered = httpx.post(
        f"{gateway}/v1/webhooks/targets/{ids['target']}/recover",
        json={"since": since.isoformat()},
        headers=tenant.headers,
    )
    assert recovered.status_code == 202, recovered.text
    # Running them again counts: the first fits the quota, the others stay skipped.
    [job_id] = recovered.json()["job_ids"]
    assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"
    assert usage(gateway, tenant) == 1
    statuses = sorted(j["status"] for j in get(gateway, tenant, "/v1/jobs", target_id=ids["target"]).json()["data"])
    assert statuses == ["delivered", "skipped", "skipped"]
