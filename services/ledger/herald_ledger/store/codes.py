"""How enums are spelled in the database (short, readable names) and in protos."""

from __future__ import annotations

from herald.v1 import common_pb2
from herald_ledger.job_status import JobStatus

STATUS_TO_PROTO: dict[JobStatus, int] = {
    JobStatus.PENDING: common_pb2.JOB_STATUS_PENDING,
    JobStatus.QUEUED: common_pb2.JOB_STATUS_QUEUED,
    JobStatus.DELIVERING: common_pb2.JOB_STATUS_DELIVERING,
    JobStatus.DELIVERED: common_pb2.JOB_STATUS_DELIVERED,
    JobStatus.FAILED: common_pb2.JOB_STATUS_FAILED,
    JobStatus.SUPPRESSED: common_pb2.JOB_STATUS_SUPPRESSED,
    JobStatus.BOUNCED: common_pb2.JOB_STATUS_BOUNCED,
    JobStatus.COMPLAINED: common_pb2.JOB_STATUS_COMPLAINED,
}
STATUS_FROM_PROTO = {v: k for k, v in STATUS_TO_PROTO.items()}

CHANNEL_TO_PROTO = {
    "webhook": common_pb2.CHANNEL_WEBHOOK,
    "email": common_pb2.CHANNEL_EMAIL,
    "platform_email": common_pb2.CHANNEL_PLATFORM_EMAIL,
}
CHANNEL_FROM_PROTO = {v: k for k, v in CHANNEL_TO_PROTO.items()}

PRIORITY_TO_PROTO = {
    "low": common_pb2.PRIORITY_LOW,
    "normal": common_pb2.PRIORITY_NORMAL,
    "critical": common_pb2.PRIORITY_CRITICAL,
}
PRIORITY_FROM_PROTO = {v: k for k, v in PRIORITY_TO_PROTO.items()}

PLAN_TO_PROTO = {
    "free": common_pb2.PLAN_FREE,
    "indie": common_pb2.PLAN_INDIE,
    "startup": common_pb2.PLAN_STARTUP,
}
PLAN_FROM_PROTO = {v: k for k, v in PLAN_TO_PROTO.items()}

OUTCOME_TO_PROTO = {
    "succeeded": common_pb2.ATTEMPT_OUTCOME_SUCCEEDED,
    "transient_failure": common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE,
    "permanent_failure": common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE,
    # Email: the provider's circuit was open, so it was not called.
    "skipped": common_pb2.ATTEMPT_OUTCOME_SKIPPED,
}
OUTCOME_FROM_PROTO = {v: k for k, v in OUTCOME_TO_PROTO.items()}
