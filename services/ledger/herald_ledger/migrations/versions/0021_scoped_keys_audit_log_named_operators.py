"""Scoped API keys, an append-only audit log, named operators (revision 0021).

`api_keys.scopes`: what a key may do; every existing key gets every scope, so it keeps
working as before. `audit_log`: who changed a tenant's configuration (or an operator's),
appended by the gateway; a trigger refuses UPDATE of a row always, and DELETE unless the
transaction set `herald.audit_erasure` to `on` (a tenant's erasure or retention does, with
SET LOCAL), so no code path edits the record behind it. TRUNCATE is refused as well.
`operators`: named operators whose tokens are stored as SHA-256 only.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0021"
down_revision = "0019"

ALL_SCOPES = "'{send,read,manage,keys,console}'::text[]"


def upgrade() -> None:
    op.add_column(
        "api_keys",
        sa.Column("scopes", postgresql.ARRAY(sa.Text()), nullable=False, server_default=sa.text(ALL_SCOPES)),
    )
    op.create_table(
        "operators",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("last_used_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("id", name="pk_operators"),
        sa.UniqueConstraint("name", name="uq_operators_name"),
        sa.UniqueConstraint("token_hash", name="uq_operators_token_hash"),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("tenant_id", postgresql.UUID(as_uuid=True)),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("actor_kind", sa.Text(), nullable=False),
        sa.Column("actor_id", sa.Text(), nullable=False),
        sa.Column("actor_name", sa.Text(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("resource_id", sa.Text(), nullable=False, server_default=""),
        sa.Column("changes", postgresql.JSONB(), nullable=False, server_default="{}"),
        sa.Column("address", sa.Text(), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name="fk_audit_log_tenant_id_tenants", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_audit_log_tenant_id_id", "audit_log", ["tenant_id", "id"])
    op.execute(
        """
        CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' AND current_setting('herald.audit_erasure', true) = 'on' THEN
                RETURN OLD;
            END IF;
            RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
    )
    op.execute(
        "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
        "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()"
    )


def downgrade() -> None:
    op.drop_table("audit_log")
    op.execute("DROP FUNCTION audit_log_append_only()")
    op.drop_table("operators")
    op.drop_column("api_keys", "scopes")
