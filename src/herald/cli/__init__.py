"""The `herald` command: run a service, bring up a development stack, manage tenants."""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

import click
import grpc

from herald.telemetry.logging import configure_logging

DEFAULT_DATA_DIR = ".herald"
PLANS = ("free", "indie", "startup")


@click.group()
def main() -> None:
    """Herald: multi-tenant notification delivery."""


def _service_names() -> list[str]:
    return sorted(ep.name for ep in entry_points(group="herald.services"))


@main.command()
@click.argument("service")
def run(service: str) -> None:
    """Run one service in the foreground (what a container runs)."""
    found = [ep for ep in entry_points(group="herald.services") if ep.name == service]
    if not found:
        raise click.UsageError(f"unknown service {service!r}; one of: {', '.join(_service_names())}")
    found[0].load()()


@main.command()
def migrate() -> None:
    """Apply the ledger's database migrations (DATABASE_URL)."""
    found = [ep for ep in entry_points(group="herald.commands") if ep.name == "migrate"]
    if not found:
        raise click.ClickException("the ledger service is not installed")
    found[0].load()()


@main.command()
@click.option("--data-dir", type=click.Path(path_type=Path), default=DEFAULT_DATA_DIR, show_default=True)
@click.option("--http-port", type=int, default=8080, show_default=True, help="Gateway HTTP port (0: any free).")
@click.option("--grpc-port", type=int, default=50051, show_default=True, help="Gateway gRPC port (0: any free).")
def up(data_dir: Path, http_port: int, grpc_port: int) -> None:
    """Start the whole stack; with no NATS_URL / DATABASE_URL, on embedded NATS and PostgreSQL."""
    from herald.cli.stack import Stack, StackConfig

    configure_logging("up", os.environ.get("HERALD_LOG_LEVEL", "INFO"))
    stack = Stack(
        StackConfig(
            data_dir=data_dir,
            nats_url=os.environ.get("NATS_URL") or None,
            database_url=os.environ.get("DATABASE_URL") or None,
            gateway_http_port=http_port,
            gateway_grpc_port=grpc_port,
        )
    )
    try:
        endpoints = stack.start()
        click.echo(f"Herald is up. Gateway: {endpoints['gateway_http']} (HTTP), {endpoints['gateway_grpc']} (gRPC)")
        click.echo(f"Endpoints written to {data_dir / 'endpoints.json'}; Ctrl-C stops everything.")
        stack.run_forever()
    finally:
        stack.stop()


def _admin_target(data_dir: Path) -> tuple[str, str]:
    """The gateway's gRPC address and the operator token: from the environment,
    else from the endpoints.json that `herald up` wrote."""
    address = os.environ.get("HERALD_GATEWAY_GRPC")
    token = os.environ.get("HERALD_OPERATOR_TOKEN")
    endpoints_file = data_dir / "endpoints.json"
    if (not address or not token) and endpoints_file.exists():
        endpoints = json.loads(endpoints_file.read_text())
        address = address or endpoints["gateway_grpc"]
        token = token or Path(endpoints["operator_token_file"]).read_text().strip()
    if not address or not token:
        raise click.ClickException(
            "cannot find the stack: set HERALD_GATEWAY_GRPC and HERALD_OPERATOR_TOKEN, or run `herald up` first"
        )
    return address, token


@main.group()
def tenant() -> None:
    """Manage tenants (operator)."""


@tenant.command("create")
@click.argument("name")
@click.option("--plan", type=click.Choice(PLANS), required=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--data-dir", type=click.Path(path_type=Path), default=DEFAULT_DATA_DIR, show_default=True)
def tenant_create(name: str, plan: str, as_json: bool, data_dir: Path) -> None:
    """Create a tenant and print its id and API key (shown once)."""
    from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc

    address, token = _admin_target(data_dir)
    plan_value = {
        "free": common_pb2.PLAN_FREE,
        "indie": common_pb2.PLAN_INDIE,
        "startup": common_pb2.PLAN_STARTUP,
    }
    with grpc.insecure_channel(address) as channel:
        try:
            created = gateway_pb2_grpc.AdminServiceStub(channel).CreateTenant(
                gateway_pb2.AdminServiceCreateTenantRequest(name=name, plan=plan_value[plan]),
                metadata=(("authorization", f"Bearer {token}"),),
                timeout=10,
            )
        except grpc.RpcError as error:
            raise click.ClickException(f"{error.code().name}: {error.details()}") from error  # type: ignore[attr-defined]
    if as_json:
        click.echo(json.dumps({"tenant_id": created.tenant.id, "api_key": created.api_key}))
    else:
        click.echo(f"tenant_id: {created.tenant.id}")
        click.echo(f"api_key:   {created.api_key}   (shown once; store it now)")


if __name__ == "__main__":
    sys.exit(main())
