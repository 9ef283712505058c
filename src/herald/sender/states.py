"""The typed states a job passes through in the sender loop (`herald.sender.loop`): the work
message as parsed, the started job, and the conclusion the ledger records; and `HandBack`, the
way out of a phase that cannot go on now."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from nats.aio.msg import Msg

from herald.sender.slots import Place
from herald.v1 import common_pb2, ledger_jobs_pb2

# The ledger or the bus did not answer: the message comes back after this.
HAND_BACK_S = 2.0


class WorkMessage(Protocol):
    """What every work message carries (webhook_sender_pb2.WebhookDelivery, email_sender_pb2.EmailDelivery)."""

    job_id: str
    tenant_id: str
    run: int

    def ParseFromString(self, serialized: bytes, /) -> int: ...


Work = TypeVar("Work", bound=WorkMessage)  # the parsed work message
Prepared = TypeVar("Prepared")
Called = TypeVar("Called")
# What the ledger records for one attempt: an AttemptResult (webhooks) or a WalkRecord (email).
Record = TypeVar("Record", ledger_jobs_pb2.AttemptResult, ledger_jobs_pb2.WalkRecord)


@dataclass
class Counters:
    in_flight: int = 0
    delivered: int = 0
    failed: int = 0
    dead_lettered: int = 0


# The parked lanes of deliveries waiting for their turn behind their target's bound, and behind
# its rate limit: a closing circuit does not release them, and the ledger's recheck leaves them.
BOUND = "bound:"
PACED = "paced:"
TURN_LANES = (BOUND, PACED)


@dataclass(frozen=True)
class Park:
    """What `hold_back` answers for a delivery that must wait long: the ledger holds the job,
    off the bus (`ParkDeliveries`), released with `lane` or after `delay_s`. When the ledger
    cannot take it, the message waits on the bus for `fallback_s` instead."""

    lane: str
    delay_s: float
    fallback_s: float
    reason: str  # the metric's label: why it waits


class HandBack(Exception):
    """A phase cannot go on now (a body, a secret or a setting unavailable): the message goes
    back to the bus for `delay_s`, and no attempt is spent; or, with `park`, to the ledger."""

    def __init__(
        self, reason: str, delay_s: float = HAND_BACK_S, level: int = logging.WARNING, park: Park | None = None
    ) -> None:
        super().__init__(reason)
        self.delay_s = delay_s
        self.level = level
        self.park = park


@dataclass(frozen=True)
class Identity:
    job_id: str
    tenant_id: str
    run: int


@dataclass
class Job(Generic[Work]):
    message: Msg
    work: Work
    identity: Identity
    attempt: int  # this attempt's number, 1 for the first
    place: Place | None = None  # its place in the call slots (`herald.sender.slots`)


@dataclass
class Conclusion(Generic[Record]):
    """What the ledger records (`record.next_status` set) and what the bus is told."""

    record: Record
    # QUEUED: the message is NAKed with this delay and comes back for the next attempt (or,
    # from the sender's `park_from_s` on, acknowledged and parked in the ledger until then).
    retry_delay_s: float | None = None
    # The last attempt failed: into the dead-letter stream with this error, before the record.
    dead_letter_error: str | None = None

    def __post_init__(self) -> None:
        # The ledger keeps when the retry is due, so its reconciler knows when the bus must
        # have brought the message back (herald_ledger.reconciler).
        if self.retry_delay_s is not None:
            self.record.retry_delay_s = self.retry_delay_s

    @property
    def delivered(self) -> bool:
        return self.record.next_status == common_pb2.JOB_STATUS_DELIVERED
