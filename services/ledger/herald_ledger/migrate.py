"""Applies the Alembic migrations: at ledger start, and by `herald migrate`.

Concurrent ledger replicas starting together serialise on an advisory lock, so
exactly one of them migrates and the others find the schema current.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import asyncpg
from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url

from herald.config import get_settings

_MIGRATION_LOCK = 0x4E52414C44  # "HERALD" in spirit; any constant shared by all replicas


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def _upgrade_in_thread(database_url: str) -> None:
    """Alembic's env.py runs its own event loop, so it gets a thread of its own."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            command.upgrade(alembic_config(database_url), "head")
        except BaseException as error:
            errors.append(error)

    worker = threading.Thread(target=target, name="alembic")
    worker.start()
    worker.join()
    if errors:
        raise errors[0]


async def upgrade(database_url: str) -> None:
    url = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    connection = await asyncpg.connect(url)
    try:
        await connection.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
        await asyncio.to_thread(_upgrade_in_thread, database_url)
    finally:
        await connection.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
        await connection.close()


def main() -> None:
    asyncio.run(upgrade(get_settings().database_url))
    print("database schema is current")
