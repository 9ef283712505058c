from sqlalchemy import Column
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import per_tenant

# How far retention has expired a tenant's payloads: its jobs and events with ids below these are
# done (herald_ledger.retention), so a round resumes there instead of scanning kept rows again.
payload_expiry = per_tenant(
    "payload_expiry",
    Column("jobs_before", UUID(as_uuid=True)),
    Column("events_before", UUID(as_uuid=True)),
)
