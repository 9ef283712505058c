"""The `herald` command: run a service, bring up a development stack, manage tenants."""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

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


PLAN_VALUES: dict[str, Any] = {"free": 1, "indie": 2, "startup": 3}
PLAN_NAMES = {v: k for k, v in PLAN_VALUES.items()}
data_dir_option = click.option(
    "--data-dir", type=click.Path(path_type=Path), default=DEFAULT_DATA_DIR, show_default=True
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")


class AdminClient:
    """The gateway's AdminService, authenticated with the operator token."""

    def __init__(self, data_dir: Path) -> None:
        from herald.v1 import gateway_pb2_grpc

        address, token = _admin_target(data_dir)
        self.channel = grpc.insecure_channel(address)
        self.stub = gateway_pb2_grpc.AdminServiceStub(self.channel)
        self.metadata = (("authorization", f"Bearer {token}"),)

    def call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.stub, method)(request, metadata=self.metadata, timeout=60)
        except grpc.RpcError as error:
            raise click.ClickException(f"{error.code().name}: {error.details()}") from error  # type: ignore[attr-defined]


def _stamp(message: Any, field: str) -> str | None:
    return message.__getattribute__(field).ToJsonString() if message.HasField(field) else None


def _tenant_dict(tenant: Any) -> dict[str, Any]:
    return {
        "tenant_id": tenant.id,
        "name": tenant.name,
        "plan": PLAN_NAMES.get(tenant.plan, "free"),
        "disabled": tenant.disabled,
        "created_at": _stamp(tenant, "created_at"),
    }


def _key_dict(key: Any) -> dict[str, Any]:
    return {
        "key_id": key.id,
        "name": key.name,
        "public_id": key.public_id,
        "created_at": _stamp(key, "created_at"),
        "revoked_at": _stamp(key, "revoked_at"),
        "last_used_at": _stamp(key, "last_used_at"),
    }


def _emit(record: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(record))
    else:
        width = max(len(k) for k in record)
        for key, value in record.items():
            click.echo(f"{key + ':':<{width + 1}} {'' if value is None else value}")


@tenant.command("create")
@click.argument("name")
@click.option("--plan", type=click.Choice(PLANS), required=True)
@json_option
@data_dir_option
def tenant_create(name: str, plan: str, as_json: bool, data_dir: Path) -> None:
    """Create a tenant and print its id and API key (shown once)."""
    from herald.v1 import gateway_pb2

    created = AdminClient(data_dir).call(
        "CreateTenant", gateway_pb2.AdminServiceCreateTenantRequest(name=name, plan=PLAN_VALUES[plan])
    )
    if as_json:
        click.echo(json.dumps({"tenant_id": created.tenant.id, "api_key": created.api_key}))
    else:
        click.echo(f"tenant_id: {created.tenant.id}")
        click.echo(f"api_key:   {created.api_key}   (shown once; store it now)")


@tenant.command("list")
@json_option
@data_dir_option
def tenant_list(as_json: bool, data_dir: Path) -> None:
    """List tenants."""
    from herald.v1 import gateway_pb2

    client, cursor, rows = AdminClient(data_dir), "", list[dict[str, Any]]()
    while True:
        page = client.call("ListTenants", gateway_pb2.AdminServiceListTenantsRequest(page_size=200, cursor=cursor))
        rows.extend(_tenant_dict(t) for t in page.tenants)
        cursor = page.next_cursor
        if not cursor:
            break
    if as_json:
        click.echo(json.dumps({"tenants": rows}))
    else:
        for row in rows:
            state = " (disabled)" if row["disabled"] else ""
            click.echo(f"{row['tenant_id']}  {row['plan']:<8} {row['name']}{state}")


@tenant.command("show")
@click.argument("tenant_id")
@json_option
@data_dir_option
def tenant_show(tenant_id: str, as_json: bool, data_dir: Path) -> None:
    """Show one tenant."""
    from herald.v1 import gateway_pb2

    found = AdminClient(data_dir).call("GetTenant", gateway_pb2.AdminServiceGetTenantRequest(tenant_id=tenant_id))
    _emit(_tenant_dict(found.tenant), as_json)


@tenant.command("set-plan")
@click.argument("tenant_id")
@click.argument("plan", type=click.Choice(PLANS))
@json_option
@data_dir_option
def tenant_set_plan(tenant_id: str, plan: str, as_json: bool, data_dir: Path) -> None:
    """Change a tenant's plan."""
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceUpdateTenantRequest(tenant_id=tenant_id, plan=PLAN_VALUES[plan])
    _emit(_tenant_dict(AdminClient(data_dir).call("UpdateTenant", request).tenant), as_json)


