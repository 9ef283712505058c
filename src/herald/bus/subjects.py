"""Subject names. Work subjects carry class, priority, fairness lane and tenant:

    <prefix>.work.<class>.<priority>.<lane>.<tenant>
    <prefix>.dlq.<class>.<tenant>
    <prefix>.inbound.<provider>.<tenant>  (verified, normalised provider events)
    <prefix>.intake.events.<tenant>  (tenant events from internal backends)
    <prefix>.intake.operational.<tenant>  (Herald's own events to the tenant; the ledger's)
    <prefix>.control.<topic>          (core NATS, not stored: cache invalidations)

The lane is a hash of the tenant onto a fixed number of lanes (stochastic fair
queueing): every (class, priority, lane) has its own durable consumer, so a
tenant's backlog fills only its own lane and senders serve lanes round-robin.
The number of lanes must be the same for the router and the senders.
"""

from __future__ import annotations

import zlib
from enum import StrEnum

from herald.v1 import common_pb2


class WorkClass(StrEnum):
    WEBHOOK = "webhook"
    EMAIL = "email"
    PLATFORM_EMAIL = "platform_email"


PRIORITY_TOKENS: dict[int, str] = {
    common_pb2.PRIORITY_CRITICAL: "critical",
    common_pb2.PRIORITY_NORMAL: "normal",
    common_pb2.PRIORITY_LOW: "low",
}

CHANNEL_CLASSES: dict[int, WorkClass] = {
    common_pb2.CHANNEL_WEBHOOK: WorkClass.WEBHOOK,
    common_pb2.CHANNEL_EMAIL: WorkClass.EMAIL,
    common_pb2.CHANNEL_PLATFORM_EMAIL: WorkClass.PLATFORM_EMAIL,
}


def lane_of(tenant_id: str, lanes: int) -> int:
    return zlib.crc32(tenant_id.encode()) % lanes


class Subjects:
    def __init__(self, prefix: str, lanes: int = 16) -> None:
        self.prefix = prefix
        self.lanes = lanes

    def work(self, work_class: WorkClass, priority: int, tenant_id: str) -> str:
        token = PRIORITY_TOKENS.get(priority, "normal")
        return f"{self.prefix}.work.{work_class}.{token}.{lane_of(tenant_id, self.lanes)}.{tenant_id}"

    def work_filter(self, work_class: WorkClass) -> str:
        return f"{self.prefix}.work.{work_class}.>"

    def lane_filter(self, work_class: WorkClass, priority_token: str, lane: int) -> str:
        return f"{self.prefix}.work.{work_class}.{priority_token}.{lane}.>"

    def all_work(self) -> str:
        return f"{self.prefix}.work.>"

    def dead_letter(self, work_class: WorkClass, tenant_id: str) -> str:
        return f"{self.prefix}.dlq.{work_class}.{tenant_id}"

    def all_dead_letters(self) -> str:
        return f"{self.prefix}.dlq.>"

    def inbound(self, provider: str, tenant_id: str) -> str:
        return f"{self.prefix}.inbound.{provider}.{tenant_id}"

    def all_inbound(self) -> str:
        return f"{self.prefix}.inbound.>"

    def intake_events(self, tenant_id: str) -> str:
        """Tenant events internal backends publish (the router fans them out)."""
        return f"{self.prefix}.intake.events.{tenant_id}"

    def intake_operational(self, tenant_id: str) -> str:
        """Herald's own events to a tenant (herald.*): only the ledger publishes here."""
        return f"{self.prefix}.intake.operational.{tenant_id}"

    def control(self, topic: str) -> str:
        return f"{self.prefix}.control.{topic}"
