"""Plans and their limits, the one table every service reads.

A limit of None means unlimited. Operators override any of the three per tenant;
an override replaces the plan's value (and may itself be "unlimited").
"""

from __future__ import annotations

from dataclasses import dataclass

from herald.names import PLAN_NAMES
from herald.v1 import common_pb2

RATE_WINDOW_S = 60.0


@dataclass(frozen=True)
class Limits:
    rate_per_min: int | None
    webhooks_per_month: int | None
    emails_per_month: int | None
    # FREE counts emails and webhooks against one shared allowance.
    shared_allowance: int | None = None


PLAN_LIMITS: dict[int, Limits] = {
    common_pb2.PLAN_FREE: Limits(rate_per_min=5, webhooks_per_month=None, emails_per_month=None, shared_allowance=100),
    common_pb2.PLAN_INDIE: Limits(rate_per_min=50, webhooks_per_month=4_000, emails_per_month=None),
    common_pb2.PLAN_STARTUP: Limits(rate_per_min=200, webhooks_per_month=15_000, emails_per_month=None),
}

_PLANS = tuple(PLAN_NAMES.values())
# Retention overrides are whole days within these bounds (a tenant's override, a plan's default).
MIN_RETENTION_DAYS, MAX_RETENTION_DAYS = 1, 36_500


def plan_days(value: str) -> dict[str, int]:
    """`free=7,indie=30,startup=90` as {plan: days}; every plan named once, days within bounds."""
    found: dict[str, int] = {}
    for part in value.split(","):
        plan, _, days = part.strip().partition("=")
        if plan not in _PLANS or plan in found or not days.strip().isdigit():
            raise ValueError(f"retention: {part.strip()!r} is not <plan>=<days> for a plan of {', '.join(_PLANS)}")
        found[plan] = int(days)
        if not MIN_RETENTION_DAYS <= found[plan] <= MAX_RETENTION_DAYS:
            raise ValueError(f"retention: {plan} must keep {MIN_RETENTION_DAYS}-{MAX_RETENTION_DAYS} days")
    if set(found) != set(_PLANS):
        raise ValueError(f"retention: name every plan ({', '.join(_PLANS)})")
    return found


# The operator's overrides a tenant row may hold (NULL: the plan's): limits, then retention in days.
LIMIT_OVERRIDES = ("rate_per_min", "webhooks_per_month", "emails_per_month")
RETENTION_OVERRIDES = ("payload_retention_days", "row_retention_days")
TENANT_OVERRIDES = LIMIT_OVERRIDES + RETENTION_OVERRIDES

# Stored override values: absent means "the plan's", this value means "unlimited".
UNLIMITED = -1


def effective_limits(
    plan: int, rate_override: int | None, webhooks_override: int | None, emails_override: int | None
) -> Limits:
    base = PLAN_LIMITS.get(plan, PLAN_LIMITS[common_pb2.PLAN_FREE])

    def pick(override: int | None, default: int | None) -> int | None:
        if override is None:
            return default
        return None if override == UNLIMITED else override

    overridden = webhooks_override is not None or emails_override is not None
    return Limits(
        rate_per_min=pick(rate_override, base.rate_per_min),
        webhooks_per_month=pick(webhooks_override, base.webhooks_per_month),
        emails_per_month=pick(emails_override, base.emails_per_month),
        # An operator who sets either monthly limit replaces the shared FREE allowance.
        shared_allowance=None if overridden else base.shared_allowance,
    )
