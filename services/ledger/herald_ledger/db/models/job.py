from sqlalchemy import BigInteger, Column, DateTime, Index, Integer, LargeBinary, Text, text
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import created_at_column, tenant_rows, updated_at_column

# Partitioned by day of id (herald_ledger.partitions).
# `request` holds what the channel needs besides the body (URL, headers, content
# type); `body` holds the opaque payload bytes exactly as the tenant sent them.
jobs = tenant_rows(
    "jobs",
    Column("channel", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("priority", Text, nullable=False),
    Column("request", JSONB, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("idempotency_key", Text),
    Column("attempt_count", Integer, nullable=False, server_default="0"),
    Column("last_error", Text),
    created_at_column(),
    updated_at_column(),
    # Set while one publisher owns republishing this PENDING job (outbox lease).
    Column("publish_claimed_until", DateTime(timezone=True)),
    Column("ordering_key", Text),
    # The subscription target an event fanned this job out to; a 410 from it disables it.
    Column("target_id", UUID(as_uuid=True)),
    # Explicit retries after FAILED: each run gets a fresh attempt budget and message id.
    Column("run", Integer, nullable=False, server_default="0"),
    # Email: the provider config that accepted, and its id for the message (provider
    # events such as bounces find the job by it).
    Column("provider_id", Text),
    Column("provider_message_id", Text),
    # Email, from verified provider events: the earliest "delivered" report, and the event that set BOUNCED or
    # COMPLAINED (its time decides between two such events, so arrival order does not matter).
    Column("provider_delivered_at", DateTime(timezone=True)),
    Column("status_event_at", DateTime(timezone=True)),
    Column("status_event_id", Text),
    # The order jobs sharing an ordering key go in: drawn from one database sequence as the row is
    # inserted, not from the id's clock (two ledger replicas' clocks may differ). Migration 0016.
    Column("seq", BigInteger, server_default=text("nextval('jobs_seq')")),
    # Why a sender holds this QUEUED job back without a call, and when it said so: shown until the
    # next attempt is recorded (updated_at moves past it). Migration 0018.
    Column("waiting_reason", Text),
    Column("waiting_noted_at", DateTime(timezone=True)),
    # A scheduled retry: when its work message is due back from the bus (NULL: due since
    # `updated_at`). The reconciler republishes what the bus has not acted on by then plus a
    # grace (herald_ledger.reconciler). Migration 0019.
    Column("next_attempt_at", DateTime(timezone=True)),
    # An event's delivery: the tenant's event id (the event log reads its deliveries by it); a resend:
    # the job it sends again. Migration 0022.
    Column("event_id", Text),
    Column("origin_job_id", UUID(as_uuid=True)),
    # When the payload went (the body, an email's request, the attempts' excerpts), by expunge or by
    # retention (herald_ledger.store.payloads); the row itself stays. Migration 0023.
    Column("payload_expunged_at", DateTime(timezone=True)),
    # Held by the ledger, off the bus, until `next_attempt_at` (herald_ledger.store.parking): ''
    # for a long retry, the sender's call lane for a delivery its target's open circuit holds
    # (released early when the lane answers again). NULL: the bus holds the job. Migration 0028.
    Column("parked_on", Text),
    # When the current run began (the explicit retry that started it; NULL for the first run):
    # its retry window counts from it. Migration 0029.
    Column("run_started_at", DateTime(timezone=True)),
    Index(
        "ix_jobs_provider_message_id",
        "provider_message_id",
        postgresql_where=text("provider_message_id IS NOT NULL"),
    ),
    Index("ix_jobs_tenant_id_id", "tenant_id", text("id DESC")),
    Index("ix_jobs_tenant_id_idempotency_key", "tenant_id", "idempotency_key"),
    Index("ix_jobs_pending_updated_at", "updated_at", postgresql_where=text("status = 'PENDING'")),
    # The reconciler's scan: unsettled jobs by the time the bus was due to act on them.
    Index(
        "ix_jobs_unsettled_due",
        text("COALESCE(next_attempt_at, updated_at)"),
        postgresql_where=text("status IN ('QUEUED', 'DELIVERING')"),
    ),
    # Recovering a target finds its failed and skipped deliveries.
    Index(
        "ix_jobs_recoverable_target_id_updated_at",
        "target_id",
        "updated_at",
        postgresql_where=text("status IN ('FAILED', 'SKIPPED') AND target_id IS NOT NULL"),
    ),
    Index("ix_jobs_tenant_id_event_id", "tenant_id", "event_id", postgresql_where=text("event_id IS NOT NULL")),
    Index(
        "ix_jobs_tenant_id_ordering_key_seq",
        "tenant_id",
        "ordering_key",
        "seq",
        postgresql_where=text("ordering_key IS NOT NULL"),
    ),
    # The reconciler's release of parked jobs by due time, and a lane's release by key.
    Index("ix_jobs_parked_due", "next_attempt_at", postgresql_where=text("parked_on IS NOT NULL")),
    Index(
        "ix_jobs_tenant_id_parked_on",
        "tenant_id",
        "parked_on",
        postgresql_where=text("parked_on IS NOT NULL AND parked_on <> ''"),
    ),
)
