"""The operator surface and the tenant surface never accept each other's credentials.
The test walks the gateway's whole route table, so a route added later is covered."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from herald.cli.stack import Stack
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
    assert cli("tenant", "disable", tenant_id, "--enable")["disabled"] is False

    refused = subprocess.run(
        [herald, "tenant", "show", tenant_id],
        env={**env, "HERALD_OPERATOR_TOKEN": "wrong"},
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "UNAUTHENTICATED" in refused.stderr


@pytest.mark.parametrize("path", ["/admin/v1/tenants", "/admin/v1/master-key/rotate"])
def test_admin_surface_without_token_is_401(gateway: str, path: str) -> None:
    assert httpx.post(f"{gateway}{path}", json={}).status_code == 401
