"""The loss checker (tests/resilience/test_zz_loss_checker.py) on the three-node cluster: the work
stream's leader node SIGKILLed while jobs are on their way, then restarted on its store; every
accepted id accounted for, none lost."""

from __future__ import annotations

import time

import httpx

from tests.cluster.conftest import ClusterStack
from tests.conftest import report
from tests.support.accounting import account, wait_settled
from tests.support.receiver import Receiver


def test_sigkill_of_the_work_streams_leader_loses_no_accepted_job(cluster_stack: ClusterStack) -> None:
    tenant = cluster_stack.tenant("loss-leader")
    receiver = Receiver()
    receiver.behaviour.delay_path = ("/hook", 0.05)  # deliveries in flight when the leader dies
    try:
        items = [{"url": receiver.url, "payload": {"n": n}} for n in range(60)]
        answer = httpx.post(
            f"{cluster_stack.gateway}/v1/webhooks/batch", json={"items": items}, headers=tenant.headers, timeout=60
        )
        assert answer.status_code == 200, answer.text
        ids = [r["id"] for r in answer.json()["results"] if r["status"] == 202]
        leader, _ = cluster_stack.leader()
        node = cluster_stack.cluster.node_named(leader)
        node.kill()
        cluster_stack.leader(changed_from=leader)
        time.sleep(1.0)
        cluster_stack.cluster.restart(cluster_stack.cluster.nodes.index(node))
        wait_settled(cluster_stack.database_url, ids, timeout=120)
        accounts = account(cluster_stack.database_url, ids, [receiver])
        report(f"loss checker, SIGKILL of the R3 work stream's leader ({leader}): {accounts.line()}")
        assert not accounts.lost, accounts.line()
    finally:
        receiver.close()
