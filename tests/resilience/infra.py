"""Infrastructure the resilience suite may break: its own PostgreSQL and its own
nats-server, both child processes on fixed ports, so a restarted server is found at
the same URL by services that reconnect.

Both take a `port`, kept across stop() and start(); PostgreSQL's data directory is kept,
so a restart is a real stop (fast shutdown) and start of the same cluster.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from herald.cli.embedded import EmbeddedNats, EmbeddedPostgres, free_port
from herald.cli.embedded.processes import wait_gone


class PrivateInfra:
    """A PostgreSQL and a nats-server that only this suite uses, and may restart."""

    def __init__(self, data_dir: Path) -> None:
        self.postgres = EmbeddedPostgres(data_dir / "pg", port=free_port())
        self.nats = EmbeddedNats(data_dir / "bus", port=free_port())
        self.database_url = ""
        self.nats_url = ""

    def start(self) -> None:
        self.database_url = self.postgres.start()
        self.nats_url = self.nats.start()

    def restart_postgres(self, down_for_s: float = 0.5) -> None:
        self.postgres.stop()
        time.sleep(down_for_s)
        url = self.postgres.start()
        assert url == self.database_url, f"PostgreSQL came back at {url}, not {self.database_url}"

    def restart_nats(self, down_for_s: float = 0.5) -> None:
        self.nats.stop()
        time.sleep(down_for_s)
        url = self.nats.start()
        assert url == self.nats_url, f"NATS came back at {url}, not {self.nats_url}"

    def kill_nats(self, down_for_s: float = 0.5) -> None:
        """SIGKILL, as a crash: nothing is flushed but what JetStream synced (`sync_interval`)."""
        self.nats.kill()
        time.sleep(down_for_s)
        url = self.nats.start()
        assert url == self.nats_url, f"NATS came back at {url}, not {self.nats_url}"

    def stop_postgres_immediately(self, down_for_s: float = 0.5) -> None:
        """PostgreSQL's immediate shutdown (SIGQUIT to the postmaster: no checkpoint, recovery at
        the next start), then a start on the same port and data."""
        pid = self.postgres.pid
        assert pid is not None
        os.kill(pid, signal.SIGQUIT)
        wait_gone(pid, 30)
        time.sleep(down_for_s)
        url = self.postgres.restart()
        assert url == self.database_url, f"PostgreSQL came back at {url}, not {self.database_url}"

    def stop(self) -> None:
        try:
            self.nats.stop()
        finally:
            self.postgres.stop()
