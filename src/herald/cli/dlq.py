"""`herald dlq`: list, show and retry dead-lettered jobs (operator)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import click

from herald.cli.admin import AdminClient, data_dir_option, emit, json_option, stamp


@click.group()
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


def _dead_letter_dict(entry: Any) -> dict[str, Any]:
    from herald.names import CHANNEL_NAMES

    return {
        "job_id": entry.job_id,
        "tenant_id": entry.tenant_id,
        "channel": CHANNEL_NAMES.get(entry.channel, "unknown"),
        "attempts": entry.attempts,
        "run": entry.run,
        "dead_lettered_at": stamp(entry, "dead_lettered_at"),
        "retried_at": stamp(entry, "retried_at"),
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
    if not rows:
        scope = (" of this tenant" if tenant_id else "") + (f" since {since}" if since else "")
        click.echo(f"no dead letters{scope}: every job was delivered or is still being tried")
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

    from herald.names import STATUS_NAMES
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
        if found.entry.channel == 1 and "body" in payload.get("request", {}):
            payload["request"].update(_readable_body(message.request.body))
    if as_json:
        click.echo(json.dumps({**record, "payload": payload}))
        return
    emit(record, False)
    click.echo("payload:")
    click.echo(json.dumps(payload, indent=2) if payload is not None else "  (no longer in the dead-letter stream)")


def _readable_body(body: bytes) -> dict[str, Any]:
    """The body as the receiver would read it: JSON as JSON, text as text, other bytes as base64."""
    try:
        text = body.decode()
    except UnicodeDecodeError:
        return {"body": None, "body_base64": base64.b64encode(body).decode()}
    try:
        return {"body": json.loads(text)}
    except ValueError:
        return {"body": text}


@dlq.command("retry")
@click.argument("job_ids", nargs=-1)
@click.option("--all", "all_waiting", is_flag=True, help="Every dead-lettered job still waiting.")
@click.option("--since", help="With --all: only those dead-lettered since (ISO 8601, or an age: 30m, 6h, 2d).")
@json_option
@data_dir_option
def dlq_retry(job_ids: tuple[str, ...], all_waiting: bool, since: str | None, as_json: bool, data_dir: Path) -> None:
    """Run dead-lettered jobs again from PENDING, with a fresh set of attempts."""
    from herald.names import STATUS_NAMES
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
