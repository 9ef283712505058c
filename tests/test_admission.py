"""Admission: rate limits shared by gateway replicas, monthly quotas that never
overshoot, suppression, idempotency keys, ordering keys, and fairness between tenants."""

from __future__ import annotations

import concurrent.futures
import json
import time
from collections.abc import Iterator

import grpc
import httpx
import pytest
from herald_gateway.idempotency import request_hash

from herald.cli.stack import Stack
from herald.grpcio.ledger import Ledger
from herald.v1 import ledger_jobs_pb2
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Receiver


@pytest.fixture(scope="module")
def gateways(stack: Stack) -> Iterator[list[str]]:
    replica = stack.add_replica("gateway")
    yield [stack.endpoints["gateway_http"], f"http://127.0.0.1:{replica.env['HERALD_HTTP_PORT']}"]


def admin(operator_token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {operator_token}"}


def set_limits(gateway: str, operator_token: str, tenant: TenantKey, **limits: object) -> None:
    response = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits", json=limits, headers=admin(operator_token)
    )
    assert response.status_code == 200, response.text


def test_two_gateways_share_one_startup_limit(gateways: list[str], operator_token: str, receiver: Receiver) -> None:
    tenant = create_tenant(gateways[0], operator_token, "busy-startup", plan="startup")
    body = {"url": receiver.url, "payload": {"n": 1}}

    def send(i: int) -> httpx.Response:
        return httpx.post(f"{gateways[i % 2]}/v1/webhooks", json=body, headers=tenant.headers, timeout=30)

    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(send, range(300)))
    codes = [r.status_code for r in responses]
    assert codes.count(202) == 200, {c: codes.count(c) for c in set(codes)}
    assert codes.count(429) == 100
    refused = next(r for r in responses if r.status_code == 429)
    assert refused.json()["type"].endswith("/rate-limited")
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.headers["ratelimit-limit"] == "200" and refused.headers["ratelimit-remaining"] == "0"
    accepted = next(r for r in responses if r.status_code == 202)
    assert accepted.headers["ratelimit-limit"] == "200"
    # Reads carry the headers too, and do not spend the limit.
    read = httpx.get(f"{gateways[1]}/v1/jobs", headers=tenant.headers)
    assert read.status_code == 200 and read.headers["ratelimit-remaining"] == "0"


def test_free_plan_is_limited_to_five_per_minute(gateway: str, operator_token: str, receiver: Receiver) -> None:
    tenant = create_tenant(gateway, operator_token, "free-tier", plan="free")
    codes = [
        httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": i}, headers=tenant.headers
        ).status_code
        for i in range(7)
    ]
    assert codes == [202] * 5 + [429] * 2


def test_concurrent_requests_never_overshoot_the_quota(
    gateway: str, operator_token: str, receiver: Receiver, infra: dict[str, str]
) -> None:
    tenant = create_tenant(gateway, operator_token, "quota-edge", plan="indie")
    set_limits(gateway, operator_token, tenant, rate_per_min="unlimited", webhooks_per_month=10)

    def send(i: int) -> httpx.Response:
        return httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": i}, headers=tenant.headers, timeout=30
        )

    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        responses = list(pool.map(send, range(50)))
    codes = [r.status_code for r in responses]
    assert codes.count(202) == 10 and codes.count(429) == 40
    refused = next(r for r in responses if r.status_code == 429)
    assert refused.json()["type"].endswith("/quota-exceeded")
    rows = query(infra["database_url"], "SELECT count(*) FROM jobs WHERE tenant_id = $1::uuid", tenant.tenant_id)
    assert rows[0][0] == 10, "a refused request creates no job"
    usage = httpx.get(f"{gateway}/v1/usage", headers=tenant.headers).json()
    assert usage["webhooks"] == 10 and usage["webhooks_limit"] == 10


def test_free_plan_shares_one_allowance_between_emails_and_webhooks(gateway: str, operator_token: str) -> None:
    tenant = create_tenant(gateway, operator_token, "free-usage", plan="free")
    usage = httpx.get(f"{gateway}/v1/usage", headers=tenant.headers).json()
    assert usage["shared_limit"] == 100 and usage["webhooks_limit"] is None and usage["emails_limit"] is None


def email(to: str) -> dict[str, object]:
    return {"from": "Shop <shop@example.com>", "to": [to], "subject": "Hi", "text": "Hello"}


