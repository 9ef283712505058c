"""Running Herald: one service, the ledger's migrations, or the whole stack (`herald up`)."""

from __future__ import annotations

import json
import os
from importlib.metadata import entry_points
from pathlib import Path

import click

from herald.cli.admin import data_dir_option
from herald.cli.stack_env import ALLOW_LOOPBACK, allow_loopback, loopback_allowed
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
def up(data_dir: Path, http_port: int, grpc_port: int, nats_cluster: int, replicas: int) -> None:
    """Start the whole stack; with no NATS_URL / DATABASE_URL, on embedded NATS and PostgreSQL.

    Reads NATS_URL, DATABASE_URL, HERALD_BUS_PREFIX (default herald: two stacks sharing one NATS
    need different ones), HERALD_LOG_LEVEL and HERALD_DATA_DIR; every other HERALD_* variable
    reaches the services (but the ports, addresses and keys the stack sets itself); no service gets
    an operator's token (the ledger makes the first operator, `admin`, from its hash; the token is
    in <data dir>/operator_token) and the master keys reach only the services that use them. Webhooks to this machine
    (loopback) are allowed unless HERALD_WEBHOOK_ALLOW_LOOPBACK=false."""
    from herald.cli.stack import Stack, StackConfig

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
            # The services call each other over mutual TLS, with certificates of the stack's own CA.
            mesh_tls=True,
        )
    )
    try:
        endpoints = stack.start()
        click.echo(f"Herald is up. Gateway: {endpoints['gateway_http']} (HTTP), {endpoints['gateway_grpc']} (gRPC)")
        click.echo(f"Endpoints written to {data_dir / 'endpoints.json'}; Ctrl-C stops everything.")
        click.echo(loopback_banner())
        stack.run_forever()
    finally:
        stack.stop()


def loopback_banner() -> str:
    """Says whether tenants' webhooks may reach this machine, and how to change it: a development
    default that would be a hole anywhere else is never on without a word."""
    if loopback_allowed(allow_loopback()):
        return f"Webhooks to this machine (127.0.0.1, localhost) are allowed; {ALLOW_LOOPBACK}=false refuses them."
    return f"Webhooks to this machine (127.0.0.1, localhost) are refused ({ALLOW_LOOPBACK} is off)."
