"""The asyncpg connection under a SQLAlchemy one, for the hot statements.

asyncpg prepares each statement once per connection and caches it; called directly,
a statement skips SQLAlchemy's compilation, result processing and greenlet hop, which
the profile showed to cost more than the statement itself on the hot path (CreateJobs'
admission and insert, AdvanceDeliveries' outcomes and starts). A statement sent to the
driver runs in the caller's transaction: `in_transaction` begins it on the driver when
SQLAlchemy has not yet (it begins lazily, at its first statement), so a transaction of
driver statements only costs no SQLAlchemy statement at all.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection


async def in_transaction(conn: AsyncConnection) -> Any:
    """The driver connection of `conn`, inside the transaction `conn` has begun
    (`engine.begin()`); SQLAlchemy's commit or rollback ends it as usual. Typed Any:
    asyncpg ships no type hints."""
    if not conn.in_transaction():
        raise RuntimeError("the driver is used only inside a transaction (engine.begin())")
    raw = await conn.get_raw_connection()
    driver = raw.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    if not driver.is_in_transaction():
        # The dialect's adapter begins its transaction at its first statement; begin it the
        # same way here, so the adapter knows it and its commit / rollback end it.
        adapter: Any = raw.dbapi_connection
        async with adapter._execute_mutex:
            if adapter._transaction is None:
                await adapter._start_transaction()
    return driver


async def driver_of(conn: AsyncConnection) -> Any:
    """The driver connection of `conn`: in its transaction when it has one (see
    `in_transaction`); else (`engine.connect()`, nothing begun) a statement on it runs as
    its own implicit transaction, which is what a lone read wants."""
    if conn.in_transaction():
        return await in_transaction(conn)
    driver = (await conn.get_raw_connection()).driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    return driver
