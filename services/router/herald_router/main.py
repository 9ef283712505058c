"""`herald run router`."""

from __future__ import annotations

from herald.links import open_links
from herald.service import ServiceRuntime, run_service
from herald.telemetry.jetstream_metrics import JetStreamCollector
from herald.v1 import router_pb2, router_pb2_grpc
from herald_router.fanout import SubscriptionCache
from herald_router.intake import Intake
from herald_router.servicer import RouterServicer


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    _channel, ledger, nc, js = await open_links(runtime)
    # Fan-out cache: a tenant's entry is dropped when the ledger announces a change to its
    # targets, filters or subscriptions.
    subscriptions = SubscriptionCache(ledger)
    await nc.subscribe(settings.subjects().control("subscriptions"), cb=subscriptions.on_change)
    servicer = RouterServicer(ledger, subscriptions)
    intake = Intake(settings, js, ledger, servicer)
    await intake.ensure()
    runtime.add_loop(lambda: intake.run(runtime.stopping))
    router_pb2_grpc.add_RouterServiceServicer_to_server(servicer, runtime.grpc.server)
    runtime.grpc.register([router_pb2.DESCRIPTOR.services_by_name["RouterService"].full_name])
    # The router passes submissions on to the ledger: a ledger away is its callers' answer too.
    runtime.grpc.relay_downstream()
    # Stream depth, consumer lag and dead-letter depth for /metrics (see docs/operations.md).
    jetstream_metrics = JetStreamCollector.for_settings(settings).register()
    runtime.add_loop(lambda: jetstream_metrics.run(js, runtime.stopping))


def run() -> None:
    run_service("router", build)
