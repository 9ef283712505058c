"""`herald run ledger`: migrates the schema, then serves the ledger's services (herald_ledger.servicer), publishes the
work messages of the jobs it writes and Herald's own events to tenants, and runs the outbox, the reconciler and the
purge of acknowledged work (herald.bus.acknowledged)."""

from __future__ import annotations

import asyncio
import logging

from nats.aio.msg import Msg
from nats.js.api import RetentionPolicy
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.bus.acknowledged import AcknowledgedPurge
from herald.bus.connection import connect_with_retry
from herald.bus.streams import ensure_streams, topology
from herald.bus.subjects import Subjects
from herald.bus.work import WorkPublisher
from herald.config import Settings
from herald.service import ServiceRuntime, run_service
from herald_ledger import statistics
from herald_ledger.db.engine import create_engine
from herald_ledger.db.outage import database_unreachable
from herald_ledger.db.refusals import unstorable_value
from herald_ledger.inflight import InFlight
from herald_ledger.maintenance import PRUNED_BY_AGE, prune_by_age, run_maintenance
from herald_ledger.migrate import upgrade
from herald_ledger.notifications import DELIVERIES, TENANTS, Notifier
from herald_ledger.operational import Announcer
from herald_ledger.outbox import Outbox
from herald_ledger.parked_lanes import ParkedLanes
from herald_ledger.reconciler import Reconciler
from herald_ledger.retention import Retention
from herald_ledger.servicer import Shared, add_servicers
from herald_ledger.store import operators as operator_store
from herald_ledger.store.operational import prune_published
from herald_ledger.store.plans import end_expired_plans
from herald_ledger.store.platform_email import PlatformMail

log = logging.getLogger("herald.ledger")


async def join_bus(
    settings: Settings,
    notifier: Notifier,
    publisher: WorkPublisher,
    inflight: InFlight,
    acknowledged: AcknowledgedPurge,
    stopping: asyncio.Event,
) -> None:
    """Connects in the background: the ledger serves without the bus (jobs are written
    PENDING for the outbox), and publishing and notifications start once it is reachable."""
    nc = await connect_with_retry(settings, "ledger", stopping)
    notifier.nc = nc
    js = nc.jetstream(timeout=5)
    try:
        await ensure_streams(js, settings)
        if (await js.stream_info(acknowledged.stream)).config.retention == RetentionPolicy.LIMITS:
            acknowledged.nc = nc  # a work queue removes what is acknowledged itself
    except Exception as error:
        # The router ensures them too; until they exist, publishes fail and jobs wait PENDING.
        log.warning("work streams not ensured", extra={"error": repr(error)})

    async def on_deliveries(message: Msg) -> None:
        inflight.receive(message.data)

    await nc.subscribe(settings.subjects().control(DELIVERIES), cb=on_deliveries)
    publisher.attach(nc)


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    ring = settings.key_ring() if settings.master_keys else None
    if ring is None:
        log.warning("no master keys configured: provider credentials and webhook secrets are unavailable")
    await upgrade(settings.database_url)
    engine = create_engine(settings.database_url)
    await ensure_first_operator(engine, settings.first_operator)
    notifier = Notifier(None, Subjects(settings.bus_prefix))
    platform = PlatformMail(settings.platform_email_from) if settings.platform_email_provider else None
    publisher = WorkPublisher(settings)
    outbox = Outbox(engine, settings, publisher)
    # A start nobody ends (its sender died) is forgotten after the longest redelivery wait.
    inflight = InFlight(2 * max(settings.webhook_ack_wait_s, settings.email_ack_wait_s))
    announcer = Announcer(engine, settings, publisher)
    shared = Shared(
        engine,
        notifier,
        ring,
        settings.webhook_secret_overlap_s,
        outbox,
        inflight,
        announcer,
        platform,
        parked_lanes=ParkedLanes(settings.webhook_park_recheck_s),
    )
    served = add_servicers(runtime.grpc.server, shared)
    runtime.grpc.register(served)
    runtime.grpc.refuse_as_invalid(unstorable_value)
    runtime.grpc.answer_unavailable(database_unreachable)
    acknowledged = AcknowledgedPurge(topology(settings).work_stream)
    runtime.add_loop(lambda: join_bus(settings, notifier, publisher, inflight, acknowledged, runtime.stopping))
    runtime.add_loop(lambda: run_maintenance([acknowledged.purge], settings.work_purge_interval_s, runtime.stopping))
    runtime.add_loop(lambda: outbox.run(runtime.stopping))
    runtime.add_loop(lambda: announcer.run(runtime.stopping))
    reconciler = Reconciler(engine, settings, publisher, inflight, shared.parked_lanes)
    runtime.add_loop(lambda: run_maintenance([reconciler.reconcile], settings.reconcile_interval_s, runtime.stopping))

    async def prune() -> None:
        for table in PRUNED_BY_AGE:
            await prune_by_age(engine, table)
        async with engine.begin() as conn:
            await prune_published(conn)

    async def end_plans() -> None:
        async with engine.begin() as conn:
            ended = await end_expired_plans(conn)
        for tenant_id in ended:  # gateways and routers forget the tenant's cached plan
            await notifier.publish(TENANTS, tenant_id=str(tenant_id))

    runtime.add_loop(
        lambda: run_maintenance([prune, end_plans], settings.ledger_maintenance_interval_s, runtime.stopping)
    )
    retention = Retention(engine, settings)

    async def analyze_filling_days() -> None:
        await statistics.refresh(engine)

    runtime.add_loop(
        lambda: run_maintenance([analyze_filling_days], settings.partition_stats_interval_s, runtime.stopping)
    )
    runtime.add_loop(lambda: run_maintenance([retention.run], settings.retention_interval_s, runtime.stopping))
    runtime.on_stop(engine.dispose)
    runtime.on_stop(notifier.close)
    # First of the hooks: the work messages still awaiting the bus are settled while the
    # database is there (one never acknowledged goes back to PENDING for the outbox).
    runtime.on_stop(lambda: outbox.settle(settings.shutdown_grace_s))


async def ensure_first_operator(engine: AsyncEngine, first_operator: str) -> None:
    """Makes the operator `HERALD_FIRST_OPERATOR` names (`name:<hex SHA-256 of its token>`) unless
    one of that name exists or existed: how a new installation gets the operator who makes the others."""
    if not first_operator:
        return
    name, _, digest = first_operator.partition(":")
    try:
        token_hash = bytes.fromhex(digest)
    except ValueError:
        token_hash = b""
    if not name or len(token_hash) != 32:
        raise ValueError("HERALD_FIRST_OPERATOR must be <name>:<hex SHA-256 of the token>")
    async with engine.begin() as conn:
        if await operator_store.create(conn, name, token_hash) is not None:
            log.info("first operator made", extra={"operator": name})


def run() -> None:
    run_service("ledger", build)
