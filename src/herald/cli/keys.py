"""`herald keys`: the master keys that seal stored secrets (operator)."""

from __future__ import annotations

from pathlib import Path

import click

from herald.cli.admin import AdminClient, data_dir_option, emit, json_option


@click.group()
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
    emit(
        {
            "reencrypted": done.reencrypted,
            "already_current": done.already_current,
            "active_key_id": done.active_key_id,
            "unreadable_ids": list(done.unreadable_ids),
        },
        as_json,
    )
