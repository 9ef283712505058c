"""EraseTenant: a tenant's rows, then what it has under way, then what the bus holds of it.

1. The rows go in one transaction with the erasure's audit entry (herald_ledger.store.erasure).
   From the commit on, every sender's start of one of its jobs is refused (the job is unknown),
   every write for it fails on its foreign key, and every read of it is NOT_FOUND.
2. The change notifications go out: gateways drop the tenant's cached keys (its keys are refused
   from then on), senders drop started jobs of the tenant before their call, and every other
   cache of the tenant's configuration drops it.
3. The deliveries of its jobs that senders had started (herald_ledger.inflight) are waited for,
   up to the longest call a sender makes: a call already made ends before the receipt.
4. Then the bus (herald.bus.erasure): purged after the wait, so a dead letter a last call
   published on its way out goes too.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from herald.bus.erasure import erase_tenant as erase_bus
from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_tenants_pb2
from herald_ledger.convert import timestamp
from herald_ledger.inflight import InFlight
from herald_ledger.notifications import (
    INBOUND,
    PROVIDERS,
    SUBSCRIPTIONS,
    TENANTS,
    WEBHOOK_SECRETS,
    WEBHOOK_SETTINGS,
    Notifier,
)
from herald_ledger.outbox import Outbox
from herald_ledger.rpc.access import ACTOR_KINDS
from herald_ledger.rpc.common import Context, Rpcs
from herald_ledger.store import erasure as erasure_store

# Every cache of a tenant's configuration, told it is gone (TENANTS with `erased`: the senders
# drop its started jobs too).
CACHES = (TENANTS, WEBHOOK_SECRETS, PROVIDERS, SUBSCRIPTIONS, WEBHOOK_SETTINGS, INBOUND)
# A start another replica answered just before the commit is announced to this one within this.
ANNOUNCE_GRACE_S = 0.1
POLL_S = 0.05
# Beyond the longest call a sender makes, what its end takes to be recorded and announced.
CALL_END_MARGIN_S = 1.0


class ErasureRpcs(Rpcs):
    engine: AsyncEngine
    notifier: Notifier
    inflight: InFlight
    outbox: Outbox

    async def EraseTenant(
        self, request: ledger_tenants_pb2.EraseTenantRequest, context: Context
    ) -> ledger_tenants_pb2.EraseTenantResponse:
        tenant_id = parse_id(request.tenant_id)
        if tenant_id is None:
            await abort_not_found(context, "tenant")
        by = request.erased_by
        if by.actor_kind not in ACTOR_KINDS or not by.actor_id or not by.action:
            await abort_invalid(context, [("erased_by", "actor_kind (key|operator), actor_id and action are required")])
        erased_by = {
            "actor_kind": by.actor_kind,
            "actor_id": by.actor_id,
            "actor_name": by.actor_name,
            "action": by.action,
            "address": by.address,
        }
        erased = await self.write(erasure_store.erase_rows, tenant_id, erased_by)
        if erased is None:
            await abort_not_found(context, "tenant")
        erased_at = datetime.now(UTC)
        for topic in CACHES:
            await self.notifier.publish(topic, tenant_id=str(tenant_id), erased="true")
        awaited, unfinished = await self._await_deliveries(erased.unfinished_job_ids)
        publisher = self.outbox.publisher
        bus: dict[str, int] = {}
        failed = ["bus"]
        if publisher.nc is not None and publisher.nc.is_connected:
            bus, failed = await erase_bus(
                publisher.nc,
                publisher.settings,
                publisher.payloads,
                tenant_id,
                erased.unfinished_job_ids,
                erased.target_ids,
            )
        receipt = common_pb2.ErasureReceipt(
            tenant_id=str(tenant_id),
            tenant_hash=erasure_store.tenant_hash(tenant_id),
            erased_at=timestamp(erased_at),
            rows=erased.rows,
            bus=bus,
            deliveries_awaited=awaited,
            deliveries_unfinished=unfinished,
            bus_not_removed=failed,
        )
        return ledger_tenants_pb2.EraseTenantResponse(receipt=receipt)

    async def _await_deliveries(self, job_ids: Sequence[uuid.UUID]) -> tuple[int, int]:
        """(started deliveries of these jobs that ended, those still unheard of at the bound)."""
        if not job_ids:
            return 0, 0
        await asyncio.sleep(ANNOUNCE_GRACE_S)
        ids = set(job_ids)
        under_way = ids.intersection(self.inflight.delivering())
        started = len(under_way)
        settings = self.outbox.settings
        deadline = time.monotonic() + max(settings.webhook_timeout_s, settings.email_send_timeout_s) + CALL_END_MARGIN_S
        while under_way and time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
            under_way.intersection_update(self.inflight.delivering())
        return started - len(under_way), len(under_way)
