"""The run's PostgreSQL and NATS: private ones by default, or the machine's (INFRA=machine).

Private servers make every CPU second they spend Herald's, as the peers' run.sh does for a
peer; the machine's servers are shared, so their figures are labelled and only partly
attributable. Each run gets a fresh database and bus prefix, removed afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]

from harness.config import Config, log
from harness.db import sql, with_database
from harness.herald_code import NATS_OWN_SYNC, NATS_TAKES_SYNC, BusUsers, EmbeddedNatsCluster, embedded_postgres
from harness.machine import pg_bin_dir, version_line
from harness.switches import Switches
from herald.cli.embedded import EmbeddedNats, EmbeddedPostgres


@dataclass
class Infra:
    """Where the services find their servers, and which processes are the servers."""

    nats_url: str
    database_url: str
    # label -> pids whose process trees are Herald's infrastructure (sampled like a peer's postgres/redis)
    roots: dict[str, list[int]]
    shared: bool
    description: str
    # The NATS users the services connect as (None: the bus takes anyone), herald.cli.bus_auth's.
    bus_users: Any = None
    # The nats-server's sync_interval: "always", a duration, or "" (the server's default, 2 minutes).
    sync_interval: str = ""

    def nats_options(self) -> dict[str, Any]:
        """nats-py's connect() options for the harness's own look at the bus (the admin user, if any)."""
        if self.bus_users is None:
            return {}
        user, password = self.bus_users.admin()
        return {"user": user, "password": password}


def reachable(host: str, port: int) -> bool:
    """Whether something listens there (INFRA=machine falls back to private servers if not)."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def infrastructure(cfg: Config, run_dir: Path, run_token: str) -> Iterator[Infra]:
    """The servers of one run, stopped (or cleaned of the run's database and streams) on exit."""
    database = f"herald_bench_{run_token}"
    prefix = f"bench{run_token}"
    if cfg.infra == "machine" and cfg.cluster > 1:
        log("CLUSTER: the cluster's nodes are private; INFRA=machine is not used")
    elif cfg.infra == "machine":
        nats_url = os.environ.get("NATS_URL") or "nats://127.0.0.1:4222"
        server_url = os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres"
        if reachable("127.0.0.1", 4222) and reachable("127.0.0.1", 5432):
            sql(with_database(server_url, "postgres"), f'CREATE DATABASE "{database}"')
            try:
                yield Infra(nats_url, with_database(server_url, database), {}, True, "machine's NATS and PostgreSQL")
            finally:
                asyncio.run(_delete_streams(nats_url, prefix))
                sql(with_database(server_url, "postgres"), f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            return
        log("INFRA=machine: NATS or PostgreSQL not reachable on 127.0.0.1; using private embedded servers")
    postgres, version = private_postgres(cfg)
    if cfg.cluster > 1 and EmbeddedNatsCluster is None:
        raise SystemExit("CLUSTER= needs a tree with herald.cli.embedded.EmbeddedNatsCluster")
    switches = Switches.parse(cfg.variant)
    users = bus_users(cfg, run_dir, prefix, switches)
    options, sync = nats_options(cfg, run_dir, users, switches)
    nats: Any = (
        EmbeddedNatsCluster(run_dir / "nats-cluster", cfg.cluster, **options)
        if cfg.cluster > 1
        else EmbeddedNats(run_dir, **options)
    )
    server_url = ""
    try:
        server_url = postgres.start()
        sql(with_database(server_url, "postgres"), f'DROP DATABASE IF EXISTS "{database}"')
        sql(with_database(server_url, "postgres"), f'CREATE DATABASE "{database}"')
        nats_url = nats.start()
        # A cluster's nodes apart: a stream's leader works harder than its followers.
        nats_pids = {f"nats-n{i}": n.pid for i, n in enumerate(nats.nodes)} if cfg.cluster > 1 else {"nats": nats.pid}
        assert postgres.pid is not None and None not in nats_pids.values()
        servers = f"a {cfg.cluster}-node JetStream cluster" if cfg.cluster > 1 else "nats-server"
        bus = f"sync_interval {sync or 'default'}, {'users per service' if users is not None else 'no users'}"
        yield Infra(
            nats_url,
            with_database(server_url, database),
            {"postgres": [postgres.pid], **{label: [pid] for label, pid in nats_pids.items() if pid is not None}},
            False,
            f"private PostgreSQL {version} ({cfg.pg} binaries) and {servers} ({bus})",
            users,
            sync,
        )
    finally:
        nats.stop()
        if server_url:
            with contextlib.suppress(Exception):
                sql(with_database(server_url, "postgres"), f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        postgres.stop()
        shutil.rmtree(run_dir / "nats", ignore_errors=True)
        shutil.rmtree(run_dir / "nats-cluster", ignore_errors=True)


def private_postgres(cfg: Config) -> tuple[Any, str]:
    """The private PostgreSQL cluster (kept under BENCH_TMP across runs; each run makes its own
    database) and its major version. A tree whose EmbeddedPostgres gives the superuser a password
    and one from before (trust: its code connects without one, and a cluster that has one refuses
    it) keep clusters of their own, so REV= runs a tree from either side of that change."""
    bin_dir = pg_bin_dir(cfg)
    # EmbeddedPostgres drives initdb/pg_ctl/psql from one bin directory; point it at the chosen build.
    embedded_postgres._postgres_bin_dir = lambda: bin_dir
    version = version_line([str(bin_dir / "postgres"), "--version"]).split()[-1].split(".")[0]
    postgres = EmbeddedPostgres(cfg.tmp / f"pg{version}-{cfg.pg}")
    if not hasattr(postgres, "password_file"):
        postgres = EmbeddedPostgres(cfg.tmp / f"pg{version}-{cfg.pg}-trust")
    return postgres, version


def bus_users(cfg: Config, run_dir: Path, prefix: str, switches: Switches) -> Any:
    """The run's NATS users, as `herald up` makes them (one per service, for the lanes the services
    are given), unless the side runs `plain-bus` or its tree predates them (None then)."""
    if BusUsers is None or not switches.bus_users:
        return None
    return BusUsers.for_stack(run_dir, prefix, cfg.service_settings())


def nats_options(cfg: Config, run_dir: Path, users: Any, switches: Switches) -> tuple[dict[str, Any], str]:
    """EmbeddedNats's (or the cluster's) arguments for the side's users and sync_interval, and the
    sync_interval the server runs with. A tree whose EmbeddedNats sets none runs the server's
    default; `sync-always` gives it one in a configuration file of its own (a single node only)."""
    options: dict[str, Any] = users.server_options() if users is not None else {}
    sync = NATS_OWN_SYNC if NATS_TAKES_SYNC else ""
    if switches.sync is not None and NATS_TAKES_SYNC:
        options["sync_interval"] = sync = switches.sync
    elif switches.sync:
        if cfg.cluster > 1:
            raise SystemExit("sync-always: this tree's NATS cluster takes no sync_interval")
        config = run_dir / "nats-sync.conf"
        config.write_text(f'jetstream {{\n  sync_interval: "{switches.sync}"\n}}\n')
        options["extra_args"], sync = ["-c", str(config)], switches.sync
    return options, sync


async def _delete_streams(nats_url: str, prefix: str) -> None:
    """INFRA=machine: remove the run's streams from the shared server."""
    import nats

    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            if info.config.name and info.config.name.startswith(prefix.upper() + "_"):
                await js.delete_stream(info.config.name)
    finally:
        await nc.close()


def shared_server_roots(infra: Infra) -> dict[str, list[int]]:
    """INFRA=machine: the PostgreSQL backends serving Herald's database (not the server's background
    processes: an underestimate) and the whole machine nats-server (shared with anything else using
    it: an overestimate on a busy NATS). Labelled as shared in the output."""
    database = infra.database_url.rsplit("/", 1)[1]
    backends = [
        r["pid"] for r in sql(infra.database_url, "SELECT pid FROM pg_stat_activity WHERE datname = $1", database)
    ]
    nats_pids = [
        c.pid
        for c in psutil.net_connections("tcp")
        if c.laddr and c.laddr.port == 4222 and c.status == "LISTEN" and c.pid
    ]
    roots: dict[str, list[int]] = {}
    if backends:
        roots["postgres_backends_shared"] = backends
    if nats_pids:
        roots["nats_shared"] = nats_pids[:1]
    return roots
