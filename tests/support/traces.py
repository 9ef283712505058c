"""Where a value still appears after it should be gone: the database's data as `pg_dump` writes
it, and every message of the run's streams, KV buckets and object stores (subject, headers, data)."""

from __future__ import annotations

import asyncio
import subprocess

import nats
from nats.js.errors import NotFoundError
from sqlalchemy.engine import make_url

from herald.config import nats_servers


def dump_lines_with(database_url: str, needle: str) -> list[str]:
    """The lines of `pg_dump --data-only` of the database that contain `needle`."""
    url = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    dump = subprocess.run(
        ["pg_dump", "--data-only", "--no-owner", "-d", url], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "COPY public.jobs" in dump, "the dump holds no jobs table: not the ledger's database?"
    return [line for line in dump.splitlines() if needle in line]


async def _bus_messages_with(nats_url: str, prefix: str, needle: bytes) -> list[str]:
    nc = await nats.connect(nats_servers(nats_url))
    found: list[str] = []
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            name = info.config.name or ""
            if not any(name.startswith(f"{kind}{prefix.upper()}") for kind in ("", "KV_", "OBJ_")):
                continue
            seq = 1
            while True:
                try:
                    message = await js.get_msg(name, seq, subject=">", next=True)
                except NotFoundError:
                    break
                headers = repr(message.headers or {}).encode()
                if needle in (message.subject or "").encode() + headers + (message.data or b""):
                    found.append(f"{name} #{message.seq} {message.subject}")
                seq = (message.seq or seq) + 1
    finally:
        await nc.close()
    return found


def bus_messages_with(nats_url: str, prefix: str, needle: str) -> list[str]:
    """Every stored message of the run's streams (`prefix`) whose subject, headers or data hold `needle`."""
    return asyncio.run(_bus_messages_with(nats_url, prefix, needle.encode()))
