"""Tenant erasure (DELETE /admin/v1/tenants/{id}, AdminService.EraseTenant, `herald tenant erase`):
afterwards the tenant's id appears in no row of a database dump and in no message on the bus, its
keys get 401, its jobs and its id are 404 everywhere, and a delivery it had waiting is never made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from herald_ledger.store.erasure import JOB_TABLES, TENANT_TABLES, tenant_hash
from herald_ledger.store.platform_email import PLATFORM_TENANT_ID

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant, remember_secret, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Receiver
from tests.support.subscriptions import publish, subscribe
from tests.support.traces import bus_messages_with, dump_lines_with

# Non-partition tables of the ledger's schema with a `tenant_id` column, and those with a
# foreign key to `jobs` or to a day of it (a partition is erased with its parent).
TABLES_WITH_TENANT = """
    SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND a.attname = 'tenant_id' AND NOT a.attisdropped
      AND c.relkind IN ('r', 'p') AND NOT c.relispartition
"""
TABLES_OF_JOBS = """
    SELECT DISTINCT COALESCE(parent.relname, c.relname) AS relname
    FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class parent ON parent.oid = i.inhparent
    WHERE f.contype = 'f' AND (f.confrelid = 'jobs'::regclass
      OR f.confrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'jobs'::regclass))
