"""Batch submission (docs/architecture.md): POST /v1/webhooks/batch and /v1/emails/batch, and the streaming
gRPC submits. Each item is admitted as if it came alone and gets its own result; the valid
ones, and only they, are delivered."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.standins.herald_email import add_provider, wait_until
from tests.standins.resend import SEND_PATH as RESEND_SEND
from tests.standins.resend import ResendStandIn
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.receiver import Receiver

SETTLED = {"delivered", "failed", "suppressed"}


def set_limits(gateway: str, operator_token: str, tenant: TenantKey, **limits: object) -> None:
    response = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json=limits,
        headers={"authorization": f"Bearer {operator_token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text


@pytest.fixture
def unlimited(gateway: str, operator_token: str, request: pytest.FixtureRequest) -> TenantKey:
    tenant = create_tenant(gateway, operator_token, f"batch-{request.node.name}"[:200])
    set_limits(gateway, operator_token, tenant, rate_per_min="unlimited", webhooks_per_month="unlimited")
    return tenant


def post_batch(gateway: str, tenant: TenantKey, items: Any, route: str = "webhooks", **headers: str) -> httpx.Response:
    return httpx.post(
        f"{gateway}/v1/{route}/batch", json={"items": items}, headers={**tenant.headers, **headers}, timeout=60
    )


def delivered_ids(receiver: Receiver) -> set[str]:
    return {r.headers["webhook-id"] for r in list(receiver.requests)}


def wait_delivered(receiver: Receiver, expected: set[str], timeout: float = 60.0) -> set[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not expected <= delivered_ids(receiver):
        time.sleep(0.1)
    return delivered_ids(receiver)


def test_a_mixed_batch_answers_per_item_and_delivers_exactly_the_valid_items(
    gateway: str, unlimited: TenantKey, receiver: Receiver
) -> None:
    items = [
        {"url": receiver.url, "payload": {"n": 0}},
        {"url": "ftp://example.com/x", "payload": {"n": 1}},  # not http(s)
        {"url": receiver.url, "payload_base64": base64.b64encode(b"\x00raw").decode(), "content_type": "x/y"},
        {"url": receiver.url, "payload": 1, "payload_base64": "AA=="},  # both bodies
        {"url": receiver.url, "payload": {"n": 4}, "headers": {"Host": "evil"}},  # a header Herald sets
        "not an object",
        {"url": receiver.url, "payload": {"n": 6}, "surprise": True},  # unknown field
        {"url": receiver.url, "payload": {"n": 7}, "priority": "critical", "headers": {"X-Trace": "t7"}},
        {"payload": {"n": 8}},  # no url
    ]
    response = post_batch(gateway, unlimited, items)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["index"] for r in results] == list(range(len(items)))
    assert [r["status"] for r in results] == [202, 422, 202, 422, 422, 422, 422, 202, 422]
    for result in results:
        if result["status"] == 422:
            problem = result["problem"]
            assert problem["type"].endswith("/invalid-request") and problem["status"] == 422
            assert problem["errors"] and problem["detail"]
        else:
            assert result["job_status"] in ("queued", "pending") and "problem" not in result
    assert results[1]["problem"]["errors"][0]["field"] == "url"
    assert results[6]["problem"]["errors"][0]["field"] == "surprise"
    accepted = {results[i]["id"] for i in (0, 2, 7)}
    assert wait_delivered(receiver, accepted) == accepted
    for job_id in accepted:
        assert wait_for_status(gateway, unlimited, job_id)["status"] == "delivered"
    [raw] = [r for r in receiver.requests if r.headers["webhook-id"] == results[2]["id"]]
    assert raw.body == b"\x00raw" and raw.headers["content-type"] == "x/y"
    [traced] = [r for r in receiver.requests if r.headers["webhook-id"] == results[7]["id"]]
    assert traced.headers["x-trace"] == "t7"
    time.sleep(0.5)
    assert len(receiver.requests) == 3, "only the valid items are delivered, once each"


def test_a_thousand_items_are_accepted_and_another_tenant_cannot_see_them(
    gateway: str, operator_token: str, unlimited: TenantKey, receiver: Receiver
) -> None:
    items = [{"url": receiver.url, "payload": {"n": i}} for i in range(1000)]
    response = post_batch(gateway, unlimited, items)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == [202] * 1000
    ids = [r["id"] for r in results]
    assert len(set(ids)) == 1000
    assert wait_delivered(receiver, set(ids), timeout=120) == set(ids)
    bodies = {r.headers["webhook-id"]: r.body for r in receiver.requests}
    assert all(bodies[job_id] == f'{{"n":{i}}}'.encode() for i, job_id in enumerate(ids)), "each item its own job"
    other = create_tenant(gateway, operator_token, "batch-outsider")
    for job_id in (ids[0], ids[499], ids[500], ids[999]):
        assert httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=other.headers, timeout=10).status_code == 404
        assert httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=unlimited.headers, timeout=10).status_code == 200


def test_the_envelope_is_refused_whole_when_it_cannot_be_read(
    gateway: str, unlimited: TenantKey, receiver: Receiver
) -> None:
    item = {"url": receiver.url, "payload": 1}
    too_many = post_batch(gateway, unlimited, [item] * 1001)
    assert too_many.status_code == 422
    assert too_many.headers["content-type"] == "application/problem+json"
    assert "1001" in too_many.json()["detail"]
    for body in (b"{not json", b"[]", b'{"items": []}', b'{"items": {}}', b'{"items": [], "extra": 1}'):
        refused = httpx.post(
            f"{gateway}/v1/webhooks/batch",
            content=body,
            headers={**unlimited.headers, "content-type": "application/json"},
            timeout=10,
        )
        assert refused.status_code == 422, (body, refused.text)
        assert refused.json()["type"].endswith("/invalid-request")
    keyed = post_batch(gateway, unlimited, [item], **{"Idempotency-Key": "whole-batch"})
    assert keyed.status_code == 422 and "idempotency_key" in keyed.json()["detail"]
    assert httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": [item]}, timeout=10).status_code == 401
    assert not receiver.requests


def test_quota_running_out_mid_batch_refuses_the_later_items(
    gateway: str, operator_token: str, receiver: Receiver
) -> None:
    tenant = create_tenant(gateway, operator_token, "batch-quota", plan="indie")
    set_limits(gateway, operator_token, tenant, rate_per_min="unlimited", webhooks_per_month=5)
    response = post_batch(gateway, tenant, [{"url": receiver.url, "payload": {"n": i}} for i in range(8)])
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == [202] * 5 + [429] * 3
    assert all(r["problem"]["type"].endswith("/quota-exceeded") for r in results[5:])
    accepted = {r["id"] for r in results[:5]}
    assert wait_delivered(receiver, accepted) == accepted
    usage = httpx.get(f"{gateway}/v1/usage", headers=tenant.headers, timeout=10).json()
    assert usage["webhooks"] == 5


def test_each_item_spends_one_request_of_the_rate_limit(gateway: str, operator_token: str, receiver: Receiver) -> None:
    tenant = create_tenant(gateway, operator_token, "batch-rate", plan="startup")
    set_limits(gateway, operator_token, tenant, rate_per_min=10)
    item = {"url": receiver.url, "payload": 1}
    whole = post_batch(gateway, tenant, [item] * 11)
    # Larger than the limit could ever admit: refused as invalid, not "retry later".
    assert whole.status_code == 422 and "at most 10 items" in whole.json()["detail"]
    first = post_batch(gateway, tenant, [item] * 6)
    assert first.status_code == 200 and first.headers["ratelimit-remaining"] == "4"
    assert [r["status"] for r in first.json()["results"]] == [202] * 6
    second = post_batch(gateway, tenant, [item] * 5)
    assert second.status_code == 429, second.text
    assert second.json()["type"].endswith("/rate-limited") and int(second.headers["retry-after"]) >= 1
    assert post_batch(gateway, tenant, [item] * 4).status_code == 200
    single = httpx.post(f"{gateway}/v1/webhooks", json=item, headers=tenant.headers, timeout=10)
    assert single.status_code == 429, "the batches spent the single route's limit too"


def test_an_idempotency_key_repeated_within_a_batch(gateway: str, unlimited: TenantKey, receiver: Receiver) -> None:
    item = {"url": receiver.url, "payload": {"order": 1}, "idempotency_key": "order-1"}
    other = {"url": receiver.url, "payload": {"order": 2}, "idempotency_key": "order-1"}
    results = post_batch(gateway, unlimited, [item, dict(item), other]).json()["results"]
    assert results[0]["status"] == 202 and "replayed" not in results[0]
    assert results[1] == {**results[0], "index": 1, "replayed": True}
    assert results[2]["status"] == 422 and results[2]["problem"]["type"].endswith("/idempotency-mismatch")
    assert wait_delivered(receiver, {results[0]["id"]}) == {results[0]["id"]}


def test_an_email_batch_answers_per_item_and_sends_the_valid_ones(
    gateway: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    add_provider(gateway, tenant, resend, priority=1)
    base = {"from": "Acme <hello@acme.example>", "subject": "Receipt", "text": "Thanks"}
    items = [
        {**base, "to": ["ada@example.com"], "idempotency_key": "receipt-ada"},
        {**base, "to": ["not an address"]},
        {**base, "to": ["bob@example.com"], "subject": "a\u0000b"},  # PostgreSQL cannot store NUL
        {**base, "to": []},
        {**base, "to": ["cy@example.com"], "html": "<p>Thanks</p>"},
    ]
    response = post_batch(gateway, tenant, items, route="emails")
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == [202, 422, 422, 422, 202]
    assert [e["field"] for e in results[2]["problem"]["errors"]] == ["subject"], "NUL refused, for the subject alone"
    for i in (0, 4):
        assert wait_for_status(gateway, tenant, results[i]["id"], SETTLED)["status"] == "delivered"
    sent = sorted(c.json()["to"][0] for c in resend.received("POST", RESEND_SEND))
    assert sent == ["ada@example.com", "cy@example.com"]


# --- streaming gRPC -------------------------------------------------------------------------


@pytest.fixture
def api(stack: Stack) -> Iterator[gateway_pb2_grpc.NotificationServiceStub]:
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        yield gateway_pb2_grpc.NotificationServiceStub(channel)


def metadata(tenant: TenantKey) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {tenant.api_key}"),)


def webhook(url: str, n: int, **fields: Any) -> gateway_pb2.SubmitWebhooksRequest:
    request = gateway_pb2.SendWebhookRequest(url=url, body=f'{{"n":{n}}}'.encode(), **fields)
    return gateway_pb2.SubmitWebhooksRequest(webhook=request)


def error_status(answer: gateway_pb2.SubmitWebhooksResponse) -> status_pb2.Status:
    """The item's error read as the google.rpc.Status it is wire-compatible with."""
    return status_pb2.Status.FromString(answer.error.SerializeToString())


