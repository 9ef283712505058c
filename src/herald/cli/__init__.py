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
@click.option("--contact-email", default="", help="Where Herald's own mail (quota warnings, key-created notices) goes.")
@json_option
@data_dir_option
def tenant_create(name: str, plan: str, contact_email: str, as_json: bool, data_dir: Path) -> None:
    """Create a tenant and print its id and API key (shown once)."""
    from herald.v1 import gateway_pb2

    created = AdminClient(data_dir).call(
        "CreateTenant",
        gateway_pb2.AdminServiceCreateTenantRequest(name=name, plan=PLAN_VALUES[plan], contact_email=contact_email),
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


@main.group()
def dlq() -> None:
    """Dead letters: jobs that exhausted their attempts (operator). Nothing leaves by itself."""


def _since(value: str | None) -> Any:
    """A Timestamp for `--since`: an ISO 8601 time, or an age such as 30m, 6h, 2d."""
    if value is None:
        return None
    from datetime import UTC, datetime, timedelta

    from google.protobuf.timestamp_pb2 import Timestamp

    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = value.strip()
    try:
        if text[-1:] in units and text[:-1].isdigit():
            when = datetime.now(UTC) - timedelta(seconds=int(text[:-1]) * units[text[-1]])
        else:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
    except ValueError as error:
        raise click.BadParameter("an ISO 8601 time or an age like 30m, 6h, 2d", param_hint="--since") from error
    stamp = Timestamp()
    stamp.FromDatetime(when.astimezone(UTC))
    return stamp


CHANNEL_NAMES = {1: "webhook", 2: "email", 3: "platform_email"}
STATUS_NAMES = {
    1: "pending",
    2: "queued",
    3: "delivering",
    4: "delivered",
    5: "failed",
    6: "suppressed",
    7: "bounced",
    8: "complained",
}


def _dead_letter_dict(entry: Any) -> dict[str, Any]:
    return {
        "job_id": entry.job_id,
        "tenant_id": entry.tenant_id,
        "channel": CHANNEL_NAMES.get(entry.channel, "unknown"),
        "attempts": entry.attempts,
        "run": entry.run,
        "dead_lettered_at": _stamp(entry, "dead_lettered_at"),
        "retried_at": _stamp(entry, "retried_at"),
        "error": entry.error,
    }


@dlq.command("list")
@click.option("--since", help="Dead-lettered at or after: ISO 8601, or an age (30m, 6h, 2d).")
@click.option("--tenant", "tenant_id", help="Only this tenant's.")
@click.option("--include-retried", is_flag=True, help="Also entries already retried.")
@json_option
@data_dir_option
def dlq_list(since: str | None, tenant_id: str | None, include_retried: bool, as_json: bool, data_dir: Path) -> None:
    """List dead-lettered jobs, newest first (by default only those still waiting)."""
    from herald.v1 import gateway_pb2

    client, cursor, rows = AdminClient(data_dir), "", list[dict[str, Any]]()
    stamp = _since(since)
    while True:
        request = gateway_pb2.AdminServiceListDeadLettersRequest(
            tenant_id=tenant_id or "", include_retried=include_retried, page_size=200, cursor=cursor
        )
        if stamp is not None:
            request.since.CopyFrom(stamp)
        page = client.call("ListDeadLetters", request)
        rows.extend(_dead_letter_dict(e) for e in page.entries)
        cursor = page.next_cursor
        if not cursor:
            break
    if as_json:
        click.echo(json.dumps({"dead_letters": rows}))
        return
    for row in rows:
        state = f"  (retried {row['retried_at']})" if row["retried_at"] else ""
        click.echo(
            f"{row['job_id']}  {row['dead_lettered_at']}  {row['channel']:<14} tenant {row['tenant_id']}  "
            f"{row['attempts']} attempts{state}\n    {row['error']}"
        )


@dlq.command("show")
@click.argument("job_id")
@json_option
@data_dir_option
def dlq_show(job_id: str, as_json: bool, data_dir: Path) -> None:
    """Show one dead-lettered job with its payload (the work message, from the stream)."""
    from google.protobuf import json_format

    from herald.v1 import email_sender_pb2, gateway_pb2, webhook_sender_pb2

    found = AdminClient(data_dir).call("GetDeadLetter", gateway_pb2.AdminServiceGetDeadLetterRequest(job_id=job_id))
    record = _dead_letter_dict(found.entry)
    record["status"] = STATUS_NAMES.get(found.job.status, "unknown")
    record["work_subject"] = found.entry.work_subject or None
    payload: dict[str, Any] | None = None
    if found.entry.work_message:
        message: Any = (
            webhook_sender_pb2.WebhookDelivery() if found.entry.channel == 1 else email_sender_pb2.EmailDelivery()
        )
        message.ParseFromString(found.entry.work_message)
        payload = json_format.MessageToDict(message, preserving_proto_field_name=True)
    if as_json:
        click.echo(json.dumps({**record, "payload": payload}))
        return
    _emit(record, False)
    click.echo("payload:")
    click.echo(json.dumps(payload, indent=2) if payload is not None else "  (no longer in the dead-letter stream)")


@dlq.command("retry")
@click.argument("job_ids", nargs=-1)
@click.option("--all", "all_waiting", is_flag=True, help="Every dead-lettered job still waiting.")
@click.option("--since", help="With --all: only those dead-lettered since (ISO 8601, or an age: 30m, 6h, 2d).")
@json_option
@data_dir_option
def dlq_retry(job_ids: tuple[str, ...], all_waiting: bool, since: str | None, as_json: bool, data_dir: Path) -> None:
    """Run dead-lettered jobs again from PENDING, with a fresh set of attempts."""
    from herald.v1 import gateway_pb2

    if all_waiting == bool(job_ids):
        raise click.UsageError("name job ids, or use --all (optionally with --since)")
    if since and not all_waiting:
        raise click.UsageError("--since goes with --all")
    request = gateway_pb2.RetryDeadLettersRequest(job_ids=list(job_ids), all=all_waiting)
    stamp = _since(since)
    if stamp is not None:
        request.since.CopyFrom(stamp)
    done = AdminClient(data_dir).call("RetryDeadLetters", request)
    rows = [
        {
            "job_id": o.job_id,
            "retried": o.retried,
            "status": STATUS_NAMES.get(o.status),
            "detail": o.detail or None,
        }
        for o in done.outcomes
    ]
    if as_json:
        click.echo(json.dumps({"retried": rows}))
        return
    if not rows:
        click.echo("nothing to retry")
    for row in rows:
        verdict = f"retried, {row['status']}" if row["retried"] else f"not retried: {row['detail']}"
        click.echo(f"{row['job_id']}  {verdict}")
    if any(not row["retried"] for row in rows):
        sys.exit(1)


if __name__ == "__main__":
    sys.exit(main())
