"""The development stack behind `herald up`, also what the end-to-end tests run.

It starts the six services as separate processes (exactly what a container
runs: `herald run NAME`), in dependency order, each waited on until its gRPC
health check answers SERVING; restarts any that dies, with backoff; and stops
them in reverse order. Without NATS_URL / DATABASE_URL it first starts an
embedded nats-server and an embedded PostgreSQL under the data directory, and
restarts them too when they die (herald.cli.supervision).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc

from herald.cli.bus_auth import BusUsers
from herald.cli.data_dir_lock import DataDirLock
from herald.cli.embedded import EmbeddedNats, EmbeddedNatsCluster, EmbeddedPostgres, free_port
from herald.cli.embedded.processes import tail
from herald.cli.mesh_certs import MeshCertificates
from herald.cli.stack_config import Endpoints, StackConfig
from herald.cli.stack_env import allow_loopback, first_operator, kept_secret, service_environment, write_private
from herald.cli.supervision import STATUS_EVERY_S, EmbeddedWatch, components, restart_dead, watches, write_status
from herald.crypto import new_operator_token
from herald.secrets import new_master_key

log = logging.getLogger("herald.up")

# Dependency order: a service starts after those it calls.
SERVICES = ("ledger", "router", "webhook-sender", "email-sender", "verifier", "gateway")
HTTP_SERVICES = ("gateway", "verifier")
HEALTH_TIMEOUT_S = 60.0


@dataclass
class ServiceProcess:
    name: str
    env: dict[str, str]
    grpc_addr: str
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float = 0.0
    restarts: int = 0


class Stack:
    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.data_dir = config.data_dir
        self.nats: EmbeddedNats | EmbeddedNatsCluster | None = None
        self.postgres: EmbeddedPostgres | None = None
        self.services: dict[str, ServiceProcess] = {}
        self.endpoints: Endpoints
        self._lock = threading.RLock()
        self._supervisor: threading.Thread | None = None
        self._stop_supervising = threading.Event()
        self._data_dir_lock = DataDirLock(config.data_dir)
        # The embedded servers (herald.cli.supervision), restarted when they die.
        self.watches: list[EmbeddedWatch] = []
        self._status_at = 0.0

    # ---- start ---------------------------------------------------------

    def start(self) -> Endpoints:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # Before anything under the directory is touched: another stack's servers are not leftovers.
        self._data_dir_lock.acquire()
        (self.data_dir / "logs").mkdir(exist_ok=True)
        nats_url, users = self.config.nats_url, self.config.bus_users
        if not nats_url:
            users = BusUsers.for_stack(self.data_dir, self.config.bus_prefix, self.config.env)
            auth, nodes = users.server_options(), self.config.nats_cluster
            sync = self.config.nats_sync_interval
            if nodes > 1:
                self.nats = EmbeddedNatsCluster(self.data_dir / "nats-cluster", nodes, sync_interval=sync, **auth)
            else:
                # On a port kept for the stack's life: a restarted server is found at the same URL.
                self.nats = EmbeddedNats(self.data_dir, port=free_port(), sync_interval=sync, **auth)
            nats_url = self.nats.start()
            log.info("embedded nats-server started", extra={"url": nats_url})
        database_url = self.config.database_url
        if not database_url:
            self.postgres = EmbeddedPostgres(self.data_dir, port=free_port())
            database_url = self.postgres.start()
            log.info("embedded PostgreSQL started", extra={"url": database_url})
        # A development stack seals secrets under a key ring of its own, kept beside its data, and
        # console sessions under a key kept there too survive a restart of the stack.
        token_file = self.data_dir / "operator_token"
        token = kept_secret(token_file, new_operator_token)
        master_keys = kept_secret(self.data_dir / "master_keys", lambda: f"dev1:{new_master_key()}")
        console_key = kept_secret(
            self.data_dir / "console_session_key", lambda: base64.b64encode(os.urandom(32)).decode()
        )
        mesh = MeshCertificates.made(self.data_dir / "mesh", SERVICES) if self.config.mesh_tls else None
        ports = {name: free_port() for name in SERVICES}
        ports["gateway"] = self.config.gateway_grpc_port or free_port()
        http_ports = {"gateway": self.config.gateway_http_port or free_port(), "verifier": free_port()}
        # The extra processes' gRPC ports are chosen now, so the callers of a replicated service
        # are given all of its addresses and spread their calls (and fail over) between them.
        extra_ports = {name: [free_port() for _ in range(self.config.replicas - 1)] for name in SERVICES}
        common = {
            "NATS_URL": nats_url,
            "DATABASE_URL": database_url,
            "HERALD_BUS_PREFIX": self.config.bus_prefix,
            "HERALD_LEDGER_ADDR": _addresses(ports["ledger"], extra_ports["ledger"]),
            "HERALD_ROUTER_ADDR": _addresses(ports["router"], extra_ports["router"]),
            "HERALD_EMAIL_SENDER_ADDR": _addresses(ports["email-sender"], extra_ports["email-sender"]),
            "HERALD_WEBHOOK_SENDER_ADDR": _addresses(ports["webhook-sender"], extra_ports["webhook-sender"]),
            "HERALD_FIRST_OPERATOR": first_operator(token),
            "HERALD_MASTER_KEYS": master_keys,
            # One the caller set wins (it reaches the services through their environment).
            "HERALD_CONSOLE_SESSION_KEY": os.environ.get("HERALD_CONSOLE_SESSION_KEY") or console_key,
            # A development stack delivers to receivers on this machine, unless its user said not to.
            "HERALD_WEBHOOK_ALLOW_LOOPBACK": allow_loopback(),
            **self._replication_env(),
            **self.config.env,
        }
        for name in SERVICES:
            env = {
                **common,
                "HERALD_GRPC_PORT": str(ports[name]),
                "HERALD_METRICS_PORT": str(free_port()),
                **(users.service_env(name) if users is not None else {}),
                **(mesh.service_env(name) if mesh is not None else {}),
                **self.config.service_env.get(name, {}),
            }
            if name in http_ports:
                env["HERALD_HTTP_PORT"] = str(http_ports[name])
            self.services[name] = ServiceProcess(
                name=name,
                env=env,
                grpc_addr=f"127.0.0.1:{ports[name]}",
                log_path=self.data_dir / "logs" / f"{name}.log",
            )
        try:
            # The ledger first (it owns the schema the others read through it); the rest start
            # together, so their imports overlap instead of queueing one behind the other.
            first, *rest = SERVICES
            self._spawn(self.services[first])
            self._wait_healthy(self.services[first])
            for name in rest:
                self._spawn(self.services[name])
            for name in rest:
                self._wait_healthy(self.services[name])
            # The extra processes start together: they find their dependencies up already.
            extra: list[ServiceProcess] = []
            for name in SERVICES:
                for i, port in enumerate(extra_ports[name], start=1):
                    env = {"HERALD_GRPC_PORT": str(port), **self.config.replica_env.get(f"{name}-{i}", {})}
                    replica_name, replica = self._new_replica(name, env)
                    self._spawn(replica)
                    self.services[replica_name] = replica
                    extra.append(replica)
            for replica in extra:
                self._wait_healthy(replica)
            # SERVING says a service is built; its HTTP routes may still wait on the bus. Up means ready.
            for service in self.services.values():
                if "HERALD_HTTP_PORT" in service.env:
                    _wait_ready(f"http://127.0.0.1:{service.env['HERALD_HTTP_PORT']}/readyz", service.log_path)
        except BaseException:
            self.stop()
            raise
        self.endpoints = {
            "gateway_http": f"http://127.0.0.1:{http_ports['gateway']}",
            "gateway_grpc": self.services["gateway"].grpc_addr,
            "verifier_http": f"http://127.0.0.1:{http_ports['verifier']}",
            "nats_url": nats_url,
            "database_url": database_url,
            "operator_token_file": str(token_file.resolve()),
            "metrics": {
                n: f"http://127.0.0.1:{s.env['HERALD_METRICS_PORT']}/metrics" for n, s in self.services.items()
            },
        }
        if users is not None:
            self.endpoints["nats_credentials_file"] = str(users.admin_file)
        write_private(self.data_dir / "endpoints.json", json.dumps(self.endpoints, indent=2) + "\n")
        servers = self.nats.nodes if isinstance(self.nats, EmbeddedNatsCluster) else [self.nats] if self.nats else []
        self.watches = watches(servers, self.postgres)
        self.write_status()
        return self.endpoints

    def write_status(self) -> None:
        self._status_at = time.monotonic()
        write_status(self.data_dir, components(self.watches, self.services))

    def _replication_env(self) -> dict[str, str]:
        """Streams and buckets on every node of an embedded cluster, up to three (what production runs)."""
        if isinstance(self.nats, EmbeddedNatsCluster):
            return {"HERALD_STREAM_REPLICAS": str(min(self.config.nats_cluster, 3))}
        return {}

    def _spawn(self, service: ServiceProcess) -> None:
        # Each service holds only the secrets it needs, whichever of these gave them.
        env = service_environment(service.name, {**os.environ, **service.env})
        with service.log_path.open("ab") as log_file:
            service.process = subprocess.Popen(
                [sys.executable, "-m", "herald.cli", "run", service.name],
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                # Ctrl-C reaches the supervisor only; it stops the services in order.
                start_new_session=True,
            )
        service.started_at = time.monotonic()
        log.info("service started", extra={"service": service.name, "pid": service.process.pid})

    def _wait_healthy(self, service: ServiceProcess, timeout: float = HEALTH_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        health_port = service.env.get("HERALD_HEALTH_PORT")
        with grpc.insecure_channel(f"127.0.0.1:{health_port}" if health_port else service.grpc_addr) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                if service.process is not None and service.process.poll() is not None:
                    raise RuntimeError(f"{service.name} exited during start:\n{tail(service.log_path)}")
                try:
                    answer = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                    if answer.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.1)
        raise TimeoutError(f"{service.name} not healthy after {timeout:.0f}s:\n{tail(service.log_path)}")

    # ---- supervise -----------------------------------------------------

    def supervise_once(self) -> None:
        """Restarts services and embedded servers that died, each after a backoff that grows with
        its failures, and keeps the status file current."""
        now = time.monotonic()
        with self._lock:
            changed = restart_dead(self.services.values(), self._spawn, now)
            changed = any([watch.check(now) for watch in self.watches]) or changed
            if changed or now - self._status_at > STATUS_EVERY_S:
                self.write_status()

    def supervise_in_background(self, interval: float = 0.2) -> None:
        def loop() -> None:
            while not self._stop_supervising.wait(interval):
                self.supervise_once()

        self._supervisor = threading.Thread(target=loop, name="herald-supervisor", daemon=True)
        self._supervisor.start()

    def run_forever(self) -> None:
        """The foreground of `herald up`: supervise until SIGINT or SIGTERM."""
        stop = threading.Event()
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        while not stop.wait(0.5):
            self.supervise_once()

    # ---- control (used by tests and by shutdown) -----------------------

    def add_replica(self, name: str, env: dict[str, str] | None = None) -> ServiceProcess:
        """Another process of a service on ports of its own (several gateways, say)."""
        replica_name, replica = self._new_replica(name, env)
        with self._lock:
            self._spawn(replica)
            self._wait_healthy(replica)
            self.services[replica_name] = replica
        return replica

    def _new_replica(self, name: str, env: dict[str, str] | None) -> tuple[str, ServiceProcess]:
        base = self.services[name]
        taken = sum(1 for n, s in self.services.items() if s.name == name)
        replica_name = f"{name}-{taken}"
        replica_env = {**base.env, "HERALD_GRPC_PORT": str(free_port()), "HERALD_METRICS_PORT": str(free_port())}
        for listener in ("HERALD_HTTP_PORT", "HERALD_HEALTH_PORT"):
            if listener in replica_env:
                replica_env[listener] = str(free_port())
        replica_env.update(env or {})
        replica = ServiceProcess(
            name=name,
            env=replica_env,
            grpc_addr=f"127.0.0.1:{replica_env['HERALD_GRPC_PORT']}",
            log_path=self.data_dir / "logs" / f"{replica_name}.log",
        )
        return replica_name, replica

    def restart(self, name: str, env: dict[str, str] | None = None) -> None:
        """Stops a service gracefully and starts it again, optionally with changed settings."""
        with self._lock:
            service = self.services[name]
            service.env.update(env or {})
            if service.process is not None and service.process.poll() is None:
                service.process.send_signal(signal.SIGTERM)
                service.process.wait(timeout=60)
            self._spawn(service)
            self._wait_healthy(service)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        with self._lock:
            process = self.services[name].process
            if process is not None and process.poll() is None:
                process.send_signal(sig)
                process.wait(timeout=30)

    def wait_healthy(self, name: str, timeout: float = HEALTH_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            process = self.services[name].process
            if process is not None and process.poll() is None:
                self._wait_healthy(self.services[name], max(deadline - time.monotonic(), 1.0))
                return
            time.sleep(0.1)
        raise TimeoutError(f"{name} was not restarted")

    def stop(self) -> None:
        self._stop_supervising.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=5)
        with self._lock:
            # Callers before what they call; the processes of one service stop together.
            for kind in reversed(SERVICES):
                running = {
                    name: service.process
                    for name, service in self.services.items()
                    if service.name == kind and service.process is not None and service.process.poll() is None
                }
                for process in running.values():
                    process.send_signal(signal.SIGTERM)
                for name, process in running.items():
                    try:
                        process.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        log.warning("service ignored SIGTERM; killing", extra={"service": name})
                        process.kill()
                        process.wait()
                    log.info("service stopped", extra={"service": name})
        if self.nats is not None:
            self.nats.stop()
        if self.postgres is not None:
            self.postgres.stop()
        self._data_dir_lock.release()


def _addresses(port: int, extra_ports: list[int]) -> str:
    """One process: its host:port. Several: an `ipv4:` list, which the callers' channels spread
    their calls over and fail over within (`herald.grpcio.client.open_channel`)."""
    if not extra_ports:
        return f"127.0.0.1:{port}"
    return "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in [port, *extra_ports])


def _wait_ready(url: str, log_path: Path, timeout: float = HEALTH_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    answer = ""
    while time.monotonic() < deadline:
        try:
            response = httpx.get(url, timeout=5)
            if response.status_code == 200:
                return
            answer = response.text
        except httpx.HTTPError as error:
            answer = repr(error)
        time.sleep(0.1)
    raise TimeoutError(f"{url} not ready after {timeout:.0f}s: {answer}\n{tail(log_path)}")