def test_a_thousand_items_over_one_stream(
    api: gateway_pb2_grpc.NotificationServiceStub, gateway: str, unlimited: TenantKey, receiver: Receiver
) -> None:
    answers = list(
        api.SubmitWebhooks((webhook(receiver.url, i) for i in range(1000)), metadata=metadata(unlimited), timeout=120)
    )
    assert [a.index for a in answers] == list(range(1000))
    assert all(not a.HasField("error") and a.id for a in answers)
    assert all(a.status in (common_pb2.JOB_STATUS_QUEUED, common_pb2.JOB_STATUS_PENDING) for a in answers)
    ids = [a.id for a in answers]
    assert len(set(ids)) == 1000
    assert wait_delivered(receiver, set(ids), timeout=120) == set(ids)
    bodies = {r.headers["webhook-id"]: r.body for r in receiver.requests}
    assert all(bodies[job_id] == f'{{"n":{i}}}'.encode() for i, job_id in enumerate(ids))


def test_a_stream_refuses_bad_items_alone_and_keeps_going(
    api: gateway_pb2_grpc.NotificationServiceStub,
    gateway: str,
    operator_token: str,
    unlimited: TenantKey,
    receiver: Receiver,
) -> None:
    requests = [
        webhook(receiver.url, 0, idempotency_key="stream-key"),
        webhook("not a url", 1),
        webhook(receiver.url, 2, priority=99),  # no such priority
        webhook(receiver.url, 3, headers={"Content-Length": "1"}),
        webhook(receiver.url, 0, idempotency_key="stream-key"),  # the same request again
        webhook(receiver.url, 5, idempotency_key="stream-key"),  # the key, another request
        webhook(receiver.url, 6),
    ]
    answers = list(api.SubmitWebhooks(iter(requests), metadata=metadata(unlimited), timeout=60))
    assert [a.index for a in answers] == list(range(7))
    codes = [error_status(a).code if a.HasField("error") else code_pb2.OK for a in answers]
    assert codes == [
        code_pb2.OK,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.OK,
        code_pb2.FAILED_PRECONDITION,
        code_pb2.OK,
    ]
    bad = error_details_pb2.BadRequest()
    assert error_status(answers[1]).details[0].Unpack(bad)
    assert [v.field for v in bad.field_violations] == ["url"]
    assert answers[4].replayed and answers[4].id == answers[0].id
    accepted = {answers[0].id, answers[6].id}
    assert wait_delivered(receiver, accepted) == accepted
    other = create_tenant(gateway, operator_token, "stream-outsider")
    with pytest.raises(grpc.RpcError) as hidden:
        api.GetJob(gateway_pb2.NotificationServiceGetJobRequest(id=answers[0].id), metadata=metadata(other))
    assert hidden.value.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]


