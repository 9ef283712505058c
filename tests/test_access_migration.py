"""Migration 0021 on a database that already has keys: every existing key keeps working with
every scope, and the new audit log refuses edits from the start."""

from __future__ import annotations

import uuid

import asyncpg
import pytest
from alembic import command
from herald_ledger.migrate import alembic_config

from tests.support.infra import query, separate_database


def test_existing_keys_get_every_scope(infra: dict[str, str]) -> None:
    with separate_database(infra["database_url"], "access_migration") as database_url:
        command.upgrade(alembic_config(database_url), "0016")
        tenant_id, key_id = uuid.uuid4(), uuid.uuid4()
        query(database_url, "INSERT INTO tenants (id, name, plan) VALUES ($1, 'before', 'free')", tenant_id)
        query(
            database_url,
            "INSERT INTO api_keys (id, tenant_id, name, public_id, key_hash) VALUES ($1, $2, 'old', 'abcd1234', $3)",
            key_id,
            tenant_id,
            b"\x01" * 32,
        )

        command.upgrade(alembic_config(database_url), "0021")

        scopes = query(database_url, "SELECT scopes FROM api_keys WHERE id = $1", key_id)[0][0]
        assert sorted(scopes) == ["console", "keys", "manage", "read", "send"]
        query(
            database_url,
            "INSERT INTO audit_log (id, tenant_id, actor_kind, actor_id, actor_name, action) "
            "VALUES ($1, $2, 'key', $3, 'old', 'POST /v1/api-keys')",
            uuid.uuid4(),
            tenant_id,
            str(key_id),
        )
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            query(database_url, "TRUNCATE audit_log")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            query(database_url, "DELETE FROM tenants WHERE id = $1", tenant_id)
        # An erasure says so in its transaction; then the tenant's entries go with it.
        erased = query(
            database_url,
            "WITH s AS (SELECT set_config('herald.audit_erasure', 'on', true)) "
            "DELETE FROM tenants WHERE id = $1 AND EXISTS (SELECT 1 FROM s) RETURNING id",
            tenant_id,
        )
        assert len(erased) == 1
        assert query(database_url, "SELECT count(*) FROM audit_log")[0][0] == 0
