"""The async engine (SQLAlchemy 2 on asyncpg)."""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


def async_url(database_url: str) -> str:
    """Accepts the plain `postgresql://` form every tool uses and selects asyncpg."""
    url = make_url(database_url)
    return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def create_engine(database_url: str, pool_size: int = 10) -> AsyncEngine:
    return create_async_engine(async_url(database_url), pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)