@tenant.command("disable")
@click.argument("tenant_id")
@click.option("--enable", is_flag=True, help="Enable a disabled tenant again.")
@json_option
@data_dir_option
def tenant_disable(tenant_id: str, enable: bool, as_json: bool, data_dir: Path) -> None:
    """Disable a tenant: its API keys stop working at once."""
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceUpdateTenantRequest(tenant_id=tenant_id, disabled=not enable)
    _emit(_tenant_dict(AdminClient(data_dir).call("UpdateTenant", request).tenant), as_json)


def _limit_value(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    if value == "unlimited":
        return -1
    if value == "plan":
        return -2
    if not value.isdigit():
        raise click.BadParameter("a number, 'unlimited' or 'plan'", param_hint=name)
    return int(value)


@tenant.command("set-limits")
@click.argument("tenant_id")
@click.option("--rate-per-min", help="Requests per minute: N, 'unlimited' or 'plan'.")
@click.option("--webhooks-per-month", help="N, 'unlimited' or 'plan'.")
@click.option("--emails-per-month", help="N, 'unlimited' or 'plan'.")
@json_option
@data_dir_option
def tenant_set_limits(
    tenant_id: str,
    rate_per_min: str | None,
    webhooks_per_month: str | None,
    emails_per_month: str | None,
    as_json: bool,
    data_dir: Path,
) -> None:
    """Override a tenant's plan limits."""
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceSetTenantLimitsRequest(tenant_id=tenant_id)
    for field, value in (
        ("rate_per_min", _limit_value(rate_per_min, "--rate-per-min")),
        ("webhooks_per_month", _limit_value(webhooks_per_month, "--webhooks-per-month")),
        ("emails_per_month", _limit_value(emails_per_month, "--emails-per-month")),
    ):
        if value is not None:
            setattr(request, field, value)
    tenant = AdminClient(data_dir).call("SetTenantLimits", request).tenant
    record = _tenant_dict(tenant)
    for field in ("rate_per_min", "webhooks_per_month", "emails_per_month"):
        if tenant.HasField(field):
            value = getattr(tenant, field)
            record[field] = "unlimited" if value < 0 else value
    _emit(record, as_json)


@main.group()
def apikey() -> None:
    """Manage tenants' API keys (operator)."""


@apikey.command("create")
@click.argument("tenant_id")
@click.option("--name", default="default", show_default=True)
@json_option
@data_dir_option
def apikey_create(tenant_id: str, name: str, as_json: bool, data_dir: Path) -> None:
    """Create an API key for a tenant (shown once)."""
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceCreateApiKeyRequest(tenant_id=tenant_id, name=name)
    created = AdminClient(data_dir).call("CreateApiKey", request)
    _emit({**_key_dict(created.key), "api_key": created.api_key}, as_json)


@apikey.command("list")
@click.argument("tenant_id")
@json_option
@data_dir_option
def apikey_list(tenant_id: str, as_json: bool, data_dir: Path) -> None:
    """List a tenant's API keys (never the keys themselves)."""
    from herald.v1 import gateway_pb2

    found = AdminClient(data_dir).call("ListApiKeys", gateway_pb2.AdminServiceListApiKeysRequest(tenant_id=tenant_id))
    rows = [_key_dict(k) for k in found.keys]
    if as_json:
        click.echo(json.dumps({"keys": rows}))
    else:
        for row in rows:
            state = f"revoked {row['revoked_at']}" if row["revoked_at"] else "active"
            click.echo(f"{row['key_id']}  hk_live_{row['public_id']}_…  {row['name']:<16} {state}")


@apikey.command("revoke")
@click.argument("tenant_id")
@click.argument("key_id")
@json_option
@data_dir_option
def apikey_revoke(tenant_id: str, key_id: str, as_json: bool, data_dir: Path) -> None:
    """Revoke a key; every gateway refuses it within seconds."""
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceRevokeApiKeyRequest(tenant_id=tenant_id, key_id=key_id)
    _emit(_key_dict(AdminClient(data_dir).call("RevokeApiKey", request).key), as_json)


@main.group()
def keys() -> None:
    """Master keys that seal stored secrets (operator)."""


@keys.command("rotate")
@json_option
@data_dir_option
def keys_rotate(as_json: bool, data_dir: Path) -> None:
    """Re-encrypt every stored secret under the active master key, while Herald keeps serving.

    First add the new key to HERALD_MASTER_KEYS everywhere and make it active
    (HERALD_MASTER_KEY_ID), keeping the old one in the ring; then run this; then
    drop the old key from the ring.
    """
    from herald.v1 import gateway_pb2

    done = AdminClient(data_dir).call("RotateMasterKey", gateway_pb2.RotateMasterKeyRequest())
    _emit(
        {
            "reencrypted": done.reencrypted,
            "already_current": done.already_current,
            "active_key_id": done.active_key_id,
            "unreadable_ids": list(done.unreadable_ids),
        },
        as_json,
    )


if __name__ == "__main__":
    sys.exit(main())
