"""Named operators: created with a token's SHA-256, revoked by name, looked up by the hash."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import operators

OPERATOR_COLUMNS = [c for c in operators.c if c.name != "token_hash"]


async def create(conn: AsyncConnection, name: str, token_hash: bytes) -> Row[Any] | None:
    """None: the name is taken (by an active or a revoked operator: names are never reused)."""
    query = (
        insert(operators)
        .values(id=new_id(), name=name, token_hash=token_hash)
        .on_conflict_do_nothing()
        .returning(*OPERATOR_COLUMNS)
    )
    return (await conn.execute(query)).first()


async def list_all(conn: AsyncConnection) -> list[Row[Any]]:
    return list((await conn.execute(select(*OPERATOR_COLUMNS).order_by(operators.c.created_at))).all())


async def revoke(conn: AsyncConnection, name: str) -> Row[Any] | None:
    query = (
        update(operators)
        .where(operators.c.name == name)
        .values(revoked_at=func.coalesce(operators.c.revoked_at, func.now()))
        .returning(*OPERATOR_COLUMNS)
    )
    return (await conn.execute(query)).first()


async def authenticate(conn: AsyncConnection, token_hash: bytes) -> Row[Any] | None:
    """The active operator with this token's hash, its last use recorded."""
    query = (
        update(operators)
        .where(and_(operators.c.token_hash == token_hash, operators.c.revoked_at.is_(None)))
        .values(last_used_at=func.now())
        .returning(*OPERATOR_COLUMNS)
    )
    return (await conn.execute(query)).first()