def test_a_stream_spends_the_rate_limit_per_item_and_needs_a_key(
    api: gateway_pb2_grpc.NotificationServiceStub, gateway: str, operator_token: str, receiver: Receiver
) -> None:
    tenant = create_tenant(gateway, operator_token, "stream-rate", plan="startup")
    set_limits(gateway, operator_token, tenant, rate_per_min=10)
    answers = list(
        api.SubmitWebhooks((webhook(receiver.url, i) for i in range(15)), metadata=metadata(tenant), timeout=60)
    )
    codes = [error_status(a).code if a.HasField("error") else code_pb2.OK for a in answers]
    assert codes == [code_pb2.OK] * 10 + [code_pb2.RESOURCE_EXHAUSTED] * 5
    with pytest.raises(grpc.RpcError) as refused:
        list(api.SubmitWebhooks(iter([webhook(receiver.url, 0)]), metadata=(("authorization", "Bearer nope"),)))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]


def test_emails_over_one_stream(
    api: gateway_pb2_grpc.NotificationServiceStub, gateway: str, tenant: TenantKey, resend: ResendStandIn
) -> None:
    add_provider(gateway, tenant, resend, priority=1)

    def email(to: str) -> gateway_pb2.SubmitEmailsRequest:
        request = common_pb2.EmailRequest(to=[common_pb2.EmailAddress(email=to)], subject="Hi", text="Hello")
        request.__getattribute__("from").CopyFrom(common_pb2.EmailAddress(email="hello@acme.example"))
        return gateway_pb2.SubmitEmailsRequest(email=gateway_pb2.SendEmailRequest(email=request))

    answers = list(
        api.SubmitEmails(
            iter([email("a@example.com"), email("nope"), email("c@example.com")]), metadata=metadata(tenant)
        )
    )
    assert [a.HasField("error") for a in answers] == [False, True, False]
    for answer in (answers[0], answers[2]):
        assert wait_for_status(gateway, tenant, answer.id, SETTLED)["status"] == "delivered"
    assert wait_until(lambda: len(resend.received("POST", RESEND_SEND)) == 2)


