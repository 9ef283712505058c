from sqlalchemy import Boolean, Column, DateTime, ForeignKey, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import created_at_column, tenant_rows, updated_at_column

# A tenant's sending domains, each registered with one of its providers. While
# `verified` is false, admission refuses emails whose from-address is in the domain.
# The provider reference survives the provider's deletion as NULL: the domain keeps
# blocking until the tenant deletes or re-registers it.
sending_domains = tenant_rows(
    "sending_domains",
    Column("name", Text, nullable=False),
    Column("provider_id", UUID(as_uuid=True), ForeignKey("provider_credentials.id", ondelete="SET NULL")),
    Column("provider", Text, nullable=False),
    Column("provider_domain_id", Text, nullable=False),
    Column("verified", Boolean, nullable=False, server_default="false"),
    Column("records", JSONB, nullable=False, server_default="[]"),
    Column("provider_status", Text, nullable=False, server_default=""),
    created_at_column(),
    updated_at_column(),
    Column("verified_at", DateTime(timezone=True)),
    UniqueConstraint("tenant_id", "name"),
)
