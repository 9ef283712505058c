"""`herald tenant` and `herald apikey`: tenants, their plans and limits, their API keys (operator)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from herald.cli.admin import PLANS, AdminClient, data_dir_option, emit, json_option, stamp


@click.group()
def tenant() -> None:
    """Manage tenants (operator)."""


def _tenant_dict(tenant: Any) -> dict[str, Any]:
    from herald.names import PLAN_NAMES

    return {
        "tenant_id": tenant.id,
        "name": tenant.name,
        "plan": PLAN_NAMES.get(tenant.plan, "free"),
        "disabled": tenant.disabled,
        "created_at": stamp(tenant, "created_at"),
    }


def _key_dict(key: Any) -> dict[str, Any]:
    return {
        "key_id": key.id,
        "name": key.name,
        "public_id": key.public_id,
        "scopes": list(key.scopes),
        "created_at": stamp(key, "created_at"),
        "revoked_at": stamp(key, "revoked_at"),
        "last_used_at": stamp(key, "last_used_at"),
    }


@tenant.command("create")
@click.argument("name")
@click.option("--plan", type=click.Choice(PLANS), required=True)
@click.option("--contact-email", default="", help="Where Herald's own mail (quota warnings, key-created notices) goes.")
@click.option("--allow-duplicate-name", is_flag=True, help="Create it even if another tenant has this name.")
@json_option
@data_dir_option
def tenant_create(
    name: str, plan: str, contact_email: str, allow_duplicate_name: bool, as_json: bool, data_dir: Path
) -> None:
    """Create a tenant and print its id and API key (shown once). Names are for people: a second
    tenant of the same name is refused unless asked for, since the two would be told apart by id only."""
    from herald.names import PLAN_VALUES
    from herald.v1 import gateway_pb2

    client = AdminClient(data_dir)
    if not allow_duplicate_name:
        same = [t for t in _all_tenants(client) if t["name"] == name]
        if same:
            raise click.ClickException(
                f"a tenant named {name!r} exists already ({same[0]['tenant_id']}); choose another name, or pass "
                "--allow-duplicate-name to create a second one"
            )
    created = client.call(
        "CreateTenant",
        gateway_pb2.AdminServiceCreateTenantRequest(
            name=name,
            plan=PLAN_VALUES[plan],  # type: ignore[arg-type]
            contact_email=contact_email,
            allow_duplicate_name=allow_duplicate_name,
        ),
    )
    if as_json:
        click.echo(json.dumps({"tenant_id": created.tenant.id, "api_key": created.api_key}))
    else:
        click.echo(f"tenant_id: {created.tenant.id}")
        click.echo(f"api_key:   {created.api_key}   (shown once; store it now)")


def _all_tenants(client: AdminClient) -> list[dict[str, Any]]:
    from herald.v1 import gateway_pb2

    cursor, rows = "", list[dict[str, Any]]()
    while True:
        page = client.call("ListTenants", gateway_pb2.AdminServiceListTenantsRequest(page_size=200, cursor=cursor))
        rows.extend(_tenant_dict(t) for t in page.tenants)
        cursor = page.next_cursor
        if not cursor:
            return rows


@tenant.command("list")
@json_option
@data_dir_option
def tenant_list(as_json: bool, data_dir: Path) -> None:
    """List tenants."""

    rows = _all_tenants(AdminClient(data_dir))
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
    emit(_tenant_dict(found.tenant), as_json)


@tenant.command("set-plan")
@click.argument("tenant_id")
@click.argument("plan", type=click.Choice(PLANS))
@json_option
@data_dir_option
def tenant_set_plan(tenant_id: str, plan: str, as_json: bool, data_dir: Path) -> None:
    """Change a tenant's plan."""
    from herald.names import PLAN_VALUES
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceUpdateTenantRequest(tenant_id=tenant_id, plan=PLAN_VALUES[plan])  # type: ignore[arg-type]
    emit(_tenant_dict(AdminClient(data_dir).call("UpdateTenant", request).tenant), as_json)


@tenant.command("disable")
@click.argument("tenant_id")
@click.option("--enable", is_flag=True, help="Enable a disabled tenant again.")
@json_option
@data_dir_option
def tenant_disable(tenant_id: str, enable: bool, as_json: bool, data_dir: Path) -> None:
    """Disable a tenant: its API keys stop working at once."""
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceUpdateTenantRequest(tenant_id=tenant_id, disabled=not enable)
    emit(_tenant_dict(AdminClient(data_dir).call("UpdateTenant", request).tenant), as_json)