def test_batch_items_get_the_submit_time_target_check(
    api: gateway_pb2_grpc.NotificationServiceStub, gateway: str, unlimited: TenantKey, receiver: Receiver
) -> None:
    """An item to a private or cloud-metadata address is refused with its 422, as the single
    route refuses it, on the HTTP batch and on the stream; the allow-listed receiver is accepted."""
    refused = ["http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data"]
    answer = post_batch(
        gateway,
        unlimited,
        [{"url": u, "payload": {"n": i}} for i, u in enumerate(refused)] + [{"url": receiver.url, "payload": {"n": 2}}],
    )
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert [r["status"] for r in results] == [422, 422, 202]
    assert all(r["problem"]["errors"][0]["field"] == "url" for r in results[:2])
    streamed = list(
        api.SubmitWebhooks(
            iter([webhook(u, i) for i, u in enumerate(refused)] + [webhook(receiver.url, 2)]),
            metadata=metadata(unlimited),
            timeout=60,
        )
    )
    codes = [error_status(a).code if a.HasField("error") else code_pb2.OK for a in streamed]
    assert codes == [code_pb2.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT, code_pb2.OK]
    assert wait_delivered(receiver, {results[2]["id"], streamed[2].id}) >= {results[2]["id"], streamed[2].id}


