"""One draft PostgreSQL cannot store is refused alone. The ledger writes the drafts of many
calls (the router's, each carrying many requests of many tenants) in one transaction; a value
it cannot store (here a NUL in an ordering key, which the gateway refuses at the door, sent to
the ledger directly as another caller could) once failed the whole transaction, and every
request in it was told to retry (503). Now that draft is refused (INVALID_ARGUMENT's meaning,
422 on HTTP) and the others are written and delivered."""

from __future__ import annotations

import grpc

from herald.cli.stack import Stack
from herald.grpcio.ledger import Ledger
from herald.v1 import common_pb2, ledger_jobs_pb2, ledger_pb2
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.receiver import Receiver


def draft(tenant: TenantKey, url: str, ordering_key: str = "") -> ledger_pb2.JobDraft:
    return ledger_pb2.JobDraft(
        tenant_id=tenant.tenant_id,
        channel=common_pb2.CHANNEL_WEBHOOK,
        priority=common_pb2.PRIORITY_NORMAL,
        ordering_key=ordering_key,
        webhook=common_pb2.WebhookRequest(url=url, body=b"{}", content_type="application/json"),
    )


def test_a_draft_that_cannot_be_stored_is_refused_alone(
    stack: Stack, gateway: str, tenant: TenantKey, operator_token: str, receiver: Receiver
) -> None:
    other = create_tenant(gateway, operator_token, "unstorable-neighbour")
    drafts = [draft(tenant, receiver.url), draft(tenant, receiver.url, "a\x00b"), draft(other, receiver.url)]
    with grpc.insecure_channel(stack.services["ledger"].grpc_addr) as channel:
        answer = Ledger.over(channel).jobs.CreateJobs(ledger_jobs_pb2.CreateJobsRequest(drafts=drafts), timeout=30)
    first, bad, third = answer.outcomes
    assert bad.rejection == ledger_pb2.REJECTION_UNSTORABLE and "NUL" in bad.detail, bad
    for outcome, owner in ((first, tenant), (third, other)):
        assert outcome.HasField("job"), outcome
        assert wait_for_status(gateway, owner, outcome.job.id)["status"] == "delivered"
