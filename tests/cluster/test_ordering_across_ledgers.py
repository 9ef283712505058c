"""Jobs sharing an ordering key go in the order the database accepted them, whichever ledger
replica took each one and whatever its clock says.

The cluster stack's second ledger mints its ids from a clock five seconds behind
(`LEDGER_CLOCK_SKEW_S`). A first job goes through the first ledger and is held by its receiver
for a moment; while it is in flight a second job with the same key goes through the skewed
ledger, so its id sorts before the first one's. Ordered by id, the second would count as the
earlier and go at once, alongside the first; ordered by the database's sequence (`jobs.seq`,
migration 0016) it waits until the first is answered.
"""

from __future__ import annotations

import uuid

from herald.v1 import common_pb2, ledger_jobs_pb2, ledger_jobs_pb2_grpc, ledger_pb2
from tests.cluster.conftest import ClusterStack
from tests.support.api import TenantKey
from tests.support.receiver import Receiver

HOLD_S = 2.0  # the receiver holds the first job's answer this long


def _create(cluster: ClusterStack, ledger: str, tenant: TenantKey, url: str, key: str) -> str:
    """One webhook job written by the ledger process `ledger` ("ledger", "ledger-1")."""
    with cluster.mesh_channel(cluster.stack.services[ledger].grpc_addr, "ledger") as channel:
        answer = ledger_jobs_pb2_grpc.LedgerJobsServiceStub(channel).CreateJobs(
            ledger_jobs_pb2.CreateJobsRequest(
                drafts=[
                    ledger_pb2.JobDraft(
                        tenant_id=tenant.tenant_id,
                        channel=common_pb2.CHANNEL_WEBHOOK,
                        priority=common_pb2.PRIORITY_NORMAL,
                        ordering_key=key,
                        webhook=common_pb2.WebhookRequest(url=url, body=b"{}", content_type="application/json"),
                    )
                ]
            ),
            timeout=30,
        )
    (outcome,) = answer.outcomes
    assert outcome.HasField("job"), outcome
    return str(outcome.job.id)


def test_an_ordering_key_keeps_the_databases_order_across_ledgers_with_skewed_clocks(
    cluster_stack: ClusterStack, receiver: Receiver
) -> None:
    tenant = cluster_stack.tenant("ordering-skew")
    receiver.behaviour.delay_path = ("/first", HOLD_S)
    first = _create(cluster_stack, "ledger", tenant, f"{receiver.url}/first", "customer-9")
    receiver.wait_for(first, timeout=60)
    second = _create(cluster_stack, "ledger-1", tenant, f"{receiver.url}/second", "customer-9")
    assert uuid.UUID(second) < uuid.UUID(first), "the skewed ledger's id sorts first: by id it would go first"

    seconds = receiver.wait_for(second, timeout=60)
    assert seconds, "the second job was never delivered"
    second_arrival, first_arrival = seconds[0], receiver.for_job(first)[0]
    assert second_arrival.at >= first_arrival.at + HOLD_S, (
        "the later job went while the earlier one of its key was still in flight"
    )
    assert len(receiver.for_job(first)) == 1, "the first job was answered once, not retried"