def test_streamed_and_single_grpc_webhooks_keep_their_ordering_key(
    api: gateway_pb2_grpc.NotificationServiceStub, unlimited: TenantKey, receiver: Receiver
) -> None:
    """gRPC submits carry `ordering_key` as POST /v1/webhooks does: keyed jobs arrive in order."""
    streamed = list(
        api.SubmitWebhooks(
            iter([webhook(receiver.url, i, ordering_key="customer-9") for i in range(20)]),
            metadata=metadata(unlimited),
            timeout=60,
        )
    )
    single = api.SendWebhook(
        gateway_pb2.SendWebhookRequest(url=receiver.url, body=b'{"n":20}', ordering_key="customer-9"),
        metadata=metadata(unlimited),
        timeout=30,
    )
    ordered = [a.id for a in streamed] + [single.id]
    stored = api.GetJob(gateway_pb2.NotificationServiceGetJobRequest(id=single.id), metadata=metadata(unlimited))
    assert stored.job.ordering_key == "customer-9"
    assert wait_delivered(receiver, set(ordered)) >= set(ordered)
    arrival = [r.headers["webhook-id"] for r in list(receiver.requests) if r.headers["webhook-id"] in set(ordered)]
    assert arrival == ordered


def test_a_single_grpc_webhook_with_an_unknown_priority_is_refused_alone(
    api: gateway_pb2_grpc.NotificationServiceStub, unlimited: TenantKey, receiver: Receiver
) -> None:
    """The same per-item rules apply to single gRPC submits: a priority the ledger does not know
    is INVALID_ARGUMENT at the gateway, never a failure of the transaction other requests share."""
    with pytest.raises(grpc.RpcError) as refused:
        api.SendWebhook(
            gateway_pb2.SendWebhookRequest(url=receiver.url, body=b"{}", priority=99),  # type: ignore[arg-type]
            metadata=metadata(unlimited),
            timeout=30,
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    fine = api.SendWebhook(
        gateway_pb2.SendWebhookRequest(url=receiver.url, body=b"{}"), metadata=metadata(unlimited), timeout=30
    )
    assert wait_delivered(receiver, {fine.id}) >= {fine.id}
