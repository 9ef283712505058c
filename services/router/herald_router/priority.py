"""The priority a submission runs at: the router's one decision about a job before the ledger admits it."""

from __future__ import annotations

from herald.v1 import common_pb2, router_pb2


def effective_priority(submission: router_pb2.Submission) -> int:
    """Free-plan traffic is always LOW; platform email is always CRITICAL;
    otherwise what the tenant asked for, NORMAL when unsaid."""
    if submission.channel == common_pb2.CHANNEL_PLATFORM_EMAIL:
        return common_pb2.PRIORITY_CRITICAL
    if submission.plan == common_pb2.PLAN_FREE:
        return common_pb2.PRIORITY_LOW
    if submission.requested_priority == common_pb2.PRIORITY_UNSPECIFIED:
        return common_pb2.PRIORITY_NORMAL
    return submission.requested_priority
