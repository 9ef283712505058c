"""The operator surface and the tenant surface never accept each other's credentials.
The test walks the gateway's whole route table, so a route added later is covered."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from herald.cli.stack import SERVICES, Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, openapi_document, remember_secret

PLACEHOLDER = "00000000-0000-7000-8000-000000000000"


def operations(gateway: str) -> list[tuple[str, str]]:
    spec = openapi_document(gateway)
    found = []
    for path, methods in spec["paths"].items():
        for method in methods:
            found.append((method.upper(), re.sub(r"\{[^}]+\}", PLACEHOLDER, path)))
    return found


def test_admin_routes_refuse_tenant_keys_and_tenant_routes_refuse_the_operator_token(
    gateway: str, tenant: TenantKey, operator_token: str
) -> None:
    routes = operations(gateway)
    admin = [r for r in routes if r[1].startswith("/admin/")]
    tenant_routes = [r for r in routes if r[1].startswith("/v1/")]
    assert len(admin) >= 8 and len(tenant_routes) >= 12
    for method, path in admin:
        response = httpx.request(method, f"{gateway}{path}", headers=tenant.headers, json={})
        assert response.status_code == 401, (method, path, response.status_code)
    for method, path in tenant_routes:
        response = httpx.request(
            method, f"{gateway}{path}", headers={"authorization": f"Bearer {operator_token}"}, json={}
        )
        assert response.status_code == 401, (method, path, response.status_code)


def test_operator_cli_manages_tenants_and_keys(stack: Stack, gateway: str) -> None:
    env = {
        **os.environ,
        "HERALD_GATEWAY_GRPC": stack.endpoints["gateway_grpc"],
        "HERALD_OPERATOR_TOKEN": Path(stack.endpoints["operator_token_file"]).read_text().strip(),
    }
    herald = str(Path(sys.executable).parent / "herald")

    def cli(*args: str) -> dict[str, Any]:
        done = subprocess.run([herald, *args, "--json"], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    created = cli("tenant", "create", "cli-tenant", "--plan", "indie")
    remember_secret(created["api_key"])
    tenant_id = created["tenant_id"]
    # A second tenant of the same name is refused, naming the first, unless asked for.
    twice = subprocess.run(
        [herald, "tenant", "create", "cli-tenant", "--plan", "indie"], env=env, capture_output=True, text=True
    )
    assert twice.returncode != 0 and f"a tenant named 'cli-tenant' exists already ({tenant_id})" in twice.stderr
    assert tenant_id in [t["tenant_id"] for t in cli("tenant", "list")["tenants"]]
    assert cli("tenant", "show", tenant_id)["plan"] == "indie"
    assert cli("tenant", "set-plan", tenant_id, "startup")["plan"] == "startup"

    key = cli("apikey", "create", tenant_id, "--name", "deploy")
    remember_secret(key["api_key"])
    headers = {"authorization": f"Bearer {key['api_key']}"}
    assert httpx.get(f"{gateway}/v1/jobs", headers=headers).status_code == 200
    listed = cli("apikey", "list", tenant_id)["keys"]
    assert {k["name"] for k in listed} == {"initial", "deploy"}
    assert all("api_key" not in k for k in listed)
    assert cli("apikey", "revoke", tenant_id, key["key_id"])["revoked_at"]
    assert cli("tenant", "disable", tenant_id)["disabled"] is True
    # The disabled tenant's callers are told so, not that their key is unknown.
    initial = {"authorization": f"Bearer {created['api_key']}"}
    deadline = time.monotonic() + 10
    while (refusal := httpx.get(f"{gateway}/v1/jobs", headers=initial)).status_code != 401:
        assert time.monotonic() < deadline, refusal.text
        time.sleep(0.1)
    assert "tenant is disabled" in refusal.json()["detail"], refusal.text
    # Nothing dead-lettered: the list says so rather than printing nothing.
    empty = subprocess.run(
        [herald, "dlq", "list", "--tenant", tenant_id], env=env, capture_output=True, text=True, check=True
    )
    assert empty.stdout.startswith("no dead letters of this tenant"), empty.stdout
    assert cli("tenant", "disable", tenant_id, "--enable")["disabled"] is False

    refused = subprocess.run(
        [herald, "tenant", "show", tenant_id],
        env={**env, "HERALD_OPERATOR_TOKEN": "wrong"},
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "UNAUTHENTICATED" in refused.stderr


def test_run_help_lists_the_services() -> None:
    herald = str(Path(sys.executable).parent / "herald")
    shown = subprocess.run([herald, "run", "--help"], capture_output=True, text=True, check=True).stdout
    assert [line.strip() for line in shown.split("SERVICE is one of:")[1].splitlines() if line.strip()] == sorted(
        SERVICES
    )


@pytest.mark.parametrize("path", ["/admin/v1/tenants", "/admin/v1/master-key/rotate"])
def test_admin_surface_without_token_is_401(gateway: str, path: str) -> None:
    assert httpx.post(f"{gateway}{path}", json={}).status_code == 401


def test_a_second_tenant_of_one_name_is_refused_unless_asked_for(
    stack: Stack, gateway: str, operator_token: str
) -> None:
    """Names are for people: a name another tenant has is 409 (HTTP) or ALREADY_EXISTS (gRPC), naming
    that tenant, and nothing is created; asked for (`allow_duplicate_name`), the second one is made."""
    admin = {"authorization": f"Bearer {operator_token}"}
    name = f"Twice Ltd {os.getpid()}-{time.monotonic_ns()}"
    first = httpx.post(f"{gateway}/admin/v1/tenants", json={"name": name, "plan": "indie"}, headers=admin)
    assert first.status_code == 201, first.text
    remember_secret(first.json()["api_key"])
    first_id = first.json()["tenant_id"]

    again = httpx.post(f"{gateway}/admin/v1/tenants", json={"name": name, "plan": "startup"}, headers=admin)
    assert again.status_code == 409 and again.headers["content-type"] == "application/problem+json", again.text
    assert name in again.json()["detail"] and first_id in again.json()["detail"]
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.AdminServiceStub(channel)
        metadata = (("authorization", f"Bearer {operator_token}"),)
        with pytest.raises(grpc.RpcError) as refused:
            api.CreateTenant(
                gateway_pb2.AdminServiceCreateTenantRequest(name=name, plan=common_pb2.PLAN_STARTUP),
                metadata=metadata,
                timeout=30,
            )
        assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS  # type: ignore[attr-defined]
        assert first_id in refused.value.details()  # type: ignore[attr-defined]
        listed = httpx.get(f"{gateway}/admin/v1/tenants", params={"limit": 200}, headers=admin).json()
        named = [t["id"] for t in listed["data"] if t["name"] == name]
        while listed.get("next_cursor"):
            listed = httpx.get(
                f"{gateway}/admin/v1/tenants", params={"limit": 200, "cursor": listed["next_cursor"]}, headers=admin
            ).json()
            named += [t["id"] for t in listed["data"] if t["name"] == name]
        assert named == [first_id], "a refused creation made a tenant"

        second = api.CreateTenant(
            gateway_pb2.AdminServiceCreateTenantRequest(
                name=name, plan=common_pb2.PLAN_STARTUP, allow_duplicate_name=True
            ),
            metadata=metadata,
            timeout=30,
        )
    remember_secret(second.api_key)
    assert second.tenant.name == name and second.tenant.id != first_id
    third = httpx.post(
        f"{gateway}/admin/v1/tenants",
        json={"name": name, "plan": "free", "allow_duplicate_name": True},
        headers=admin,
    )
    assert third.status_code == 201, third.text
    remember_secret(third.json()["api_key"])
