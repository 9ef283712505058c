"""What each ledger rejection of a submission means, in one table: the problem it is on the
surfaces (its `kind`, the problem type the gateway's errors carry), the reason label the
router counts it under, and the detail said when the ledger gave none. Every path that turns a
rejection into an answer (one submission, a batch item, an event) reads it here, so they
cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass

from herald.v1 import ledger_pb2


@dataclass(frozen=True)
class RejectionMeaning:
    kind: str
    label: str
    default_detail: str


QUOTA = RejectionMeaning("quota-exceeded", "quota", "monthly quota reached")
REJECTIONS: dict[int, RejectionMeaning] = {
    ledger_pb2.REJECTION_QUOTA_EXCEEDED: QUOTA,
    ledger_pb2.REJECTION_SENDER_DOMAIN_UNVERIFIED: RejectionMeaning(
        "sender-domain-unverified", "sender_domain", "the sending domain is not verified"
    ),
    ledger_pb2.REJECTION_IDEMPOTENCY_MISMATCH: RejectionMeaning(
        "idempotency-mismatch", "idempotency", "the key was used with a different request body or route"
    ),
    ledger_pb2.REJECTION_IDEMPOTENCY_IN_FLIGHT: RejectionMeaning(
        "idempotency-in-flight", "idempotency", "a request with this key is in progress; retry shortly"
    ),
    ledger_pb2.REJECTION_TENANT_DISABLED: RejectionMeaning(
        "unauthenticated", "tenant_disabled", "the tenant is disabled"
    ),
    ledger_pb2.REJECTION_UNSTORABLE: RejectionMeaning(
        "invalid-request", "unstorable", "a value of the request cannot be stored"
    ),
}


def meaning_of(rejection: int) -> RejectionMeaning:
    """A rejection this build does not know (a newer ledger) is counted and answered as a quota refusal."""
    return REJECTIONS.get(rejection, QUOTA)
