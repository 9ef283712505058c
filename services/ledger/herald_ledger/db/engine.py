"""The async engine (SQLAlchemy 2 on asyncpg)."""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


def async_url(database_url: str) -> str:
    """Accepts the plain `postgresql://` form every tool uses and selects asyncpg."""
    url = make_url(database_url)
    return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def create_engine(database_url: str, pool_size: int = 20) -> AsyncEngine:
    """A steady pool: overflow connections that open and close under load cost
    PostgreSQL a backend start each (profiled: it doubled PostgreSQL's CPU), and a
    pre-ping per checkout costs a round trip; a dead connection is discarded on error.

    Last in, first out: the connection returned last is the next one handed out, so the few a
    load needs at once stay warm (their prepared statements made, their PostgreSQL backend's
    caches hot) while the rest of the pool idles, instead of every call taking the connection
    idle longest and each of the twenty preparing every statement again."""
    return create_async_engine(
        async_url(database_url), pool_size=pool_size, max_overflow=4, pool_recycle=1800, pool_use_lifo=True
    )
