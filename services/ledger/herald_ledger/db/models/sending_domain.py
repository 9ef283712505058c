from sqlalchemy import Boolean, Column, DateTime, ForeignKey, Table, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import metadata

# A tenant's sending domains, each registered with one of its providers. While
# `verified` is false, admission refuses emails whose from-address is in the domain.
# The provider reference survives the provider's deletion as NULL: the domain keeps
# blocking until the tenant deletes or re-registers it.
sending_domains = Table(
    "sending_domains",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
    Column("name", Text, nullable=False),
    Column("provider_id", UUID(as_uuid=True), ForeignKey("provider_credentials.id", ondelete="SET NULL")),
    Column("provider", Text, nullable=False),
    Column("provider_domain_id", Text, nullable=False),
    Column("verified", Boolean, nullable=False, server_default="false"),
    Column("records", JSONB, nullable=False, server_default="[]"),
    Column("provider_status", Text, nullable=False, server_default=""),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("verified_at", DateTime(timezone=True)),
    UniqueConstraint("tenant_id", "name"),
)
