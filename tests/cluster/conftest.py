"""A three-node JetStream cluster (tests/cluster/): what production runs, three nats-server
nodes with routes and R3 streams, and a stack on it with two processes of every service, on
a PostgreSQL of its own (the fault test restarts it). All are started once for the package
and shared by its tests; the fault test runs last (its file name sorts last). The bus is
authenticated as in production: each service connects as its own user (herald.bus.permissions),
the tests as the admin user; and the services call each other over mutual TLS (herald.grpcio.mesh)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import nats
import pytest
from nats.aio.client import Client

from herald.bus.connection import read_user_file
from herald.cli.bus_auth import BusUsers
from herald.cli.embedded import EmbeddedNatsCluster, EmbeddedPostgres, free_port
from herald.cli.embedded.ports import PORT_RANGE_ENV, port_range
from herald.cli.stack import Stack
from herald.cli.stack_config import StackConfig
from herald.config import nats_servers
from tests.conftest import TEST_ENV
from tests.support.api import TenantKey, unlimited_tenant
from tests.support.infra import separate_database
from tests.test_herald_up import HERALD

NODES = 3
REPLICAS = 2
# The second ledger mints its job ids from a clock this far behind (tests/support/skewed_clock),
# as two machines' clocks may differ: jobs' order must come from the database, not from ids.
LEDGER_CLOCK_SKEW_S = -5.0
SKEWED_CLOCK = Path(__file__).parent.parent / "support" / "skewed_clock"


@dataclass
class HeraldUp:
    process: subprocess.Popen[bytes]
    data_dir: Path
    output: Path


@pytest.fixture(scope="package")
def herald_up_started(work_dir: Path, infra: dict[str, str]) -> Iterator[HeraldUp]:
    """`herald up --nats-cluster 3 --replicas 2` started in the background and not waited for: a
    test that asks for it before `cluster_stack` has it come up while the package's own stack
    does (each start-up is mostly one process importing at a time: two of them share two cores)."""
    data_dir = work_dir / "up-cluster"
    output = work_dir / "up-cluster.out"
    # `herald up` chooses its ports while this lane chooses the package stack's: each from its own
    # half of the lane's range, or both may take one port (seen in CI: the gateway's, "address
    # already in use"), since neither knows what the other handed out and has not bound yet.
    lane_ports = os.environ.get(PORT_RANGE_ENV)
    low, high = port_range()
    os.environ[PORT_RANGE_ENV] = f"{low}-{(low + high) // 2}"
    try:
        with separate_database(infra["database_url"], "up_cluster") as database_url, output.open("wb") as out:
            env = {k: v for k, v in os.environ.items() if k != "NATS_URL"} | {
                "DATABASE_URL": database_url,
                PORT_RANGE_ENV: f"{(low + high) // 2}-{high}",
            }
            args = ["up", "--data-dir", str(data_dir), "--http-port", "0", "--grpc-port", "0"]
            up = subprocess.Popen(
                [HERALD, *args, "--nats-cluster", str(NODES), "--replicas", str(REPLICAS)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
            try:
                yield HeraldUp(up, data_dir, output)
            finally:
                if up.poll() is None:  # the test stops it itself; this is for a test that failed first
                    up.send_signal(signal.SIGINT)
                    up.wait(timeout=120)
    finally:
        if lane_ports is None:
            os.environ.pop(PORT_RANGE_ENV, None)
        else:
            os.environ[PORT_RANGE_ENV] = lane_ports


@pytest.fixture(scope="package")
def cluster_users(work_dir: Path) -> BusUsers:
    """The bus users of the package's cluster (its stack's prefix)."""
    return BusUsers(work_dir / "nats-users", "cluster")


async def admin_connection(url: str, admin_file: Path) -> Client:
    """A connection to the cluster as its admin user (operators' tools, the tests)."""
    user, password = read_user_file(admin_file)
    return await nats.connect(
        nats_servers(url), user=user, password=password, connect_timeout=2, max_reconnect_attempts=2
    )


@pytest.fixture(scope="package")
def nats_cluster(work_dir: Path, cluster_users: BusUsers) -> Iterator[EmbeddedNatsCluster]:
    cluster = EmbeddedNatsCluster(work_dir / "nats-cluster", size=NODES, **cluster_users.server_options())
    cluster.start()
    yield cluster
    cluster.stop()


@dataclass
class ClusterStack:
    stack: Stack
    cluster: EmbeddedNatsCluster
    postgres: EmbeddedPostgres
    database_url: str
    users: BusUsers

    @property
    def gateway(self) -> str:
        return self.stack.endpoints["gateway_http"]

    @property
    def gateways(self) -> list[str]:
        """Every gateway process's HTTP address (what a load balancer would spread over)."""
        return [
            f"http://127.0.0.1:{p.env['HERALD_HTTP_PORT']}" for p in self.stack.services.values() if p.name == "gateway"
        ]

    @property
    def bus_prefix(self) -> str:
        return self.stack.config.bus_prefix

    @property
    def work_stream(self) -> str:
        return f"{self.bus_prefix}_work".upper()

    @property
    def operator_token(self) -> str:
        return Path(self.stack.endpoints["operator_token_file"]).read_text().strip()

    def counted(self, service: str, metric: str) -> dict[str, float]:
        """`metric` summed over its labels, per process of `service` (the replicas' split of the work)."""
        found: dict[str, float] = {}
        for name, process in self.stack.services.items():
            if process.name != service:
                continue
            text = httpx.get(f"http://127.0.0.1:{process.env['HERALD_METRICS_PORT']}/metrics", timeout=10).text
            found[name] = sum(
                float(line.rsplit(" ", 1)[1])
                for line in text.splitlines()
                if line.startswith(f"{metric}{{") or line.startswith(f"{metric} ")
            )
        return found

    def leader(self, changed_from: str = "", timeout: float = 30.0) -> tuple[str, float]:
        """The work stream's leader (once it is not `changed_from`), and how long that took to see."""
        started = time.monotonic()
        while True:
            try:
                found = asyncio.run(_leader(self.cluster.url, self.work_stream, self.users.admin_file))
            except Exception:
                found = ""
            if found and found != changed_from:
                return found, time.monotonic() - started
            assert time.monotonic() - started < timeout, f"no new leader of {self.work_stream} after {timeout}s"
            time.sleep(0.1)

    def step_down(self) -> None:
        """The work stream's leader hands over cleanly (what a rolling restart of its node does)."""
        asyncio.run(_step_down(self.cluster.url, self.work_stream, self.users.admin_file))

    def mesh_channel(self, address: str, service: str) -> grpc.Channel:
        """A channel to an internal service, presenting the router's mesh certificate (the stack's
        services take no caller without one)."""
        mesh = self.stack.data_dir / "mesh"
        credentials = grpc.ssl_channel_credentials(
            (mesh / "ca.crt").read_bytes(),
            private_key=(mesh / "router.key").read_bytes(),
            certificate_chain=(mesh / "router.crt").read_bytes(),
        )
        return grpc.secure_channel(
            address, credentials, options=[("grpc.ssl_target_name_override", f"herald-{service}")]
        )

    def tenant(self, name: str) -> TenantKey:
        """A STARTUP tenant without rate limit or monthly quota, so only the faults can refuse it."""
        created = unlimited_tenant(self.gateway, self.operator_token, name, timeout=30)
        # Both gateways learn the new limits through the ledger's change notification.
        time.sleep(0.5)
        return created


async def _leader(url: str, stream: str, admin_file: Path) -> str:
    nc = await admin_connection(url, admin_file)
    try:
        info = await nc.jetstream(timeout=5).stream_info(stream)
        return (info.cluster.leader if info.cluster else "") or ""
    finally:
        await nc.close()


async def _step_down(url: str, stream: str, admin_file: Path) -> None:
    nc = await admin_connection(url, admin_file)
    try:
        answer = await nc.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}", b"", timeout=10)
        assert json.loads(answer.data).get("success") is True, answer.data
    finally:
        await nc.close()


