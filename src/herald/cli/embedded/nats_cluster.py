"""A routed JetStream cluster of embedded nats-server nodes on this machine (`herald up
--nats-cluster N`, the cluster tests): what production runs, on one machine."""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from pathlib import Path
from typing import Any

from herald.cli.embedded.nats import DEFAULT_SYNC_INTERVAL, EmbeddedNats
from herald.cli.embedded.ports import HOST, PORT_ATTEMPTS, free_port
from herald.cli.embedded.processes import START_TIMEOUT_S

log = logging.getLogger(__name__)


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
        self,
        data_dir: Path,
        size: int = 3,
        name: str = "herald",
        config_file: Path | None = None,
        user_file: Path | None = None,
        sync_interval: str = DEFAULT_SYNC_INTERVAL,
    ) -> None:
        """`config_file`, `user_file` and `sync_interval`: as EmbeddedNats's, for every node."""
        self._auth = {"config_file": config_file, "user_file": user_file}
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
                    **self._auth,
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
