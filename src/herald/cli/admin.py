"""What the operator commands share: where the stack is, the AdminService client, the output."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import grpc

DEFAULT_DATA_DIR = ".herald"
PLANS = ("free", "indie", "startup")

# Where `herald up` keeps its stack (endpoints.json, the operator token, embedded servers' data) and where
# the other commands find it: one variable serves every command, so a shell that exports it once needs no flag.
DATA_DIR_ENV = "HERALD_DATA_DIR"
data_dir_option = click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    default=DEFAULT_DATA_DIR,
    show_default=True,
    envvar=DATA_DIR_ENV,
    show_envvar=True,
    help="The stack's directory (endpoints.json, operator token).",
)

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")


def admin_target(data_dir: Path) -> tuple[str, str]:
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
            f"cannot find the stack: no {endpoints_file} (run `herald up` first, or point {DATA_DIR_ENV} or "
            "--data-dir at its directory), and HERALD_GATEWAY_GRPC / HERALD_OPERATOR_TOKEN are not set"
        )
    return address, token


class AdminClient:
    """The gateway's AdminService, authenticated with the operator token."""

    def __init__(self, data_dir: Path) -> None:
        from herald.v1 import gateway_pb2_grpc

        address, token = admin_target(data_dir)
        self.channel = grpc.insecure_channel(address)
        self.stub = gateway_pb2_grpc.AdminServiceStub(self.channel)
        self.metadata = (("authorization", f"Bearer {token}"),)

    def call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.stub, method)(request, metadata=self.metadata, timeout=60)
        except grpc.RpcError as error:
            raise click.ClickException(f"{error.code().name}: {error.details()}") from error  # type: ignore[attr-defined]


def stamp(message: Any, field: str) -> str | None:
    return message.__getattribute__(field).ToJsonString() if message.HasField(field) else None


def emit(record: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(record))
    else:
        width = max(len(k) for k in record)
        for key, value in record.items():
            click.echo(f"{key + ':':<{width + 1}} {'' if value is None else value}")