"""

# The operators' mail (jobs of the platform tenant) that names a tenant.
ALERTS_NAMING = "SELECT id FROM jobs WHERE tenant_id = $1 AND strpos(request::text, $2) > 0"


def test_the_erasure_covers_every_table_that_holds_a_tenants_rows(stack: Stack, infra: dict[str, str]) -> None:
    """A table added with a `tenant_id` column (or rows of a job) and not erased fails here."""
    with_tenant = {row["relname"] for row in query(infra["database_url"], TABLES_WITH_TENANT)}
    assert with_tenant == set(TENANT_TABLES)
    of_jobs = {row["relname"] for row in query(infra["database_url"], TABLES_OF_JOBS)}
    assert of_jobs <= set(JOB_TABLES) | set(TENANT_TABLES)


def operator(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def assert_no_trace(infra: dict[str, str], *values: str) -> None:
    for value in values:
        assert dump_lines_with(infra["database_url"], value) == [], f"{value} is still in the database"
        assert bus_messages_with(infra["nats_url"], infra["bus_prefix"], value) == [], f"{value} is still on the bus"


def jobs_of(gateway: str, tenant: TenantKey, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while len(jobs := httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers).json()["data"]) < count:
        assert time.monotonic() < deadline, jobs
        time.sleep(0.1)
    return list(jobs)


def test_erasure_over_http_leaves_no_row_and_no_message(
    gateway: str, operator_token: str, infra: dict[str, str], receiver: Receiver
) -> None:
    contact = "erasure-owner@example.com"
    made = httpx.post(
        f"{gateway}/admin/v1/tenants",
        json={"name": "erased-over-http", "plan": "startup", "contact_email": contact},
        headers=operator(operator_token),
    ).json()
    tenant = TenantKey(made["tenant_id"], remember_secret(made["api_key"]))
    neighbour = create_tenant(gateway, operator_token, "erasure-neighbour")
    # Configuration of every kind, and a key (its creation mails the contact: a job of the tenant).
    ids = subscribe(gateway, tenant, receiver.url, ["orders.*"], rate_limit_per_min=1)
    second = httpx.post(f"{gateway}/v1/api-keys", json={"name": "second"}, headers=tenant.headers).json()
    remember_secret(second["api_key"])
    suppressed = httpx.post(f"{gateway}/v1/suppressions", json={"address": "gone@example.com"}, headers=tenant.headers)
    assert suppressed.status_code < 300, suppressed.text
    remember_secret(httpx.post(f"{gateway}/v1/webhook-secret", headers=tenant.headers).json()["secret"])
    sent = httpx.post(
        f"{gateway}/v1/webhooks",
        json={"url": receiver.url, "payload": {"order": 1}},
        headers={**tenant.headers, "idempotency-key": "erase-me-1"},
    ).json()
    # Four events to a target paced at one a minute: one is delivered, three wait on the bus.
    for n in range(4):
        publish(gateway, tenant, "orders.created", payload={"n": n})
    receiver.wait_for(sent["id"])
    # A webhook nobody answers: dead-lettered, and the operators' alert mail names the tenant.
    doomed = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": "http://127.0.0.1:9/x", "payload": {"order": 2}}, headers=tenant.headers
    )
    assert doomed.status_code == 202, doomed.text
    wait_for_status(gateway, tenant, doomed.json()["id"], {"failed"})
    deadline = time.monotonic() + 30
    while not query(infra["database_url"], ALERTS_NAMING, PLATFORM_TENANT_ID, tenant.tenant_id):
        assert time.monotonic() < deadline, "no dead-letter alert mail names the tenant"
        time.sleep(0.2)
    jobs = jobs_of(gateway, tenant, 6)

    erased = httpx.delete(f"{gateway}/admin/v1/tenants/{tenant.tenant_id}", headers=operator(operator_token))
    assert erased.status_code == 200, erased.text
    receipt = erased.json()
    assert receipt["tenant_id"] == tenant.tenant_id and receipt["bus_not_removed"] == []
    rows = receipt["rows"]
    assert rows["tenants"] == 1 and rows["api_keys"] == 2 and rows["jobs"] >= 5
    # Its four events, and Herald's own herald.delivery.exhausted for the dead letter once the
    # router has recorded it (its outbox row is written with the dead letter, so it is always there).
    assert rows["events"] in (4, 5) and rows["operational_events"] == 1
    assert (rows["webhook_targets"], rows["event_filters"], rows["subscriptions"]) == (1, 1, 1)
    assert rows["suppressions"] == 1 and rows["webhook_secrets"] == 1 and rows["idempotency_keys"] == 1
    assert rows["audit_log"] >= 4 and rows["attempts"] >= 2
    assert rows["dead_letters"] == 1 and rows["operator_emails"] >= 1
    bus = receipt["bus"]
    assert bus["work_messages"] >= 1 and bus["pacing_state"] == 1 and bus["dead_letter_messages"] >= 1

    # Its keys are refused; its id and its jobs are 404 for operators and every tenant.
    for key in (tenant.api_key, second["api_key"]):
        assert httpx.get(f"{gateway}/v1/jobs", headers={"authorization": f"Bearer {key}"}).status_code == 401
    for job in jobs:
        assert httpx.get(f"{gateway}/v1/jobs/{job['id']}", headers=neighbour.headers).status_code == 404
    assert httpx.get(f"{gateway}/v1/webhooks/targets/{ids['target']}", headers=neighbour.headers).status_code == 404
    for method in ("GET", "DELETE"):
        again = httpx.request(
            method, f"{gateway}/admin/v1/tenants/{tenant.tenant_id}", headers=operator(operator_token)
        )
        assert again.status_code == 404 and again.headers["content-type"] == "application/problem+json"
    for unknown in ("00000000-0000-7000-8000-000000000000", "not-an-id"):
        missing = httpx.delete(f"{gateway}/admin/v1/tenants/{unknown}", headers=operator(operator_token))
        assert missing.status_code == 404, missing.text

    # The operators' log keeps the erasure, naming the tenant by hash only.
    entries = httpx.get(f"{gateway}/admin/v1/audit-log", headers=operator(operator_token)).json()["data"]
    entry = next(e for e in entries if e["resource_id"] == tenant_hash(tenant.tenant_id))
    assert entry["action"] == "DELETE /admin/v1/tenants/{tenant_id}" and entry["actor"]["kind"] == "operator"
    assert entry["tenant_id"] is None and entry["changes"]["erased_rows"]["jobs"] == rows["jobs"]
    assert_no_trace(infra, tenant.tenant_id, contact)


def test_erasure_over_grpc_and_the_cli(
    stack: Stack, operator_token: str, infra: dict[str, str], receiver: Receiver
) -> None:
    gateway = stack.endpoints["gateway_http"]
    admin_metadata = (("authorization", f"Bearer {operator_token}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        admin = gateway_pb2_grpc.AdminServiceStub(channel)
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        made = admin.CreateTenant(
            gateway_pb2.AdminServiceCreateTenantRequest(name="erased-over-grpc", plan=common_pb2.PLAN_STARTUP),
            metadata=admin_metadata,
        )
        key = (("authorization", f"Bearer {remember_secret(made.api_key)}"),)
        tenant_id = made.tenant.id
        job = api.SendWebhook(gateway_pb2.SendWebhookRequest(url=receiver.url, body=b'{"a":1}'), metadata=key)
        receipt = admin.EraseTenant(
            gateway_pb2.AdminServiceEraseTenantRequest(tenant_id=tenant_id), metadata=admin_metadata
        ).receipt
        assert receipt.tenant_id == tenant_id and receipt.rows["tenants"] == 1 and receipt.rows["jobs"] >= 1
        assert receipt.tenant_hash == tenant_hash(tenant_id)
        with pytest.raises(grpc.RpcError) as refused:
            api.GetJob(gateway_pb2.NotificationServiceGetJobRequest(id=job.id), metadata=key)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        for call, request in (
            (admin.GetTenant, gateway_pb2.AdminServiceGetTenantRequest(tenant_id=tenant_id)),
            (admin.EraseTenant, gateway_pb2.AdminServiceEraseTenantRequest(tenant_id=tenant_id)),
            (admin.EraseTenant, gateway_pb2.AdminServiceEraseTenantRequest(tenant_id="nope")),
        ):
            with pytest.raises(grpc.RpcError) as missing:
                call(request, metadata=admin_metadata)
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert_no_trace(infra, tenant_id)

    by_cli = create_tenant(gateway, operator_token, "erased-by-cli")
    env = {
        **os.environ,
        "HERALD_GATEWAY_GRPC": stack.endpoints["gateway_grpc"],
        "HERALD_OPERATOR_TOKEN": operator_token,
    }
    herald = str(Path(sys.executable).parent / "herald")
    done = subprocess.run(
        [herald, "tenant", "erase", by_cli.tenant_id, "--yes", "--json"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"]["api_keys"] == "1"  # int64 in JSON: a string
    again = subprocess.run(
        [herald, "tenant", "erase", by_cli.tenant_id, "--yes"], env=env, capture_output=True, text=True
    )
    assert again.returncode != 0 and "NOT_FOUND" in again.stderr
    assert httpx.get(f"{gateway}/v1/jobs", headers=by_cli.headers).status_code == 401


def test_a_delivery_waiting_when_its_tenant_is_erased_is_never_made(
    gateway: str, operator_token: str, infra: dict[str, str], receiver: Receiver
) -> None:
    """A target that takes one call at a time answers slowly: while the first call hangs, the
    others have started (the ledger said yes) and wait for the target's slot. Once the erasure
    committed none of them is called: nothing reaches the receiver after the erasure was asked
    for, and the receipt comes after the hanging call ended."""
    tenant = create_tenant(gateway, operator_token, "erased-mid-delivery")
    receiver.behaviour.delay_path = ("/slow", 2.0)
    subscribe(gateway, tenant, f"{receiver.url}/slow", ["orders.*"], max_in_flight=1)
    for n in range(4):
        publish(gateway, tenant, "orders.created", payload={"n": n})
    deadline = time.monotonic() + 30
    while not receiver.requests:
        assert time.monotonic() < deadline, "the first delivery never arrived"
        time.sleep(0.02)

    asked_at = time.time()
    erased = httpx.delete(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}", headers=operator(operator_token), timeout=60
    )
    assert erased.status_code == 200, erased.text
    receipt = erased.json()
    # The hanging call (2 s) ended before the answer; the started ones never ran.
    assert receipt["deliveries_awaited"] >= 1, receipt
    assert all(r.status for r in receiver.requests)
    # Long enough for a delivery the erasure missed to arrive: held-back jobs come back within 2 s.
    time.sleep(4)
    late = [r for r in receiver.requests if r.wall_at > asked_at]
    assert late == [], f"{len(late)} deliveries arrived after the erasure was asked for"
    assert_no_trace(infra, tenant.tenant_id)
