"""Running Herald: one service, the ledger's migrations, or the whole stack (`herald up`)."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import click

from herald.cli.admin import data_dir_option
from herald.cli.stack_env import ALLOW_LOOPBACK, allow_loopback, loopback_allowed
from herald.telemetry.logging import configure_logging


def _service_names() -> list[str]:
    return sorted(ep.name for ep in entry_points(group="herald.services"))


class _ListsServices(click.Command):
    """`herald run --help` ends with the services installed (read when asked, not at import)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_paragraph()
        formatter.write("SERVICE is one of:\n")
        for name in _service_names():
            formatter.write(f"  {name}\n")


@click.command(cls=_ListsServices)
@click.argument("service")
def run(service: str) -> None:
    """Run one service (SERVICE) in the foreground (what a container runs)."""
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
    reaches the services (but the ports, addresses and keys the stack sets itself); no service gets
    an operator's token (the ledger makes the first operator, `admin`, from its hash; the token is
    in <data dir>/operator_token) and the master keys reach only the services that use them. Webhooks to this machine
    (loopback) are allowed unless HERALD_WEBHOOK_ALLOW_LOOPBACK=false."""
    from herald.cli.stack import Stack
    from herald.cli.stack_config import StackConfig
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
            # The services call each other over mutual TLS, with certificates of the stack's own CA.
            mesh_tls=True,
            nats_sync_interval=nats_sync_interval,
        )
    )
    from herald.cli.data_dir_lock import DataDirInUse

    # A SIGTERM while the stack starts stops what has started (run_forever then takes the signal
    # over): without this, the default action would end `herald up` and orphan its services.
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        endpoints = stack.start()
        click.echo(banner(endpoints, data_dir))
        click.echo("Running (restarted with backoff when they die; `herald status` shows them later):")
        click.echo("\n".join(status_lines(components(stack.watches, stack.services))))
        stack.run_forever()
    except DataDirInUse as refused:
        raise click.ClickException(str(refused)) from None
    finally:
        stack.stop()


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt


def loopback_banner() -> str:
    """Says whether tenants' webhooks may reach this machine, and how to change it: a development
    default that would be a hole anywhere else is never on without a word."""
    if loopback_allowed(allow_loopback()):
        return f"Webhooks to this machine (127.0.0.1, localhost) are allowed; {ALLOW_LOOPBACK}=false refuses them."
    return f"Webhooks to this machine (127.0.0.1, localhost) are refused ({ALLOW_LOOPBACK} is off)."


def banner(endpoints: Mapping[str, Any], data_dir: Path) -> str:
    """What a newcomer needs next, once the stack is up: every address and file, one a line."""
    gateway = endpoints["gateway_http"]
    rows = [
        ("Gateway", f"{gateway} (HTTP), {endpoints['gateway_grpc']} (gRPC)"),
        ("Tenant console", f"{gateway}/console (sign in with an API key: herald tenant create NAME)"),
        ("Operator console", f"{gateway}/admin/console (sign in with the operator token)"),
        ("API docs", f"{gateway}/docs (ReDoc: {gateway}/redoc, the document: {gateway}/openapi.json)"),
        ("Operator token", str(endpoints["operator_token_file"])),
        ("Logs", str((data_dir / "logs").resolve())),
        ("Endpoints", str((data_dir / "endpoints.json").resolve())),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [
        "Herald is up.",
        *(f"  {name.ljust(width)}  {value}" for name, value in rows),
        loopback_banner(),
        "Ctrl-C stops everything.",
    ]
    return "\n".join(lines)


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
