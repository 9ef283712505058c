"""`herald run ledger`: migrates the schema, then serves LedgerService."""

from __future__ import annotations

import logging

from herald.bus.subjects import Subjects
from herald.service import ServiceRuntime, run_service
from herald.v1 import ledger_pb2, ledger_pb2_grpc
from herald_ledger.db.engine import create_engine
from herald_ledger.db.refusals import unstorable_value
from herald_ledger.migrate import upgrade
from herald_ledger.notifications import Notifier
from herald_ledger.servicer import LedgerServicer
from herald_ledger.store.platform_email import PlatformMail

log = logging.getLogger("herald.ledger")


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    ring = settings.key_ring() if settings.master_keys else None
    if ring is None:
        log.warning("no master keys configured: provider credentials and webhook secrets are unavailable")
    await upgrade(settings.database_url)
    engine = create_engine(settings.database_url)
    notifier = Notifier(None, Subjects(settings.bus_prefix))
    platform = PlatformMail(settings.platform_email_from) if settings.platform_email_provider else None
    servicer = LedgerServicer(engine, notifier, ring, settings.webhook_secret_overlap_s, platform)
    ledger_pb2_grpc.add_LedgerServiceServicer_to_server(servicer, runtime.grpc.server)
    runtime.grpc.register([ledger_pb2.DESCRIPTOR.services_by_name["LedgerService"].full_name])
    runtime.grpc.refuse_as_invalid(unstorable_value)
    runtime.add_loop(lambda: notifier.connect(settings.nats_url, runtime.stopping))
    runtime.on_stop(engine.dispose)
    runtime.on_stop(notifier.close)


def run() -> None:
    run_service("ledger", build)
