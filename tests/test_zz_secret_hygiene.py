"""Runs last in each lane (files run in name order): after every other test created API keys,
provider credentials, SMTP passwords and signing secrets (each kind also by a request
carrying an Idempotency-Key, whose answer the gateway stores for replay), none of their
plaintext values appears in any log line, any metric, or anywhere in the database: every
table of every schema, the idempotency table included, read as text (bytea as hex).

Checked once per lane (tests/support/lanes.py), at the end of each: a lane's secrets only ever
reach that lane's stacks, its logs and its database. Run as one process, the four checks cover
every secret of the run (each after the first again, a few seconds)."""

from __future__ import annotations

import binascii
from pathlib import Path

import httpx
import pytest

from herald.cli.stack import Stack
from tests.support.api import CREATED_SECRETS, KEYED_SECRETS
from tests.support.infra import query
from tests.support.lanes import LANES, lane_of


def leaks(text: str, secrets: list[str]) -> list[str]:
    return [s[:12] + "…" for s in secrets if s in text]


@pytest.mark.parametrize("lane", LANES)
def test_no_secret_in_logs_metrics_or_database(lane: str, stack: Stack, work_dir: Path, infra: dict[str, str]) -> None:
    secrets = sorted({s for s in CREATED_SECRETS if len(s) >= 8})
    assert len(secrets) >= 10, "the run created secrets to look for"

    logs = sorted(work_dir.rglob("*.log"))
    assert logs
    for log in logs:
        found = leaks(log.read_text(errors="replace"), secrets)
        assert not found, f"{log.name} contains {found}"

    for service in stack.services.values():
        metrics = httpx.get(f"http://127.0.0.1:{service.env['HERALD_METRICS_PORT']}/metrics").text
        assert not leaks(metrics, secrets)

    tables = [
        (r[0], r[1])
        for r in query(
            infra["database_url"],
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
        )
    ]
    assert ("public", "idempotency_keys") in tables
    if lane == lane_of("tests/test_idempotent_secrets.py"):
        # Each kind of secret was also created with an Idempotency-Key (tests/test_idempotent_secrets.py),
        # whose answer the gateway stored for replay.
        assert {"api_key", "signing_secret", "provider_key"} <= set(KEYED_SECRETS), KEYED_SECRETS.keys()
        assert query(infra["database_url"], "SELECT count(*) FROM idempotency_keys WHERE body IS NOT NULL")[0][0] > 0
    dump = "\n".join(
        str(row[0])
        for schema, table in tables
        for row in query(infra["database_url"], f'SELECT t::text FROM "{schema}"."{table}" t')
    )
    hex_forms = ["\\x" + binascii.hexlify(s.encode()).decode() for s in secrets]
    assert not leaks(dump, secrets), "a plaintext secret is stored in clear"
    assert not any(h[2:] in dump for h in hex_forms), "a plaintext secret is stored as raw bytes"