@pytest.fixture(scope="package")
def cluster_stack(work_dir: Path, nats_cluster: EmbeddedNatsCluster, cluster_users: BusUsers) -> Iterator[ClusterStack]:
    # On a port kept across restarts, so the services find it again after the fault test restarts it.
    postgres = EmbeddedPostgres(work_dir / "cluster-pg", port=free_port())
    database_url = postgres.start()
    try:
        stack = Stack(
            StackConfig(
                data_dir=work_dir / "cluster-stack",
                nats_url=nats_cluster.url,
                bus_users=cluster_users,
                # The services call each other over mutual TLS, as in production.
                mesh_tls=True,
                database_url=database_url,
                gateway_http_port=0,
                gateway_grpc_port=0,
                bus_prefix="cluster",
                env={**TEST_ENV, "HERALD_STREAM_REPLICAS": str(NODES)},
                replicas=REPLICAS,
                replica_env={
                    "ledger-1": {
                        "PYTHONPATH": os.pathsep.join(
                            p for p in (str(SKEWED_CLOCK), os.environ.get("PYTHONPATH")) if p
                        ),
                        "HERALD_TEST_ID_CLOCK_SKEW_S": str(LEDGER_CLOCK_SKEW_S),
                    }
                },
            )
        )
        stack.start()
        stack.supervise_in_background()
        try:
            yield ClusterStack(stack, nats_cluster, postgres, database_url, cluster_users)
        finally:
            stack.stop()
    finally:
        postgres.stop()
