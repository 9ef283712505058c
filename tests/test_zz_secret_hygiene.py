"""Runs last (files run in name order): after every other test created API keys,
provider credentials, SMTP passwords and signing secrets, none of their plaintext
values appears in any log line, any metric, or anywhere in the database."""

from __future__ import annotations

import binascii
from pathlib import Path

import httpx

from herald.cli.stack import Stack
from tests.support.api import CREATED_SECRETS
from tests.support.infra import query


def leaks(text: str, secrets: list[str]) -> list[str]:
    return [s[:12] + "…" for s in secrets if s in text]


def test_no_secret_in_logs_metrics_or_database(stack: Stack, work_dir: Path, infra: dict[str, str]) -> None:
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

    tables = [r[0] for r in query(infra["database_url"], "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    dump = "\n".join(
        str(row[0]) for table in tables for row in query(infra["database_url"], f'SELECT t::text FROM "{table}" t')
    )
    hex_forms = ["\\x" + binascii.hexlify(s.encode()).decode() for s in secrets]
    assert not leaks(dump, secrets), "a plaintext secret is stored in clear"
    assert not any(h[2:] in dump for h in hex_forms), "a plaintext secret is stored as raw bytes"
