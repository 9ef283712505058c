"""`herald run ledger`: migrates the schema, then serves LedgerService."""

from __future__ import annotations

from herald.service import ServiceRuntime, run_service
from herald.v1 import ledger_pb2, ledger_pb2_grpc
from herald_ledger.db.engine import create_engine
from herald_ledger.migrate import upgrade
from herald_ledger.servicer import LedgerServicer


async def build(runtime: ServiceRuntime) -> None:
    await upgrade(runtime.settings.database_url)
    engine = create_engine(runtime.settings.database_url)
    ledger_pb2_grpc.add_LedgerServiceServicer_to_server(LedgerServicer(engine), runtime.grpc.server)
    runtime.grpc.register([ledger_pb2.DESCRIPTOR.services_by_name["LedgerService"].full_name])
    runtime.on_stop(engine.dispose)


def run() -> None:
    run_service("ledger", build)
