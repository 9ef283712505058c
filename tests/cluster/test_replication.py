"""On the three-node cluster every stream, KV bucket and object store the services create is
replicated on all three nodes (R3), so losing one node loses no state: the work and dead-letter
streams, the intake and inbound streams, the rate-limit and target-pacing buckets, and the
object store that carries large webhook bodies."""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path

import httpx

from herald.bus.payloads import PayloadStore
from herald.bus.streams import keep_replicated
from herald.cli.bus_auth import BusUsers
from herald.cli.embedded import EmbeddedNatsCluster
from tests.cluster.conftest import NODES, ClusterStack, admin_connection
from tests.support.api import wait_for_status
from tests.support.receiver import Receiver


async def _replication(url: str, prefix: str, admin_file: Path) -> dict[str, tuple[int, int]]:
    """(configured replicas, current peers including the leader) of each stream of this stack."""
    nc = await admin_connection(url, admin_file)
    try:
        found = {}
        for info in await nc.jetstream(timeout=5).streams_info():
            name = info.config.name or ""
            if any(name.startswith(f"{kind}{prefix.upper()}") for kind in ("", "KV_", "OBJ_")):
                peers = info.cluster.replicas or [] if info.cluster else []
                current = sum(1 for peer in peers if peer.current) + (1 if info.cluster and info.cluster.leader else 0)
                found[name] = (info.config.num_replicas or 1, current)
        return found
    finally:
        await nc.close()


def test_every_stream_and_bucket_of_the_stack_is_replicated_on_every_node(
    cluster_stack: ClusterStack, receiver: Receiver
) -> None:
    tenant = cluster_stack.tenant("replication")
    # A body above HERALD_PAYLOAD_INLINE_MAX_BYTES travels in the object store, which is made on first use.
    response = httpx.post(
        f"{cluster_stack.gateway}/v1/webhooks",
        json={"url": receiver.url, "payload": {"blob": "x" * 300_000}},
        headers=tenant.headers,
        timeout=30,
    )
    assert response.status_code == 202, response.text
    assert wait_for_status(cluster_stack.gateway, tenant, response.json()["id"], timeout=60)["status"] == "delivered"

    prefix = cluster_stack.bus_prefix.upper()
    # A peer catching up after the previous test's node restart may be behind for a moment.
    deadline = time.monotonic() + 30
    found = asyncio.run(_replication(cluster_stack.cluster.url, prefix, cluster_stack.users.admin_file))
    while any(r[1] != NODES for r in found.values()) and time.monotonic() < deadline:
        time.sleep(0.5)
        found = asyncio.run(_replication(cluster_stack.cluster.url, prefix, cluster_stack.users.admin_file))
    expected = {
        f"{prefix}_WORK",
        f"{prefix}_DLQ",
        f"{prefix}_INBOUND",
        f"{prefix}_INTAKE",
        f"KV_{prefix}_RATE",
        f"OBJ_{prefix}_PAYLOADS",
    }
    assert expected <= set(found), f"missing: {expected - set(found)}; found {sorted(found)}"
    assert any(name.startswith("KV_") and name != f"KV_{prefix}_RATE" for name in found), "the senders' buckets"
    assert {name: r for name, r in found.items() if r != (NODES, NODES)} == {}, "each R3 with all peers current"


async def test_buckets_made_with_fewer_replicas_are_raised_to_the_setting(
    nats_cluster: EmbeddedNatsCluster, cluster_users: BusUsers
) -> None:
    """A deployment that grows from one node to three (HERALD_STREAM_REPLICAS 1 -> 3) must not keep
    its large payloads, rate-limit or pacing state on one node: opening them raises their replicas."""
    prefix = f"grow{secrets.token_hex(3)}".upper()
    nc = await admin_connection(nats_cluster.url, cluster_users.admin_file)
    try:
        js = nc.jetstream(timeout=10)
        await js.create_key_value(bucket=f"{prefix}_STATE", history=1, replicas=1)
        await PayloadStore(js, f"{prefix}_PAYLOADS", replicas=1).put("job", b"body")

        await keep_replicated(js, f"KV_{prefix}_STATE", NODES)
        payloads = PayloadStore(js, f"{prefix}_PAYLOADS", replicas=NODES)
        assert await payloads.get("job") == b"body"

        for stream in (f"KV_{prefix}_STATE", f"OBJ_{prefix}_PAYLOADS"):
            assert (await js.stream_info(stream)).config.num_replicas == NODES, stream
        # Never lowered: a process with an older, smaller setting leaves it alone.
        await keep_replicated(js, f"KV_{prefix}_STATE", 1)
        assert (await js.stream_info(f"KV_{prefix}_STATE")).config.num_replicas == NODES
        for stream in (f"KV_{prefix}_STATE", f"OBJ_{prefix}_PAYLOADS"):
            await js.delete_stream(stream)
    finally:
        await nc.close()
