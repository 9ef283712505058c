"""A tenant's monthly usage counters, as admission leaves them: one statement writes every
changed tenant of a batch, alone or riding in the insert of the jobs it counts (see
`job_creation.insert_jobs`), written once here for both."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class UsageWrite:
    """The counters of the tenants admission changed, for the month `period`."""

    period: str
    tenant_ids: list[uuid.UUID]
    webhooks: list[int]
    emails: list[int]

    def arguments(self) -> list[Any]:
        """The statement's arguments, in the order `set_usage` numbers them."""
        return [self.tenant_ids, self.webhooks, self.emails, self.period]


def set_usage(first: int = 1) -> str:
    """The update, its arguments numbered from `first` (so it can share a statement)."""
    a, b, c, d = range(first, first + 4)
    return f"""
    UPDATE usage_counters SET webhooks = u.webhooks, emails = u.emails
    FROM unnest(${a}::uuid[], ${b}::bigint[], ${c}::bigint[]) AS u(id, webhooks, emails)
    WHERE usage_counters.tenant_id = u.id AND usage_counters.period = ${d}
    """  # noqa: S608 (argument numbers only)


SET_USAGE = set_usage()


async def write_usage(driver: Any, usage: UsageWrite | None) -> None:
    """The update on its own (a statement of the caller's transaction on `driver`)."""
    if usage is not None:
        await driver.execute(SET_USAGE, *usage.arguments())
