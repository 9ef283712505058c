"""Named operators: `herald operator create/list/revoke`, each with a token of its own (shown
once, stored as SHA-256), taken by /admin/v1, AdminService and the operator console; the audit
log names the operator who made a change, and `herald audit` reads it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import create_tenant, remember_secret
from tests.support.infra import query

HERALD = str(Path(sys.executable).parent / "herald")
Cli = Callable[..., dict[str, Any]]


@pytest.fixture(scope="module")
def cli(stack: Stack, operator_token: str) -> Cli:
    def run(*args: str, token: str = operator_token) -> dict[str, Any]:
        env = {**os.environ, "HERALD_GATEWAY_GRPC": stack.endpoints["gateway_grpc"], "HERALD_OPERATOR_TOKEN": token}
        done = subprocess.run([HERALD, *args, "--json"], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    return run


def test_an_operator_is_created_used_named_in_the_audit_log_and_revoked(
    stack: Stack, gateway: str, cli: Cli, infra: dict[str, str]
) -> None:
    created = cli("operator", "create", "alice")
    token = remember_secret(created["token"])
    assert token.startswith("hk_op_") and created["name"] == "alice"
    assert {"admin", "alice"} <= {o["name"] for o in cli("operator", "list")["data"]}
    # Stored as its SHA-256 only.
    stored = query(infra["database_url"], "SELECT token_hash, operators::text FROM operators WHERE name = 'alice'")
    assert stored[0][0] == hashlib.sha256(token.encode()).digest()
    assert token not in stored[0][1]

    # Her token works on both surfaces, and the log says it was her.
    tenant = create_tenant(gateway, token, "made-by-alice")
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        admin = gateway_pb2_grpc.AdminServiceStub(channel)
        admin.UpdateTenant(
            gateway_pb2.AdminServiceUpdateTenantRequest(tenant_id=tenant.tenant_id, disabled=False),
            metadata=(("authorization", f"Bearer {token}"),),
        )
    entries = cli("audit", "--tenant", tenant.tenant_id)["data"]
    assert [e["action"] for e in entries] == ["grpc AdminService/UpdateTenant", "POST /admin/v1/tenants"]
    assert all(e["actor"].startswith("operator:alice ") for e in entries)
    assert entries[1]["resource_id"] == tenant.tenant_id
    # Creating her is in the log too (about no tenant), by the first operator, without her token.
    everything = httpx.get(
        f"{gateway}/admin/v1/audit-log", headers={"authorization": f"Bearer {token}"}, params={"limit": 200}
    )
    made = [e for e in everything.json()["data"] if e["action"] == "grpc AdminService/CreateOperator"]
    assert made and made[-1]["actor"]["name"] == "admin" and made[-1]["changes"] == {"name": "alice"}
    assert token not in everything.text

    # She signs in to the operator console with it.
    with httpx.Client(base_url=gateway) as browser:
        page = browser.get("/admin/console/login")
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        signed_in = browser.post("/admin/console/login", data={"csrf": csrf, "credential": token})
        assert signed_in.status_code == 303

    revoked = cli("operator", "revoke", "alice")
    assert revoked["revoked_at"]
    refused = httpx.get(f"{gateway}/admin/v1/tenants", headers={"authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    # A name is not reused.
    env = {**os.environ, "HERALD_GATEWAY_GRPC": stack.endpoints["gateway_grpc"]}
    again = subprocess.run(
        [HERALD, "operator", "create", "alice", "--json"],
        env={**env, "HERALD_OPERATOR_TOKEN": Path(stack.endpoints["operator_token_file"]).read_text().strip()},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode != 0 and "ALREADY_EXISTS" in again.stderr


def test_a_tenant_key_and_an_unknown_token_are_not_operators(gateway: str, operator_token: str) -> None:
    tenant = create_tenant(gateway, operator_token, "not-an-operator")
    for credential in (tenant.api_key, "hk_op_" + "x" * 43, "operator"):
        answer = httpx.get(f"{gateway}/admin/v1/operators", headers={"authorization": f"Bearer {credential}"})
        assert answer.status_code == 401, credential


def test_an_operator_gives_a_key_scopes_from_the_cli(gateway: str, cli: Cli, operator_token: str) -> None:
    tenant = create_tenant(gateway, operator_token, "scoped-by-cli")
    key = cli("apikey", "create", tenant.tenant_id, "--name", "reader", "--scope", "read")
    remember_secret(key["api_key"])
    assert key["scopes"] == ["read"]
    headers = {"authorization": f"Bearer {key['api_key']}"}
    assert httpx.get(f"{gateway}/v1/jobs", headers=headers).status_code == 200
    assert httpx.post(f"{gateway}/v1/api-keys", json={"name": "x"}, headers=headers).status_code == 403
