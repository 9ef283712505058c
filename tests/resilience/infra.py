"""Infrastructure the resilience suite may break: its own PostgreSQL and its own
nats-server, both child processes on fixed ports, so a restarted server is found at
the same URL by services that reconnect.

`EmbeddedNats` takes a `port`. `EmbeddedPostgres` does not: every start asks the
kernel for a new free port, so a restarted cluster would come back on another port and
the ledger (whose DATABASE_URL is fixed at spawn) could never reach it again.
`PinnedPostgres` keeps the wheel's own start logic but starts on one port chosen once;
the data directory is kept, so a restart is a real stop (fast shutdown) and start of
the same cluster.
"""

from __future__ import annotations

import time
from pathlib import Path

from herald.cli.embedded import (
    EmbeddedNats,
    EmbeddedPostgres,
    _grant_traverse,
    _postgres_bin_dir,
    _wait_gone,
    free_port,
)

_HOST = "127.0.0.1"


class PinnedPostgres(EmbeddedPostgres):
    """EmbeddedPostgres on one port for its whole life, across stop() and start()."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        super().__init__(data_dir)
        self.port = port or free_port()
        self.stop_failures: list[str] = []

    def _start_server(self, bin_dir: Path) -> int:
        options = f"-h {_HOST} -p {self.port} -c unix_socket_directories=''"
        args = ["start", "-D", str(self._pgdata), "-w", "-t", "30", "-l", str(self.log_path), "-o", options]
        # Right after a stop the port may still be held for a moment: try for a few seconds.
        deadline = time.monotonic() + 10
        while True:
            log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
            result = self._run(bin_dir / "pg_ctl", args, check=False, new_session=True)
            if result.returncode == 0:
                return self.port
            if time.monotonic() > deadline:
                tail = self.log_path.read_bytes()[log_offset:].decode(errors="replace")
                raise RuntimeError(f"PostgreSQL failed to start on port {self.port}:\n{result.stdout}\n{tail}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Fast shutdown through pg_ctl, as the wheel does, keeping pg_ctl's own words when it fails
        (the wheel then falls back to signals after a 10 s wait, which would stretch the fault window)."""
        pid = self.pid
        if pid is None:
            return
        # pytest takes group and other permissions off /tmp/pytest-of-<user> whenever a session
        # starts (another one on the same machine, say): give the service account its way back in.
        _grant_traverse(self._pgdata.parent)
        result = self._run(
            _postgres_bin_dir() / "pg_ctl",
            ["stop", "-D", str(self._pgdata), "-m", "fast", "-w", "-t", "30"],
            check=False,
        )
        if result.returncode == 0 and _wait_gone(pid, 10):
            self._pid = self._url = None
            return
        self.stop_failures.append(f"pg_ctl stop exited {result.returncode}: {result.stdout.strip()[-300:]}")
        super().stop()


class PrivateInfra:
    """A PostgreSQL and a nats-server that only this suite uses, and may restart."""

    def __init__(self, data_dir: Path) -> None:
        self.postgres = PinnedPostgres(data_dir / "pg")
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

    def stop(self) -> None:
        try:
            self.nats.stop()
        finally:
            self.postgres.stop()
