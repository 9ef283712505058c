"""Who may see and create what: tenant isolation, authentication, validation.
None of the refused requests creates a job."""

from __future__ import annotations

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant, openapi_document
from tests.support.infra import query
from tests.support.receiver import Receiver


def job_count(infra: dict[str, str]) -> int:
    return int(query(infra["database_url"], "SELECT count(*) FROM jobs")[0][0])


def test_another_tenants_job_is_not_found(
    gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver, stack: Stack
) -> None:
    other = create_tenant(gateway, operator_token, "tenant-b")
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=tenant.headers)
    job_id = sent.json()["id"]

    response = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=other.headers)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 404
    listed = httpx.get(f"{gateway}/v1/jobs", headers=other.headers).json()
    assert job_id not in [j["id"] for j in listed["data"]]

    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        with pytest.raises(grpc.RpcError) as refused:
            gateway_pb2_grpc.NotificationServiceStub(channel).GetJob(
                gateway_pb2.NotificationServiceGetJobRequest(id=job_id),
                metadata=(("authorization", f"Bearer {other.api_key}"),),
                timeout=10,
            )
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"authorization": "Bearer hk_live_00000000_not-a-real-key-at-all"},
        {"authorization": "Basic dXNlcjpwYXNz"},
        {"authorization": "Bearer"},
    ],
    ids=["missing", "unknown-key", "wrong-scheme", "empty"],
)
def test_bad_or_missing_key_is_401_and_creates_nothing(
    gateway: str, infra: dict[str, str], receiver: Receiver, headers: dict[str, str]
) -> None:
    before = job_count(infra)
    response = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=headers)
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert httpx.get(f"{gateway}/v1/jobs", headers=headers).status_code == 401
    assert job_count(infra) == before


@pytest.mark.parametrize(
    "body",
    [
        {"payload": {"a": 1}},
        {"url": "ftp://example.com/x", "payload": 1},
        {"url": "not a url", "payload": 1},
        {"url": "http://example.com/x"},
        {"url": "http://example.com/x", "payload": 1, "payload_base64": "AA=="},
        {"url": "http://example.com/x", "payload_base64": "***"},
        {"url": "http://example.com/x", "payload": 1, "headers": {"Host": "evil"}},
        {"url": "http://example.com/x", "payload": 1, "headers": {"X-A": "a\r\nX-Injected: 1"}},
        {"url": "http://example.com/x", "payload": 1, "priority": "urgent"},
        {"url": "http://example.com/x", "payload": 1, "surprise": True},
        "just a string",
    ],
)
def test_malformed_body_is_422_problem_and_creates_nothing(
    gateway: str, infra: dict[str, str], tenant: TenantKey, body: object
) -> None:
    before = job_count(infra)
    response = httpx.post(f"{gateway}/v1/webhooks", json=body, headers=tenant.headers)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert response.headers["content-type"] == "application/problem+json"
    assert problem["status"] == 422 and problem["type"].endswith("/invalid-request") and problem["detail"]
    assert job_count(infra) == before


def test_unparseable_json_is_422(gateway: str, tenant: TenantKey) -> None:
    response = httpx.post(
        f"{gateway}/v1/webhooks",
        content=b'{"url": "http://x',
        headers={**tenant.headers, "content-type": "application/json"},
    )
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"


def test_unknown_job_id_forms_are_404(gateway: str, tenant: TenantKey) -> None:
    for job_id in ["00000000-0000-7000-8000-000000000000", "not-a-uuid"]:
        response = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers)
        assert response.status_code == 404


def test_admin_surface_refuses_tenant_keys_and_tenant_routes_refuse_the_operator_token(
    gateway: str, tenant: TenantKey, operator_token: str
) -> None:
    response = httpx.post(f"{gateway}/admin/v1/tenants", json={"name": "x", "plan": "free"}, headers=tenant.headers)
    assert response.status_code == 401
    response = httpx.get(f"{gateway}/v1/jobs", headers={"authorization": f"Bearer {operator_token}"})
    assert response.status_code == 401


def test_openapi_and_docs_are_served(gateway: str) -> None:
    spec = openapi_document(gateway)
    assert {"/v1/webhooks", "/v1/jobs", "/v1/jobs/{job_id}"} <= set(spec["paths"])
    assert httpx.get(f"{gateway}/docs").status_code == 200
