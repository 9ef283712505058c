"""What the isolation test (test_isolation.py) knows of the tenants: the kind of resource each path
parameter, field and gRPC method names, tenant A's resources and secrets (the `World`), what B
may be answered, and A's database rows to compare before and after.
"""

from __future__ import annotations

import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.resilience.conftest import Resilient
from tests.resilience.receivers import FlakyReceiver
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey
from tests.support.infra import query

# A path parameter -> the kind of A's resource it names.
RESOURCE_OF_PARAM = {
    "job_id": "job",
    "key_id": "api_key",
    "provider_id": "provider",
    "address": "suppression",
    "domain_id": "domain",
    "target_id": "target",
    "filter_id": "filter",
    "subscription_id": "subscription",
    "event_id": "event",
    "tenant_id": "tenant",  # operator routes only
    "provider": "inbound_provider",  # /v1/inbound/{provider}: a name in each tenant's own namespace
    "name": "operator",  # /admin/v1/operators/{name}: operator routes only
}
# Kinds whose value is a name every tenant has its own of (not an identifier): the "missing" control uses
# the same name, so the check is that B's answer is about B's own, and A's rows stay as they are. An event
# id is one (B may publish an event under the same id and then read its own): what A's event carries is
# private instead (no answer to B may hold it).
NAMESPACE_KINDS = {"inbound_provider", "event", "operator"}
# A field (JSON body or protobuf, at any depth) -> the kind of A's resource it names.
RESOURCE_OF_FIELD = {
    "job_id": "job",
    "key_id": "api_key",
    "provider_id": "provider",
    "fallback_provider_id": "provider",
    "provider": "provider",  # POST /v1/emails: pin a provider (the enum `provider` of a provider body is left alone)
    "fallback": "provider",
    "address": "suppression",
    "target_id": "target",
    "filter_id": "filter",
    "subscription_id": "subscription",
    "event_id": "event",
    "tenant_id": "tenant",
}
# gRPC: the kind a method's top-level `id` names, from the words of its name (GetJob, RetryJob, ...).
KIND_OF_WORD = {
    "Job": "job",
    "Jobs": "job",
    "ApiKey": "api_key",
    "Provider": "provider",
    "Suppression": "suppression",
    "Domain": "domain",
    "WebhookTarget": "target",
    "EventFilter": "filter",
    "Subscription": "subscription",
    "Event": "event",
}
EVENT_TYPE = "isolation.checked.v1"


@dataclass
class World:
    a: TenantKey
    b: TenantKey
    receiver: FlakyReceiver
    sendgrid: SendGridStandIn
    b_sendgrid_key: str
    resources: dict[str, str] = field(default_factory=dict)
    # Identifiers of A's that no answer to B may carry (besides the resources): secrets, jobs of A's event.
    private: list[str] = field(default_factory=list)
    # Everything B has sent so far: B's own jobs may echo what B put in them (a provider id it pinned).
    sent_by_b: list[str] = field(default_factory=list)

    @property
    def identifiers(self) -> dict[str, str]:
        named = {v: k for k, v in self.resources.items() if k not in NAMESPACE_KINDS}
        return {**named, **{v: "private" for v in self.private}}

    def missing(self) -> dict[str, str]:
        """Resources of every kind that do not exist, shaped like A's."""
        out = {}
        for kind, value in self.resources.items():
            if kind in NAMESPACE_KINDS:
                out[kind] = value
            else:
                out[kind] = f"nobody-{secrets.token_hex(4)}@example.com" if "@" in value else str(uuid.uuid4())
        return out


def a_snapshot(database_url: str, tenant_id: str) -> dict[str, list[str]]:
    """Every row of the tenant: tables with a tenant_id column, the tenant row, rows of its jobs."""
    columns = query(
        database_url,
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND column_name IN ('tenant_id', 'job_id')",
    )
    snapshot: dict[str, list[str]] = {}
    tenant_rows = query(database_url, "SELECT t::text FROM tenants t WHERE id = $1::uuid", tenant_id)
    snapshot["tenants"] = [r[0] for r in tenant_rows]
    for table, column in sorted({(r[0], r[1]) for r in columns}):
        if column == "tenant_id":
            sql = f'SELECT t::text FROM "{table}" t WHERE tenant_id = $1::uuid'
        else:
            sql = f'SELECT t::text FROM "{table}" t WHERE job_id IN (SELECT id FROM jobs WHERE tenant_id = $1::uuid)'
        snapshot[f"{table}.{column}"] = sorted(r[0] for r in query(database_url, sql, tenant_id))
    return snapshot


def changed(before: dict[str, list[str]], after: dict[str, list[str]]) -> list[str]:
    return [
        f"{table}: {before.get(table)} -> {after.get(table)}" for table in after if before.get(table) != after[table]
    ]


def settled_snapshot(resilient: Resilient, tenant: TenantKey) -> dict[str, list[str]]:
    # API-key last-used times are written in batches (0.5 s in tests): let the last one land.
    time.sleep(1.2)
    return a_snapshot(resilient.database_url, tenant.tenant_id)


def kind_of(name: str, table: dict[str, str], where: str) -> str:
    kind = table.get(name)
    if kind is None:
        pytest.fail(
            f"{where}: {name!r} names a resource this test cannot create; teach tests/resilience/isolation.py "
            "(RESOURCE_OF_PARAM / RESOURCE_OF_FIELD / KIND_OF_WORD) and the `world` fixture of test_isolation.py"
        )
    return kind


def body_values(world: World, references: dict[str, str]) -> dict[str, Any]:
    """What to put in a body: B's own receiver and credentials, and `references` (A's things, or missing ones)."""
    values: dict[str, Any] = {
        "url": f"{world.receiver.base_url}/b",
        "payload": {"from": "b"},
        "email": "b-user@example.com",
        "subject": "isolation",
        "text": "isolation",
        "domain": f"mail-{secrets.token_hex(3)}.b.example",
        "api_key": world.b_sendgrid_key,
        "base_url": world.sendgrid.base_url,
        "name": "b",
        "event_type": EVENT_TYPE,
        "event_types": [EVENT_TYPE],
    }
    for name, kind in RESOURCE_OF_FIELD.items():
        if kind in references:
            values[name] = references[kind]
    return values


def leaked(text: str, world: World, sent: str) -> list[str]:
    """A's identifiers in an answer to B, except those B itself sent, now or before (a provider id it
    pinned, echoed back in B's own job, is not a leak)."""
    world.sent_by_b.append(sent)
    said = "\n".join(world.sent_by_b)
    return [f"{kind} {value}" for value, kind in world.identifiers.items() if value in text and value not in said]
