"""What `herald up` keeps running: its services and its embedded servers, restarted with backoff
when they die, and a status file (`<data dir>/status.json`) that the banner and `herald status`
read: what runs, under which pid, and how often it was restarted.

A service is a child process (`herald.cli.stack.ServiceProcess`); an embedded server is an
`EmbeddedNats` node or the `EmbeddedPostgres` cluster, each on a port pinned for the stack's life
so the services, which keep their URLs, find it again after a restart.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psutil  # type: ignore[import-untyped]

log = logging.getLogger("herald.up")

MAX_BACKOFF_S = 30.0
STABLE_AFTER_S = 60.0
# The status file is written when something changes, and at least this often (its age tells
# `herald status` whether the supervisor still runs).
STATUS_EVERY_S = 5.0
STATUS_FILE = "status.json"


def backoff_s(failures: int) -> float:
    """The wait before the next restart of something that failed `failures` times in a row."""
    return float(min(0.5 * 2**failures, MAX_BACKOFF_S))


class Service(Protocol):
    """What `restart_dead` reads and writes of a service (herald.cli.stack.ServiceProcess)."""

    name: str
    process: subprocess.Popen[bytes] | None
    started_at: float
    failures: int
    restart_at: float
    restarts: int


def restart_dead(services: Iterable[Service], spawn: Callable[[Any], None], now: float) -> bool:
    """Restarts each service that died once its backoff is over; whether one was restarted."""
    changed = False
    for service in services:
        process = service.process
        if process is None or process.poll() is None:
            if process is not None and now - service.started_at > STABLE_AFTER_S:
                service.failures = 0
            continue
        if service.restart_at == 0.0:
            delay = backoff_s(service.failures)
            service.failures += 1
            service.restart_at = now + delay
            log.warning(
                "service exited; restarting",
                extra={"service": service.name, "code": process.returncode, "backoff_s": delay},
            )
        elif now >= service.restart_at:
            service.restart_at = 0.0
            service.restarts += 1
            spawn(service)
            changed = True
    return changed


class Restartable(Protocol):
    @property
    def pid(self) -> int | None: ...

    def exited(self) -> bool: ...

    def restart(self) -> str: ...


@dataclass
class EmbeddedWatch:
    """One embedded server under supervision."""

    name: str
    server: Restartable
    failures: int = 0
    restarts: int = 0
    restart_at: float = 0.0
    started_at: float = 0.0
    down: bool = False

    def check(self, now: float) -> bool:
        """Restarts the server once its backoff is over (again, with a longer one, when a restart
        fails); whether anything changed."""
        if not self.down and not self.server.exited():
            if self.started_at and now - self.started_at > STABLE_AFTER_S:
                self.failures = 0
            return False
        if not self.down:
            self.down = True
            self._schedule(now)
            return True
        if now < self.restart_at:
            return False
        try:
            self.server.restart()
        except Exception as error:
            log.error("embedded server did not restart", extra={"server": self.name, "error": repr(error)})
            self._schedule(now)
            return True
        self.down = False
        self.restarts += 1
        self.started_at = time.monotonic()
        log.warning(
            "embedded server restarted", extra={"server": self.name, "pid": self.server.pid, "restarts": self.restarts}
        )
        return True

    def _schedule(self, now: float) -> None:
        delay = backoff_s(self.failures)
        self.failures += 1
        self.restart_at = now + delay
        log.warning("embedded server down; restarting", extra={"server": self.name, "backoff_s": delay})


def watches(nats_nodes: Sequence[Restartable], postgres: Restartable | None) -> list[EmbeddedWatch]:
    """The embedded servers a stack started, named as the status shows them."""
    named = [(f"nats-server n{i}" if len(nats_nodes) > 1 else "nats-server", n) for i, n in enumerate(nats_nodes)]
    found = [EmbeddedWatch(name, node) for name, node in named]
    return found + ([EmbeddedWatch("postgresql", postgres)] if postgres is not None else [])


def component(name: str, kind: str, pid: int | None, running: bool, restarts: int) -> dict[str, Any]:
    return {"name": name, "kind": kind, "pid": pid, "running": running, "restarts": restarts}


def components(embedded: Iterable[EmbeddedWatch], services: Mapping[str, Service]) -> list[dict[str, Any]]:
    """What runs, for the banner and `herald status`."""
    found = [component(w.name, "embedded", w.server.pid, not w.down, w.restarts) for w in embedded]
    for name, s in services.items():
        alive = s.process is not None and s.process.poll() is None
        found.append(component(name, "service", s.process.pid if s.process else None, alive, s.restarts))
    return found


def write_status(data_dir: Path, components: list[dict[str, Any]]) -> None:
    """Atomically, so `herald status` never reads half a file."""
    status = {"supervisor_pid": os.getpid(), "written_at": time.time(), "components": components}
    partial = data_dir / f".{STATUS_FILE}.tmp"
    partial.write_text(json.dumps(status, indent=2) + "\n")
    partial.replace(data_dir / STATUS_FILE)


def read_status(data_dir: Path) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = json.loads((data_dir / STATUS_FILE).read_text())
        return found
    except (OSError, ValueError):
        return None


def supervisor_alive(status: dict[str, Any]) -> bool:
    pid = status.get("supervisor_pid")
    if not isinstance(pid, int):
        return False
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def status_lines(components: list[dict[str, Any]]) -> list[str]:
    """One line per component: what it is, whether it runs, its pid, its restarts."""
    width = max((len(c["name"]) for c in components), default=0)
    lines = []
    for c in components:
        state = "running" if c["running"] else "restarting"
        restarts = c["restarts"]
        restarted = f"restarted {restarts} time{'s' if restarts != 1 else ''}" if restarts else "never restarted"
        lines.append(f"  {c['name']:<{width}}  {c['kind']:<8}  {state:<10}  pid {c['pid'] or '-':<8}  {restarted}")
    return lines