@tenant.command("erase")
@click.argument("tenant_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@data_dir_option
def tenant_erase(tenant_id: str, yes: bool, as_json: bool, data_dir: Path) -> None:
    """Erase a tenant: every row of it (jobs, events, configuration, keys, usage, audit entries),
    its work waiting on the bus and its rate-limit state go, for good. Prints the receipt."""
    from google.protobuf.json_format import MessageToDict

    from herald.v1 import gateway_pb2

    if not yes:
        click.confirm(f"Erase tenant {tenant_id} and everything of it? This cannot be undone", abort=True)
    request = gateway_pb2.AdminServiceEraseTenantRequest(tenant_id=tenant_id)
    receipt = AdminClient(data_dir).call("EraseTenant", request).receipt
    if as_json:
        click.echo(json.dumps(MessageToDict(receipt, preserving_proto_field_name=True)))
        return
    click.echo(f"erased:      {receipt.tenant_id} at {stamp(receipt, 'erased_at')}")
    click.echo(f"audit names: {receipt.tenant_hash}")
    for title, counts in (("rows", receipt.rows), ("bus", receipt.bus)):
        click.echo(f"{title}:")
        for kind, count in sorted(counts.items()):
            click.echo(f"  {kind:<24} {count}")
    if receipt.deliveries_unfinished:
        click.echo(f"deliveries whose end was not heard: {receipt.deliveries_unfinished} (see the runbook)")
    if receipt.bus_not_removed:
        click.echo(f"not removed from the bus: {', '.join(receipt.bus_not_removed)} (see the runbook)")


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


def _days_value(value: str | None, name: str) -> int | None:
    if value == "unlimited":
        raise click.BadParameter("a number of days or 'plan'", param_hint=name)
    return _limit_value(value, name)


@tenant.command("set-limits")
@click.argument("tenant_id")
@click.option("--rate-per-min", help="Requests per minute: N, 'unlimited' or 'plan'.")
@click.option("--webhooks-per-month", help="N, 'unlimited' or 'plan'.")
@click.option("--emails-per-month", help="N, 'unlimited' or 'plan'.")
@click.option("--payload-retention-days", help="Days payloads are kept: N or 'plan'.")
@click.option("--row-retention-days", help="Days jobs, attempts and events are kept: N or 'plan'.")
@json_option
@data_dir_option
def tenant_set_limits(
    tenant_id: str,
    rate_per_min: str | None,
    webhooks_per_month: str | None,
    emails_per_month: str | None,
    payload_retention_days: str | None,
    row_retention_days: str | None,
    as_json: bool,
    data_dir: Path,
) -> None:
    """Override a tenant's plan limits and retention."""
    from herald.plans import TENANT_OVERRIDES
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceSetTenantLimitsRequest(tenant_id=tenant_id)
    for field, value in (
        ("rate_per_min", _limit_value(rate_per_min, "--rate-per-min")),
        ("webhooks_per_month", _limit_value(webhooks_per_month, "--webhooks-per-month")),
        ("emails_per_month", _limit_value(emails_per_month, "--emails-per-month")),
        ("payload_retention_days", _days_value(payload_retention_days, "--payload-retention-days")),
        ("row_retention_days", _days_value(row_retention_days, "--row-retention-days")),
    ):
        if value is not None:
            setattr(request, field, value)
    tenant = AdminClient(data_dir).call("SetTenantLimits", request).tenant
    record = _tenant_dict(tenant)
    for field in TENANT_OVERRIDES:
        if tenant.HasField(field):
            value = getattr(tenant, field)
            record[field] = "unlimited" if value < 0 else value
    emit(record, as_json)


@click.group()
def apikey() -> None:
    """Manage tenants' API keys (operator)."""


@apikey.command("create")
@click.argument("tenant_id")
@click.option("--name", default="default", show_default=True)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(("send", "read", "manage", "keys", "console")),
    help="What the key may do (repeat it); none: everything.",
)
@json_option
@data_dir_option
def apikey_create(tenant_id: str, name: str, scopes: tuple[str, ...], as_json: bool, data_dir: Path) -> None:
    """Create an API key for a tenant (shown once)."""
    from herald.v1 import gateway_pb2

    request = gateway_pb2.AdminServiceCreateApiKeyRequest(tenant_id=tenant_id, name=name, scopes=scopes)
    created = AdminClient(data_dir).call("CreateApiKey", request)
    emit({**_key_dict(created.key), "api_key": created.api_key}, as_json)


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
    emit(_key_dict(AdminClient(data_dir).call("RevokeApiKey", request).key), as_json)
