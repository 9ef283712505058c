"""The one MetaData of the ledger's tables, the columns many of them share, and the two
shapes of a tenant's table (`tenant_rows`: rows with their own UUID id; `per_tenant`: keyed
by the tenant first)."""

from typing import Any

from sqlalchemy import Column, DateTime, ForeignKey, MetaData, Table, func
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.schema import SchemaItem

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def uuid_id_column() -> Column[Any]:
    return Column("id", UUID(as_uuid=True), primary_key=True)


def tenant_id_column(primary_key: bool = False, index: bool = False) -> Column[Any]:
    """The owning tenant; its rows go with it."""
    tenant = ForeignKey("tenants.id", ondelete="CASCADE")
    if primary_key:
        return Column("tenant_id", UUID(as_uuid=True), tenant, primary_key=True)
    return Column("tenant_id", UUID(as_uuid=True), tenant, nullable=False, index=index)


def created_at_column() -> Column[Any]:
    return Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now())


def updated_at_column() -> Column[Any]:
    return Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now())


def tenant_rows(name: str, *items: SchemaItem, tenant_index: bool = False) -> Table:
    """A table of a tenant's rows, each with its own UUID: `id`, `tenant_id` (indexed with
    `tenant_index`), then `items`."""
    return Table(name, metadata, uuid_id_column(), tenant_id_column(index=tenant_index), *items)


def per_tenant(name: str, *items: SchemaItem) -> Table:
    """A table keyed by the tenant first: `tenant_id`, then `items` (the rest of the key among them)."""
    return Table(name, metadata, tenant_id_column(primary_key=True), *items)
