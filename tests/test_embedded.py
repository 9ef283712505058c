"""The embedded servers behind `herald up`: reachable, persistent across restarts, and gone after stop()."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import nats
import psutil
import pytest

from herald.cli.embedded import EmbeddedNats, EmbeddedPostgres, free_port
from tests.test_herald_up import refused_without_password

# The machine's own servers; the embedded ones must never take (or stop) them.
SYSTEM_PORTS = {4222, 5432}


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "herald"


@pytest.fixture
def embedded_nats(data_dir: Path) -> Iterator[EmbeddedNats]:
    server = EmbeddedNats(data_dir)
    yield server
    server.stop()


@pytest.fixture
def embedded_postgres(data_dir: Path) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(data_dir)
    yield server
    server.stop()


def test_free_port_is_bindable_on_loopback() -> None:
    port = free_port()
    assert port not in SYSTEM_PORTS
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


async def test_nats_serves_jetstream_keeps_streams_stops(embedded_nats: EmbeddedNats, data_dir: Path) -> None:
    url = embedded_nats.start()
    assert url.startswith("nats://127.0.0.1:")
    assert _port(url) not in SYSTEM_PORTS
    assert (data_dir / "nats" / "jetstream").is_dir()

    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await js.account_info()
        await js.add_stream(name="EMBEDDED_TEST", subjects=["embedded.test"])
        await js.publish("embedded.test", b"kept")
    finally:
        await nc.close()

    pid = embedded_nats.pid
    assert pid is not None
    embedded_nats.stop()
    assert _gone(pid)
    embedded_nats.stop()  # idempotent

    # Same store after a restart, on whatever port is free now.
    url = embedded_nats.start()
    nc = await nats.connect(url)
    try:
        info = await nc.jetstream().stream_info("EMBEDDED_TEST")
        assert info.state.messages == 1
    finally:
        await nc.close()


async def test_postgres_serves_herald_and_keeps_data_across_restarts(
    embedded_postgres: EmbeddedPostgres, data_dir: Path
) -> None:
    started = time.monotonic()
    url = embedded_postgres.start()
    first_start_s = time.monotonic() - started
    assert url.startswith("postgresql://postgres:")
    assert url.endswith("/herald")
    assert _port(url) not in SYSTEM_PORTS
    # The superuser's password is generated at the first start, kept for the owner's eyes only,
    # and required of every connection.
    password = embedded_postgres.password_file.read_text().strip()
    assert f"postgres:{password}@127.0.0.1:" in url
    assert embedded_postgres.password_file.stat().st_mode & 0o777 == 0o600
    assert await refused_without_password(url) == "InvalidPasswordError"

    conn = await asyncpg.connect(url)
    try:
        assert await conn.fetchval("select 1") == 1
        assert await conn.fetchval("select current_database()") == "herald"
        await conn.execute("create table kept (v text)")
        await conn.execute("insert into kept values ('survives a restart')")
    finally:
        await conn.close()

    pid = embedded_postgres.pid
    assert pid is not None
    embedded_postgres.stop()
    assert _gone(pid)
    embedded_postgres.stop()  # idempotent

    # A fresh object, as a new `herald up` would make: no initdb, same data.
    again = EmbeddedPostgres(data_dir)
    started = time.monotonic()
    url = again.start()
    restart_s = time.monotonic() - started
    try:
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("select v from kept") == "survives a restart"
        finally:
            await conn.close()
    finally:
        pid = again.pid
        again.stop()
    assert pid is not None
    assert _gone(pid)
    print(f"postgres first start {first_start_s:.2f}s, restart {restart_s:.2f}s")


async def test_postgres_on_a_pinned_port_comes_back_on_it(data_dir: Path) -> None:
    """A client whose URL is fixed (a service spawned with DATABASE_URL) finds a restarted cluster again."""
    port = free_port()
    server = EmbeddedPostgres(data_dir, port=port)
    try:
        url = server.start()
        assert _port(url) == port
        server.stop()
        assert server.start() == url
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("select 1") == 1
        finally:
            await conn.close()
    finally:
        server.stop()
    assert not server.stop_failures


def _jetstream_config(server: EmbeddedNats) -> dict[str, object]:
    base = server.ports["monitoring"][0]
    with urllib.request.urlopen(f"{base}/jsz", timeout=5) as answer:
        config: dict[str, object] = json.loads(answer.read())["config"]
        return config


def test_nats_syncs_acknowledged_writes_by_default_and_takes_another_interval(data_dir: Path) -> None:
    """An acknowledged write is on disk before the acknowledgement (`sync_interval: always`),
    unless the operator chooses the periodic sync."""
    durable = EmbeddedNats(data_dir / "always", extra_args=["-m", "-1"])
    periodic = EmbeddedNats(data_dir / "periodic", extra_args=["-m", "-1"], sync_interval="2m")
    try:
        durable.start()
        periodic.start()
        assert _jetstream_config(durable).get("sync_always") is True
        assert not _jetstream_config(periodic).get("sync_always")
        assert _jetstream_config(periodic).get("sync_interval") == 120_000_000_000
    finally:
        durable.stop()
        periodic.stop()
    with pytest.raises(ValueError, match="sync_interval"):
        EmbeddedNats(data_dir / "bad", sync_interval="often").start()
