"""`herald audit` and `herald operator`: the audit log, and the named operators (operator)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from herald.cli.admin import AdminClient, data_dir_option, emit, json_option, stamp


def _entry_dict(entry: Any) -> dict[str, Any]:
    return {
        "id": entry.id,
        "at": stamp(entry, "at"),
        "tenant_id": entry.tenant_id or None,
        "actor": f"{entry.actor_kind}:{entry.actor_name} ({entry.actor_id})",
        "action": entry.action,
        "resource_id": entry.resource_id,
        "changes": json.loads(entry.changes_json or "{}"),
        "address": entry.address,
    }


def _operator_dict(operator: Any) -> dict[str, Any]:
    return {
        "operator_id": operator.id,
        "name": operator.name,
        "created_at": stamp(operator, "created_at"),
        "revoked_at": stamp(operator, "revoked_at"),
        "last_used_at": stamp(operator, "last_used_at"),
    }


@click.command()
@click.option("--tenant", "tenant_id", default="", help="One tenant's entries only.")
@click.option("--limit", type=click.IntRange(1, 200), default=50, show_default=True)
@click.option("--cursor", default="", help="The next_cursor a previous page printed.")
@json_option
@data_dir_option
def audit(tenant_id: str, limit: int, cursor: str, as_json: bool, data_dir: Path) -> None:
    """The audit log, newest first: who changed what (tenants' keys and operators), when, from where."""
    from herald.v1 import gateway_pb2

    page = AdminClient(data_dir).call(
        "ListAuditLog", gateway_pb2.AdminServiceListAuditLogRequest(tenant_id=tenant_id, page_size=limit, cursor=cursor)
    )
    entries = [_entry_dict(e) for e in page.entries]
    if as_json:
        click.echo(json.dumps({"data": entries, "next_cursor": page.next_cursor or None}))
        return
    for entry in entries:
        changes = json.dumps(entry["changes"], sort_keys=True)
        click.echo(
            f"{entry['at']}  {entry['actor']}  {entry['action']}  {entry['resource_id']}  {changes}  {entry['address']}"
        )
    if page.next_cursor:
        click.echo(f"next_cursor: {page.next_cursor}")


@click.group()
def operator() -> None:
    """Named operators, each with a token of its own (operator)."""


@operator.command("create")
@click.argument("name")
@json_option
@data_dir_option
def operator_create(name: str, as_json: bool, data_dir: Path) -> None:
    """Create an operator and print its token (shown once; only its SHA-256 is stored)."""
    from herald.v1 import gateway_pb2

    created = AdminClient(data_dir).call("CreateOperator", gateway_pb2.AdminServiceCreateOperatorRequest(name=name))
    emit({**_operator_dict(created.operator), "token": created.token}, as_json)


@operator.command("list")
@json_option
@data_dir_option
def operator_list(as_json: bool, data_dir: Path) -> None:
    """Every operator, revoked ones included (names are not reused)."""
    from herald.v1 import gateway_pb2

    found = AdminClient(data_dir).call("ListOperators", gateway_pb2.AdminServiceListOperatorsRequest())
    operators = [_operator_dict(o) for o in found.operators]
    if as_json:
        click.echo(json.dumps({"data": operators}))
        return
    for each in operators:
        state = f"revoked {each['revoked_at']}" if each["revoked_at"] else "active"
        click.echo(f"{each['name']}  {state}  created {each['created_at']}  last used {each['last_used_at'] or '-'}")


@operator.command("revoke")
@click.argument("name")
@json_option
@data_dir_option
def operator_revoke(name: str, as_json: bool, data_dir: Path) -> None:
    """Revoke an operator's token: refused at once on every gateway."""
    from herald.v1 import gateway_pb2

    revoked = AdminClient(data_dir).call("RevokeOperator", gateway_pb2.AdminServiceRevokeOperatorRequest(name=name))
    emit(_operator_dict(revoked.operator), as_json)
