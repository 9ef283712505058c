"""Connecting to NATS so that an outage is ridden out, not fatal: the client
reconnects forever and callers see publish errors they can handle.

`NATS_URL` may list several servers (a cluster): the client picks one, learns the
others from the cluster's gossip too, and moves to another when its server goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client

from herald.bus.permissions import inbox_prefix
from herald.config import Settings, nats_servers

log = logging.getLogger("herald.bus")


def connect_options(settings: Settings) -> dict[str, Any]:
    """The server list, TLS and credentials of `settings`, as nats-py's `connect()` takes them.

    A TLS context is built only when a CA or a client certificate is configured; `tls://` servers
    without either are verified against the system's trust store, which nats-py uses by default.
    """
    options: dict[str, Any] = {"servers": nats_servers(settings.nats_url)}
    if settings.nats_tls_ca_file or settings.nats_tls_cert_file:
        context = ssl.create_default_context(cafile=settings.nats_tls_ca_file or None)
        if settings.nats_tls_cert_file:
            context.load_cert_chain(settings.nats_tls_cert_file, settings.nats_tls_key_file)
        options["tls"] = context
    if settings.nats_creds_file:
        options["user_credentials"] = settings.nats_creds_file
    if settings.nats_user_file:
        user, password = read_user_file(settings.nats_user_file)
        options |= {"user": user, "password": password, "inbox_prefix": inbox_prefix(user)}
    return options


def read_user_file(path: str | Path) -> tuple[str, str]:
    """The `user:password` a NATS user file holds (HERALD_NATS_USER_FILE, endpoints.json's
    `nats_credentials_file`). Read when the process connects: a rotated Secret is taken at its next start."""
    user, separator, password = Path(path).read_text().strip().partition(":")
    if not separator or not user or not password:
        raise ValueError(f"{path}: a NATS user file holds one line, user:password")
    return user, password


async def connect(settings: Settings, name: str) -> Client:
    async def on_disconnect() -> None:
        log.warning("bus disconnected", extra={"client": name})

    async def on_reconnect() -> None:
        log.info("bus reconnected", extra={"client": name})

    async def on_error(error: Exception) -> None:
        log.warning("bus error", extra={"client": name, "error": str(error)})

    return await nats.connect(
        **connect_options(settings),
        name=name,
        allow_reconnect=True,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        connect_timeout=2,
        disconnected_cb=on_disconnect,
        reconnected_cb=on_reconnect,
        error_cb=on_error,
        # Publishes made while disconnected are refused at once instead of
        # buffered in memory, so the outbox (not RAM) holds them.
        pending_size=0,
    )


async def connect_with_retry(settings: Settings, name: str, stopping: asyncio.Event) -> Client:
    """Waits for the bus at start (it may come up after us, as in Kubernetes)."""
    delay = 0.5
    while True:
        try:
            return await connect(settings, name)
        except Exception as error:
            if stopping.is_set():
                raise
            log.warning("bus unreachable at start; retrying", extra={"error": repr(error), "delay_s": delay})
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)


async def close(nc: Client) -> None:
    """Flushes what was published (acks included) and closes. Not `drain()`: with
    pull subscriptions it can wait on an internal queue that never empties, and by
    the time this runs the service's loops have finished their messages."""
    with contextlib.suppress(Exception):
        await nc.flush(timeout=2)
    await nc.close()
