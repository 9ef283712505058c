"""Subject names. Work subjects carry class, priority and tenant, in that order,
so consumers can filter by class and priority and later schedule by tenant:

    <prefix>.work.<class>.<priority>.<tenant>
    <prefix>.dlq.<class>.<tenant>
    <prefix>.control.<topic>          (core NATS, not stored: cache invalidations)
"""

from __future__ import annotations

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


class Subjects:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def work(self, work_class: WorkClass, priority: int, tenant_id: str) -> str:
        return f"{self.prefix}.work.{work_class}.{PRIORITY_TOKENS.get(priority, 'normal')}.{tenant_id}"

    def work_filter(self, work_class: WorkClass) -> str:
        return f"{self.prefix}.work.{work_class}.>"

    def all_work(self) -> str:
        return f"{self.prefix}.work.>"

    def dead_letter(self, work_class: WorkClass, tenant_id: str) -> str:
        return f"{self.prefix}.dlq.{work_class}.{tenant_id}"

    def all_dead_letters(self) -> str:
        return f"{self.prefix}.dlq.>"

    def control(self, topic: str) -> str:
        return f"{self.prefix}.control.{topic}"
