"""The ledger's gRPC services, one stub each, over one channel: one ledger process serves
them all on one port (herald_ledger.main). Callers name the area they ask:
`ledger.jobs.CreateJobs(...)`, `ledger.tenants.AuthenticateApiKey(...)`."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import grpc

from herald.v1 import (
    ledger_inbound_pb2,
    ledger_inbound_pb2_grpc,
    ledger_jobs_pb2,
    ledger_jobs_pb2_grpc,
    ledger_providers_pb2,
    ledger_providers_pb2_grpc,
    ledger_subscriptions_pb2,
    ledger_subscriptions_pb2_grpc,
    ledger_tenants_pb2,
    ledger_tenants_pb2_grpc,
)

# Each area's messages, by the name of its stub in `Ledger`.
MESSAGES: dict[str, ModuleType] = {
    "jobs": ledger_jobs_pb2,
    "tenants": ledger_tenants_pb2,
    "subscriptions": ledger_subscriptions_pb2,
    "providers": ledger_providers_pb2,
    "inbound": ledger_inbound_pb2,
}


@dataclass(frozen=True)
class Ledger:
    jobs: ledger_jobs_pb2_grpc.LedgerJobsServiceAsyncStub
    tenants: ledger_tenants_pb2_grpc.LedgerTenantsServiceAsyncStub
    subscriptions: ledger_subscriptions_pb2_grpc.LedgerSubscriptionsServiceAsyncStub
    providers: ledger_providers_pb2_grpc.LedgerProvidersServiceAsyncStub
    inbound: ledger_inbound_pb2_grpc.LedgerInboundServiceAsyncStub

    @classmethod
    def over(cls, channel: grpc.aio.Channel) -> Ledger:
        return cls(
            jobs=ledger_jobs_pb2_grpc.LedgerJobsServiceStub(channel),
            tenants=ledger_tenants_pb2_grpc.LedgerTenantsServiceStub(channel),
            subscriptions=ledger_subscriptions_pb2_grpc.LedgerSubscriptionsServiceStub(channel),
            providers=ledger_providers_pb2_grpc.LedgerProvidersServiceStub(channel),
            inbound=ledger_inbound_pb2_grpc.LedgerInboundServiceStub(channel),
        )
