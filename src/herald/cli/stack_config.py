"""What `herald up` is asked to run (`StackConfig`) and what it writes once up (`Endpoints`,
<data dir>/endpoints.json): the stack's two data shapes, apart from the processes that run it
(herald.cli.stack)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from herald.cli.bus_auth import BusUsers


class Endpoints(TypedDict):
    """What `herald up` started, as written to <data dir>/endpoints.json."""

    gateway_http: str
    gateway_grpc: str
    verifier_http: str
    nats_url: str
    database_url: str
    operator_token_file: str
    nats_credentials_file: NotRequired[str]  # the embedded NATS's admin user, for operators' tools
    # Service name -> its Prometheus /metrics URL.
    metrics: dict[str, str]


@dataclass
class StackConfig:
    data_dir: Path
    nats_url: str | None = None
    database_url: str | None = None
    gateway_http_port: int = 8080
    gateway_grpc_port: int = 50051
    bus_prefix: str = "herald"
    # Extra HERALD_* variables for every service (tests compress timeouts this way).
    env: dict[str, str] = field(default_factory=dict)
    # Per-service overrides, applied after `env`.
    service_env: dict[str, dict[str, str]] = field(default_factory=dict)
    # Without nats_url: this many embedded nats-server nodes (2+: a routed JetStream cluster,
    # streams and buckets replicated on up to three of them).
    nats_cluster: int = 1
    # JetStream's sync_interval for the embedded servers: "always" (acknowledged = on disk), a
    # duration ("2m", the server's own default), or "" for the server's default.
    nats_sync_interval: str = "always"
    # Processes of every service (2+: the extra ones via add_replica, sharing the durable consumers).
    replicas: int = 1
    # Overrides for one extra process, by its name ("ledger-1"), applied after its service's.
    replica_env: dict[str, dict[str, str]] = field(default_factory=dict)
    # The users of a NATS at nats_url (each service connects as its own); an embedded one gets its own.
    bus_users: BusUsers | None = None
    mesh_tls: bool = False  # mutual TLS between the services, with certificates in <data dir>/mesh
