"""The infrastructure a test run uses, isolated from every other run.

With DATABASE_URL / NATS_URL set (CI sets them to the machine's servers), a run
creates its own database and uses its own bus prefix on those servers; without
them it starts embedded ones. Everything it made is removed at the end.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import nats
from sqlalchemy.engine import make_url

from herald.cli.embedded import EmbeddedNats, EmbeddedPostgres
from herald.cli.stack import Stack
from herald.cli.stack_config import StackConfig
from herald.config import nats_servers


def with_database(url: str, database: str) -> str:
    return make_url(url).set(database=database).render_as_string(hide_password=False)


async def _admin(url: str, statement: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def _delete_streams(nats_url: str, prefix: str) -> None:
    nc = await nats.connect(nats_servers(nats_url))
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            name = info.config.name or ""
            # Streams, and the KV bucket and object store that live in streams named after them.
            if any(name.startswith(f"{kind}{prefix.upper()}") for kind in ("", "KV_", "OBJ_")):
                await js.delete_stream(name)
    finally:
        await nc.close()


@contextmanager
def isolated_infra(work_dir: Path) -> Iterator[dict[str, str]]:
    """Yields {"database_url", "nats_url", "bus_prefix"} for this run alone."""
    run_id = secrets.token_hex(4)
    embedded: list[Any] = []
    server_url = os.environ.get("DATABASE_URL")
    if not server_url:
        postgres = EmbeddedPostgres(work_dir / "infra")
        server_url = postgres.start()
        embedded.append(postgres)
    nats_url = os.environ.get("NATS_URL")
    if not nats_url:
        server = EmbeddedNats(work_dir / "infra")
        nats_url = server.start()
        embedded.append(server)
    database = f"herald_test_{run_id}"
    asyncio.run(_admin(with_database(server_url, "postgres"), f'CREATE DATABASE "{database}"'))
    prefix = f"t{run_id}"
    try:
        yield {"database_url": with_database(server_url, database), "nats_url": nats_url, "bus_prefix": prefix}
    finally:
        try:
            asyncio.run(_delete_streams(nats_url, prefix))
        finally:
            asyncio.run(
                _admin(with_database(server_url, "postgres"), f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            )
            for thing in reversed(embedded):
                thing.stop()


@contextmanager
def separate_database(database_url: str, suffix: str) -> Iterator[str]:
    """A database of its own beside the run's, for a second stack: two stacks sharing
    one ledger would each republish the other's unpublished jobs (as two deployments
    sharing a database would)."""
    name = f"{make_url(database_url).database}_{suffix}"
    asyncio.run(_admin(with_database(database_url, "postgres"), f'CREATE DATABASE "{name}"'))
    try:
        yield with_database(database_url, name)
    finally:
        asyncio.run(_admin(with_database(database_url, "postgres"), f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def query(database_url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    """Reads the ledger's tables directly, to check what a user cannot see through the API."""

    async def run() -> list[asyncpg.Record]:
        connection = await asyncpg.connect(database_url)
        try:
            return list(await connection.fetch(sql, *args))
        finally:
            await connection.close()

    return asyncio.run(run())


@contextmanager
def separate_stack(
    work_dir: Path,
    infra: dict[str, str],
    name: str,
    env: dict[str, str],
    service_env: dict[str, dict[str, str]] | None = None,
) -> Iterator[Stack]:
    """A stack of its own beside the session's: its own database and bus prefix (both named
    after `name`), the run's NATS, `env` for every service and `service_env` per service."""
    with separate_database(infra["database_url"], name) as database_url:
        config = StackConfig(
            data_dir=work_dir / f"{name}-stack",
            nats_url=infra["nats_url"],
            database_url=database_url,
            gateway_http_port=0,
            gateway_grpc_port=0,
            bus_prefix=infra["bus_prefix"] + name,
            env=env,
            service_env=service_env or {},
        )
        stack = Stack(config)
        try:
            stack.start()
        except RuntimeError:
            # A free port picked for it can be taken by another process on a shared machine.
            stack = Stack(config)
            stack.start()
        stack.supervise_in_background()
        try:
            yield stack
        finally:
            stack.stop()
