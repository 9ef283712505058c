"""Running Herald: one service, the ledger's migrations, or the whole stack (`herald up`)."""

from __future__ import annotations

import json
import os
from importlib.metadata import entry_points
from pathlib import Path

import click

from herald.cli.admin import data_dir_option
from herald.telemetry.logging import configure_logging


def _service_names() -> list[str]:
    return sorted(ep.name for ep in entry_points(group="herald.services"))


@click.command()
@click.argument("service")
def run(service: str) -> None:
    """Run one service in the foreground (what a container runs)."""
    found = [ep for ep in entry_points(group="herald.services") if ep.name == service]
    if not found:
        raise click.UsageError(f"unknown service {service!r}; one of: {', '.join(_service_names())}")
    found[0].load()()


@click.command()
@data_dir_option
def migrate(data_dir: Path) -> None:
    """Apply the ledger's database migrations (DATABASE_URL; without it, the database of the
    stack `herald up` started in the data directory)."""
    found = [ep for ep in entry_points(group="herald.commands") if ep.name == "migrate"]
    if not found:
        raise click.ClickException("the ledger service is not installed")
    endpoints_file = data_dir / "endpoints.json"
    named = os.environ.get("DATABASE_URL") or os.environ.get("HERALD_DATABASE_URL")
    if not named and endpoints_file.exists():
        os.environ["DATABASE_URL"] = json.loads(endpoints_file.read_text())["database_url"]
    found[0].load()()


@click.command()
@data_dir_option
@click.option("--http-port", type=int, default=8080, show_default=True, help="Gateway HTTP port (0: any free).")
@click.option("--grpc-port", type=int, default=50051, show_default=True, help="Gateway gRPC port (0: any free).")
@click.option(
    "--nats-cluster",
    type=click.IntRange(1, 5),
    default=1,
    show_default=True,
    help="Embedded nats-server nodes (without NATS_URL); 3 runs a JetStream cluster with R3 streams.",
)
@click.option("--replicas", type=click.IntRange(1, 4), default=1, show_default=True, help="Processes of every service.")
@click.option(
    "--nats-sync-interval",
    default="always",
    show_default=True,
    help="JetStream sync_interval of the embedded nats-server: always (an acknowledged write is on disk), "
    "a duration such as 2m (the server's default: faster, a crash of the machine can lose acknowledged writes).",
)
def up(
    data_dir: Path, http_port: int, grpc_port: int, nats_cluster: int, replicas: int, nats_sync_interval: str
) -> None:
    """Start the whole stack; with no NATS_URL / DATABASE_URL, on embedded NATS and PostgreSQL.

    Reads NATS_URL, DATABASE_URL, HERALD_BUS_PREFIX (default herald: two stacks sharing one NATS
    need different ones), HERALD_LOG_LEVEL and HERALD_DATA_DIR; every other HERALD_* variable
    reaches the services (but the ports, addresses and keys the stack sets itself)."""
    from herald.cli.stack import Stack, StackConfig
    from herald.cli.supervision import components, status_lines

    if nats_cluster > 1 and os.environ.get("NATS_URL"):
        raise click.UsageError("--nats-cluster starts embedded nodes; it cannot be combined with NATS_URL")
    configure_logging("up", os.environ.get("HERALD_LOG_LEVEL", "INFO"))
    stack = Stack(
        StackConfig(
            data_dir=data_dir,
            nats_url=os.environ.get("NATS_URL") or None,
            database_url=os.environ.get("DATABASE_URL") or None,
            bus_prefix=os.environ.get("HERALD_BUS_PREFIX") or "herald",
            gateway_http_port=http_port,
            gateway_grpc_port=grpc_port,
            nats_cluster=nats_cluster,
            replicas=replicas,
            nats_sync_interval=nats_sync_interval,
        )
    )
    try:
        endpoints = stack.start()
        click.echo(f"Herald is up. Gateway: {endpoints['gateway_http']} (HTTP), {endpoints['gateway_grpc']} (gRPC)")
        click.echo(f"Endpoints written to {data_dir / 'endpoints.json'}; Ctrl-C stops everything.")
        click.echo("Running (restarted with backoff when they die; `herald status` shows them later):")
        click.echo("\n".join(status_lines(components(stack.watches, stack.services))))
        stack.run_forever()
    finally:
        stack.stop()


@click.command()
@data_dir_option
def status(data_dir: Path) -> None:
    """What `herald up` runs in the data directory: its embedded servers and services, their
    pids, and how often each was restarted."""
    from herald.cli.supervision import read_status, status_lines, supervisor_alive

    found = read_status(data_dir)
    if found is None:
        raise click.ClickException(f"no stack has run in {data_dir} (no status.json)")
    if not supervisor_alive(found):
        raise click.ClickException(f"herald up is not running in {data_dir}")
    click.echo(f"herald up (pid {found['supervisor_pid']}) in {data_dir}:")
    click.echo("\n".join(status_lines(found["components"])))