def test_a_suppressed_recipient_is_refused_before_any_provider(gateway: str, tenant: TenantKey) -> None:
    added = httpx.post(f"{gateway}/v1/suppressions", json={"address": "Gone@Example.com"}, headers=tenant.headers)
    assert added.status_code == 201
    listed = httpx.get(f"{gateway}/v1/suppressions", headers=tenant.headers).json()["data"]
    assert [(e["address"], e["reason"]) for e in listed] == [("gone@example.com", "manual")]
    # A cursor no list ever gave (here with a NUL, which PostgreSQL text cannot hold) is a 4xx, never a 500.
    odd = httpx.get(f"{gateway}/v1/suppressions", params={"cursor": "a\x00b"}, headers=tenant.headers)
    assert odd.status_code == 422 and odd.headers["content-type"] == "application/problem+json"

    sent = httpx.post(f"{gateway}/v1/emails", json=email("gone@example.com"), headers=tenant.headers)
    assert sent.status_code == 202
    assert sent.json()["status"] == "suppressed"
    job = httpx.get(f"{gateway}/v1/jobs/{sent.json()['id']}", headers=tenant.headers).json()
    assert job["status"] == "suppressed" and "gone@example.com (manual)" in job["last_error"]
    assert job["attempts"] == []

    other = httpx.post(f"{gateway}/v1/emails", json=email("fine@example.com"), headers=tenant.headers)
    assert other.json()["status"] in {"queued", "pending"}
    assert httpx.delete(f"{gateway}/v1/suppressions/gone@example.com", headers=tenant.headers).status_code == 204
    again = httpx.post(f"{gateway}/v1/emails", json=email("gone@example.com"), headers=tenant.headers)
    assert again.json()["status"] in {"queued", "pending"}


def test_malformed_email_addresses_are_422(gateway: str, tenant: TenantKey) -> None:
    response = httpx.post(f"{gateway}/v1/emails", json=email("not-an-address"), headers=tenant.headers)
    assert response.status_code == 422
    assert any(e["field"] == "to[0]" for e in response.json()["errors"])


def test_idempotency_replay_conflict_and_mismatch(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    def jobs() -> int:
        return int(
            query(infra["database_url"], "SELECT count(*) FROM jobs WHERE tenant_id = $1::uuid", tenant.tenant_id)[0][0]
        )

    body = {"url": receiver.url, "payload": {"order": 1}}
    headers = {**tenant.headers, "Idempotency-Key": "order-1"}
    first = httpx.post(f"{gateway}/v1/webhooks", json=body, headers=headers)
    assert first.status_code == 202
    before = jobs()
    replay = httpx.post(f"{gateway}/v1/webhooks", json=body, headers=headers)
    assert replay.status_code == 202 and replay.json()["id"] == first.json()["id"]
    assert replay.json()["status"] in {"queued", "delivering", "delivered"}, "the first job, as it is now"
    assert replay.headers["idempotent-replayed"] == "true"
    assert jobs() == before, "a replay creates nothing"

    different = httpx.post(f"{gateway}/v1/webhooks", json={**body, "payload": {"order": 2}}, headers=headers)
    assert different.status_code == 422 and different.json()["type"].endswith("/idempotency-mismatch")

    # A key held by a request still being processed (the claim-and-store protocol of the
    # other POST routes) gets 409: claim it in the ledger as that protocol does.
    raw = json.dumps({"url": receiver.url, "payload": {"order": 3}}).encode()
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        [claim] = (
            Ledger.over(channel)
            .jobs.ClaimIdempotencyKeys(
                ledger_jobs_pb2.ClaimIdempotencyKeysRequest(
                    claims=[
                        ledger_jobs_pb2.IdempotencyClaim(
                            tenant_id=tenant.tenant_id,
                            key="order-3",
                            request_hash=request_hash("POST", "/v1/webhooks", raw),
                        )
                    ]
                ),
                timeout=10,
            )
            .results
        )
    assert claim.state == ledger_jobs_pb2.IDEMPOTENCY_STATE_NEW
    in_flight = httpx.post(
        f"{gateway}/v1/webhooks",
        content=raw,
        headers={**tenant.headers, "Idempotency-Key": "order-3", "content-type": "application/json"},
    )
    assert in_flight.status_code == 409
    assert in_flight.json()["type"].endswith("/idempotency-in-flight")
    assert jobs() == before


def test_one_idempotency_key_never_makes_two_jobs(
    gateways: list[str], operator_token: str, receiver: Receiver, infra: dict[str, str]
) -> None:
    """The same keyed request sent many times at once, over two gateways (a client retrying
    after a lost answer, a proxy resending): one job, and every answer names it. A key whose
    request was refused leaves nothing behind, so it can be used again."""
    tenant = create_tenant(gateways[0], operator_token, "retrying-client", plan="startup")
    set_limits(gateways[0], operator_token, tenant, rate_per_min="unlimited")
    body = {"url": receiver.url, "payload": {"invoice": 42}}
    headers = {**tenant.headers, "Idempotency-Key": "invoice-42"}

    def send(i: int) -> httpx.Response:
        return httpx.post(f"{gateways[i % 2]}/v1/webhooks", json=body, headers=headers, timeout=30)

    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(send, range(40)))
    assert {r.status_code for r in responses} == {202}
    assert len({r.json()["id"] for r in responses}) == 1
    assert sum(r.headers.get("idempotent-replayed") == "true" for r in responses) == 39
    stored = query(infra["database_url"], "SELECT count(*) FROM jobs WHERE tenant_id = $1::uuid", tenant.tenant_id)
    assert stored[0][0] == 1
    job_id = responses[0].json()["id"]
    assert wait_for_status(gateways[0], tenant, job_id)["status"] == "delivered"
    assert [r.headers["webhook-id"] for r in receiver.requests].count(job_id) == 1

    set_limits(gateways[0], operator_token, tenant, webhooks_per_month=1)
    refused = httpx.post(
        f"{gateways[1]}/v1/webhooks", json=body, headers={**tenant.headers, "Idempotency-Key": "invoice-43"}
    )
    assert refused.status_code == 429 and refused.json()["type"].endswith("/quota-exceeded")
    set_limits(gateways[0], operator_token, tenant, webhooks_per_month="unlimited")
    again = httpx.post(
        f"{gateways[1]}/v1/webhooks", json=body, headers={**tenant.headers, "Idempotency-Key": "invoice-43"}
    )
    assert again.status_code == 202 and "idempotent-replayed" not in again.headers


