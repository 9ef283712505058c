"""`herald up --nats-cluster 3 --replicas 2`: the stack comes up on three embedded nats-server
nodes with R3 streams and two processes of every service, delivers, and Ctrl-C stops it all.
It is started in the background (`herald_up_started`) while the package's stack comes up."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time
from pathlib import Path

import httpx
import psutil

from herald.config import nats_servers
from tests.cluster.conftest import ClusterStack, HeraldUp
from tests.cluster.test_replication import _replication
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.receiver import Receiver


def test_herald_up_on_an_embedded_three_node_cluster_with_two_of_every_service(
    herald_up_started: HeraldUp, cluster_stack: ClusterStack, receiver: Receiver
) -> None:
    # cluster_stack is not used here: asked for after herald_up_started, it comes up meanwhile.
    up, data_dir = herald_up_started.process, herald_up_started.data_dir
    children: list[psutil.Process] = []
    try:
        endpoints_file = data_dir / "endpoints.json"
        deadline = time.monotonic() + 240
        while not endpoints_file.exists():
            assert up.poll() is None, herald_up_started.output.read_text()
            assert time.monotonic() < deadline, "herald up did not come up"
            time.sleep(0.2)
        endpoints = json.loads(endpoints_file.read_text())
        servers = nats_servers(endpoints["nats_url"])
        assert len(servers) == 3

        gateway = endpoints["gateway_http"]
        token = Path(endpoints["operator_token_file"]).read_text().strip()
        tenant: TenantKey = create_tenant(gateway, token, "up-cluster")
        response = httpx.post(
            f"{gateway}/v1/webhooks",
            json={"url": receiver.url, "payload": {"hello": "cluster"}},
            headers=tenant.headers,
        )
        assert response.status_code == 202, response.text
        assert wait_for_status(gateway, tenant, response.json()["id"], timeout=60)["status"] == "delivered"

        admin_file = Path(endpoints["nats_credentials_file"])
        replication = asyncio.run(_replication(endpoints["nats_url"], "herald", admin_file))
        assert replication, "the stack's streams"
        assert {r[0] for r in replication.values()} == {3}, replication

        children = psutil.Process(up.pid).children(recursive=True)
        assert sum("herald.cli" in " ".join(c.cmdline()) for c in children) == 12, "two of each of six services"
        assert sum("nats-server" in " ".join(c.cmdline()) for c in children) == 3, "three nodes"
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=120)
    assert up.returncode == 0
    _gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"left running after Ctrl-C: {alive}"
    for url in servers:
        with socket.socket() as probe:
            port = int(url.rsplit(":", 1)[1])
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"{url} still listening after Ctrl-C"
