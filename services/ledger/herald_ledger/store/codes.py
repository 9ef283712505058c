"""How enums are spelled in the database (short, readable names) and in protos: each
database name is the proto value's name without its prefix, in lower case
(`webhook` is CHANNEL_WEBHOOK, `transient_failure` ATTEMPT_OUTCOME_TRANSIENT_FAILURE)."""

from __future__ import annotations

from typing import TypeVar

from herald.v1 import common_pb2
from herald_ledger.job_status import JobStatus

K = TypeVar("K")


def spelled(prefix: str, *names: str) -> dict[str, int]:
    """The proto value of each database name (an unknown name fails at import)."""
    return {name: int(getattr(common_pb2, f"{prefix}_{name.upper()}")) for name in names}


def reversed_codes(to_proto: dict[K, int]) -> dict[int, K]:
    return {v: k for k, v in to_proto.items()}


STATUS_TO_PROTO: dict[JobStatus, int] = {s: int(getattr(common_pb2, f"JOB_STATUS_{s.name}")) for s in JobStatus}
STATUS_FROM_PROTO = reversed_codes(STATUS_TO_PROTO)
CHANNEL_TO_PROTO = spelled("CHANNEL", "webhook", "email", "platform_email")
CHANNEL_FROM_PROTO = reversed_codes(CHANNEL_TO_PROTO)
PRIORITY_TO_PROTO = spelled("PRIORITY", "low", "normal", "critical")
PRIORITY_FROM_PROTO = reversed_codes(PRIORITY_TO_PROTO)
PLAN_TO_PROTO = spelled("PLAN", "free", "indie", "startup")
PLAN_FROM_PROTO = reversed_codes(PLAN_TO_PROTO)
# `skipped` (email): the provider's circuit was open, so it was not called.
OUTCOME_TO_PROTO = spelled("ATTEMPT_OUTCOME", "succeeded", "transient_failure", "permanent_failure", "skipped")
OUTCOME_FROM_PROTO = reversed_codes(OUTCOME_TO_PROTO)
PROVIDER_TO_PROTO = spelled("EMAIL_PROVIDER", "sendgrid", "resend", "postmark", "smtp")
PROVIDER_FROM_PROTO = reversed_codes(PROVIDER_TO_PROTO)
TLS_TO_PROTO = spelled("SMTP_TLS_MODE", "starttls", "implicit", "none")
TLS_FROM_PROTO = reversed_codes(TLS_TO_PROTO)