def test_other_posts_replay_their_stored_answer(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    """A POST that creates something other than a job (here a webhook target) stores its
    answer under the key: a repeat gets the same answer back, another body 422."""
    headers = {**tenant.headers, "Idempotency-Key": "target-1"}
    body = {"url": receiver.url, "description": "orders"}
    first = httpx.post(f"{gateway}/v1/webhooks/targets", json=body, headers=headers)
    assert first.status_code == 201, first.text
    again = httpx.post(f"{gateway}/v1/webhooks/targets", json=body, headers=headers)
    assert again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    listed = httpx.get(f"{gateway}/v1/webhooks/targets", headers=tenant.headers).json()
    assert len(listed["data"]) == 1
    other = httpx.post(f"{gateway}/v1/webhooks/targets", json={**body, "description": "x"}, headers=headers)
    assert other.status_code == 422 and other.json()["type"].endswith("/idempotency-mismatch")


def test_jobs_sharing_an_ordering_key_arrive_in_order(
    gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    set_limits(gateway, operator_token, tenant, rate_per_min="unlimited", webhooks_per_month="unlimited")
    ordered: list[str] = []
    free: list[str] = []
    for i in range(200):
        keyed = {"url": receiver.url, "payload": {"seq": i}, "ordering_key": "customer-7"}
        ordered.append(httpx.post(f"{gateway}/v1/webhooks", json=keyed, headers=tenant.headers).json()["id"])
        if i % 10 == 0:
            loose = {"url": receiver.url, "payload": {"free": i}}
            free.append(httpx.post(f"{gateway}/v1/webhooks", json=loose, headers=tenant.headers).json()["id"])
    for job_id in ordered[-1:] + free:
        assert wait_for_status(gateway, tenant, job_id, timeout=120)["status"] == "delivered"
    stored = query(infra["database_url"], "SELECT count(*) FROM jobs WHERE ordering_key = 'customer-7'")[0][0]
    assert stored == len(ordered), "the ordering key reached the ledger"
    arrival = [r.headers["webhook-id"] for r in receiver.requests if r.headers["webhook-id"] in set(ordered)]
    assert arrival == ordered, "one at a time, in submission order"
    first_free = min(i for i, r in enumerate(receiver.requests) if r.headers["webhook-id"] in set(free))
    last_ordered = max(i for i, r in enumerate(receiver.requests) if r.headers["webhook-id"] in set(ordered))
    assert first_free < last_ordered, "jobs without the key did not wait for the keyed ones"


def test_a_backlog_of_one_tenant_does_not_hold_up_another(
    gateway: str, operator_token: str, receiver: Receiver
) -> None:
    busy = create_tenant(gateway, operator_token, "backlog", plan="startup")
    quiet = create_tenant(gateway, operator_token, "quiet", plan="startup")
    for tenant in (busy, quiet):
        set_limits(gateway, operator_token, tenant, rate_per_min="unlimited", webhooks_per_month="unlimited")
    from herald.bus.subjects import lane_of

    if lane_of(busy.tenant_id, 16) == lane_of(quiet.tenant_id, 16):
        pytest.skip("the two tenants share a fairness lane (1 in 16): nothing to show")
    slow_url = receiver.url + "?slow"
    receiver.behaviour.delay_path = ("?slow", 0.2)

    # The backlog arrives in one batch, so it is all queued before the quiet tenant sends: sent one
    # request at a time on a loaded machine, the first of it drained before the last was accepted.
    items = [{"url": slow_url, "payload": i} for i in range(300)]
    batch = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=busy.headers, timeout=60)
    assert batch.status_code == 200, batch.text
    backlog = [str(result["id"]) for result in batch.json()["results"]]
    started = time.monotonic()
    quick = [
        httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": i}, headers=quiet.headers).json()[
            "id"
        ]
        for i in range(5)
    ]
    for job_id in quick:
        assert wait_for_status(gateway, quiet, job_id, timeout=60)["status"] == "delivered"
    delivered_backlog = sum(1 for r in receiver.requests if r.headers["webhook-id"] in set(backlog))
    assert delivered_backlog < len(backlog), "the quiet tenant was served while the backlog was still draining"
    from tests.conftest import report

    report(
        f"fairness: 5 jobs of a quiet tenant delivered in {time.monotonic() - started:.1f} s "
        f"while a 300-job backlog of another tenant had {len(backlog) - delivered_backlog} still queued"
    )
    for job_id in backlog:
        wait_for_status(gateway, busy, job_id, timeout=120)
