"""The ledger's gRPC services, one servicer each over its rpc/ modules (herald_ledger.rpc),
all served by the one ledger process on one port. Each RPC validates, runs the store's
queries in one transaction per call, and answers in protos."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.secrets import KeyRing
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
from herald_ledger.inflight import Committing, InFlight
from herald_ledger.notifications import Notifier
from herald_ledger.operational import Announcer
from herald_ledger.outbox import Outbox
from herald_ledger.parked_lanes import ParkedLanes
from herald_ledger.rpc.access import AccessRpcs
from herald_ledger.rpc.deliveries import DeliveryRpcs
from herald_ledger.rpc.domains import DomainRpcs
from herald_ledger.rpc.erasure import ErasureRpcs
from herald_ledger.rpc.events import EventRpcs
from herald_ledger.rpc.idempotency import IdempotencyRpcs
from herald_ledger.rpc.inbound import InboundRpcs
from herald_ledger.rpc.jobs import JobRpcs
from herald_ledger.rpc.limits import LimitRpcs
from herald_ledger.rpc.platform_email import PlatformEmailRpcs
from herald_ledger.rpc.secrets import SecretRpcs
from herald_ledger.rpc.subscriptions import SubscriptionRpcs
from herald_ledger.rpc.target_health import TargetHealthRpcs
from herald_ledger.rpc.target_secrets import TargetSecretRpcs
from herald_ledger.rpc.tenants import TenantRpcs
from herald_ledger.store.platform_email import PlatformMail


@dataclass(frozen=True)
class Shared:
    """What every servicer holds. One `Committing` is shared by all: a start waits for the
    jobs any of them is writing (CreateJobs, RecordEvent)."""

    engine: AsyncEngine
    notifier: Notifier
    ring: KeyRing | None
    webhook_secret_overlap_s: float
    outbox: Outbox
    inflight: InFlight
    # Publishes Herald's own events to the tenant (herald_ledger.operational).
    announcer: Announcer
    # Herald's own mail (quota warnings, key notices, operator alerts) is written only
    # when a platform provider is set.
    platform: PlatformMail | None = None
    committing: Committing = field(default_factory=Committing)
    # The lanes deliveries are parked on (ParkDeliveries adds, the reconciler reads them all and
    # rechecks the circuits' lanes).
    parked_lanes: ParkedLanes = field(default_factory=ParkedLanes)


class Servicing:
    def __init__(self, shared: Shared) -> None:
        for each in fields(shared):  # the attributes the rpc/ modules declare
            setattr(self, each.name, getattr(shared, each.name))


class JobsServicer(Servicing, JobRpcs, DeliveryRpcs, IdempotencyRpcs, ledger_jobs_pb2_grpc.LedgerJobsServiceServicer):
    def __init__(self, shared: Shared) -> None:
        Servicing.__init__(self, shared)
        JobRpcs.__init__(self)


class TenantsServicer(
    Servicing, TenantRpcs, LimitRpcs, AccessRpcs, ErasureRpcs, ledger_tenants_pb2_grpc.LedgerTenantsServiceServicer
):
    pass


class SubscriptionsServicer(
    Servicing,
    SubscriptionRpcs,
    EventRpcs,
    TargetHealthRpcs,
    ledger_subscriptions_pb2_grpc.LedgerSubscriptionsServiceServicer,
):
    pass


class ProvidersServicer(
    Servicing,
    SecretRpcs,
    TargetSecretRpcs,
    DomainRpcs,
    PlatformEmailRpcs,
    ledger_providers_pb2_grpc.LedgerProvidersServiceServicer,
):
    pass


class InboundServicer(Servicing, InboundRpcs, ledger_inbound_pb2_grpc.LedgerInboundServiceServicer):
    pass


def add_servicers(server: grpc.aio.Server, shared: Shared) -> list[str]:
    """Adds the ledger's five services to `server`; returns their full names."""
    ledger_jobs_pb2_grpc.add_LedgerJobsServiceServicer_to_server(JobsServicer(shared), server)
    ledger_tenants_pb2_grpc.add_LedgerTenantsServiceServicer_to_server(TenantsServicer(shared), server)
    ledger_subscriptions_pb2_grpc.add_LedgerSubscriptionsServiceServicer_to_server(
        SubscriptionsServicer(shared), server
    )
    ledger_providers_pb2_grpc.add_LedgerProvidersServiceServicer_to_server(ProvidersServicer(shared), server)
    ledger_inbound_pb2_grpc.add_LedgerInboundServiceServicer_to_server(InboundServicer(shared), server)
    return [
        ledger_jobs_pb2.DESCRIPTOR.services_by_name["LedgerJobsService"].full_name,
        ledger_tenants_pb2.DESCRIPTOR.services_by_name["LedgerTenantsService"].full_name,
        ledger_subscriptions_pb2.DESCRIPTOR.services_by_name["LedgerSubscriptionsService"].full_name,
        ledger_providers_pb2.DESCRIPTOR.services_by_name["LedgerProvidersService"].full_name,
        ledger_inbound_pb2.DESCRIPTOR.services_by_name["LedgerInboundService"].full_name,
    ]
