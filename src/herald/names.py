"""The names the HTTP API, the console and the CLI give the protobuf enums: one table per enum,
both ways, so a value is spelled the same on every surface (the gRPC surface uses the enums)."""

from __future__ import annotations

from herald.v1 import common_pb2


def _reverse(names: dict[int, str]) -> dict[str, int]:
    return {name: value for value, name in names.items()}


PRIORITY_NAMES: dict[int, str] = {
    common_pb2.PRIORITY_LOW: "low",
    common_pb2.PRIORITY_NORMAL: "normal",
    common_pb2.PRIORITY_CRITICAL: "critical",
}
PRIORITY_VALUES = _reverse(PRIORITY_NAMES)
STATUS_NAMES: dict[int, str] = {
    common_pb2.JOB_STATUS_SUPPRESSED: "suppressed",
    common_pb2.JOB_STATUS_PENDING: "pending",
    common_pb2.JOB_STATUS_QUEUED: "queued",
    common_pb2.JOB_STATUS_DELIVERING: "delivering",
    common_pb2.JOB_STATUS_DELIVERED: "delivered",
    common_pb2.JOB_STATUS_FAILED: "failed",
    common_pb2.JOB_STATUS_BOUNCED: "bounced",
    common_pb2.JOB_STATUS_COMPLAINED: "complained",
    common_pb2.JOB_STATUS_SKIPPED: "skipped",
}
STATUS_VALUES = _reverse(STATUS_NAMES)
CHANNEL_NAMES: dict[int, str] = {
    common_pb2.CHANNEL_WEBHOOK: "webhook",
    common_pb2.CHANNEL_EMAIL: "email",
    common_pb2.CHANNEL_PLATFORM_EMAIL: "platform_email",
}
CHANNEL_VALUES = _reverse(CHANNEL_NAMES)
PLAN_NAMES: dict[int, str] = {
    common_pb2.PLAN_FREE: "free",
    common_pb2.PLAN_INDIE: "indie",
    common_pb2.PLAN_STARTUP: "startup",
}
PLAN_VALUES = _reverse(PLAN_NAMES)
OUTCOME_NAMES: dict[int, str] = {
    common_pb2.ATTEMPT_OUTCOME_SUCCEEDED: "succeeded",
    common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE: "transient_failure",
    common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE: "permanent_failure",
    common_pb2.ATTEMPT_OUTCOME_SKIPPED: "skipped",
}
PROVIDER_NAMES: dict[int, str] = {
    common_pb2.EMAIL_PROVIDER_SENDGRID: "sendgrid",
    common_pb2.EMAIL_PROVIDER_RESEND: "resend",
    common_pb2.EMAIL_PROVIDER_POSTMARK: "postmark",
    common_pb2.EMAIL_PROVIDER_SMTP: "smtp",
}
PROVIDER_VALUES = _reverse(PROVIDER_NAMES)
TLS_NAMES: dict[int, str] = {
    common_pb2.SMTP_TLS_MODE_STARTTLS: "starttls",
    common_pb2.SMTP_TLS_MODE_IMPLICIT: "implicit",
    common_pb2.SMTP_TLS_MODE_NONE: "none",
}
TLS_VALUES = _reverse(TLS_NAMES)
