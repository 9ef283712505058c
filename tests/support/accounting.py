"""Every accepted job accounted for: what the loss checks of the fault tests read at the end of
a run. A job is delivered (once, or with its duplicates counted), failed with a reason, or still
scheduled with a time by which the bus must act on it (the reconciler's); anything else is lost."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from tests.support.infra import query
from tests.support.receiver import Receiver


@dataclass
class Accounts:
    accepted: int = 0
    delivered_once: int = 0
    delivered_with_duplicates: int = 0
    duplicates: int = 0
    failed_with_reason: int = 0
    scheduled: int = 0
    lost: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.accepted} accepted: {self.delivered_once} delivered once, {self.delivered_with_duplicates} "
            f"delivered with {self.duplicates} duplicate(s), {self.failed_with_reason} failed with a reason, "
            f"{self.scheduled} still scheduled, {len(self.lost)} lost"
        )


def account(database_url: str, ids: list[str], receivers: list[Receiver]) -> Accounts:
    """What became of each of `ids`, from the ledger's rows and the receivers' successful requests
    (answered 2xx by the receiver: what a tenant counts as delivered)."""
    arrived: Counter[str] = Counter()
    for receiver in receivers:
        with receiver._lock:
            arrived.update(r.headers.get("webhook-id", "") for r in receiver.requests if r.answered_ok)
    rows = query(
        database_url,
        "SELECT id::text, status, last_error, COALESCE(next_attempt_at, updated_at) AS due"
        " FROM jobs WHERE id = ANY($1::uuid[])",
        ids,
    )
    found = {row["id"]: row for row in rows}
    accounts = Accounts(accepted=len(ids))
    for job_id in ids:
        row = found.get(job_id)
        deliveries = arrived.get(job_id, 0)
        if row is not None and row["status"] == "DELIVERED" and deliveries >= 1:
            if deliveries == 1:
                accounts.delivered_once += 1
            else:
                accounts.delivered_with_duplicates += 1
                accounts.duplicates += deliveries - 1
        elif row is not None and row["status"] == "FAILED" and row["last_error"]:
            accounts.failed_with_reason += 1
        elif row is not None and row["status"] in ("PENDING", "QUEUED") and row["due"] is not None:
            accounts.scheduled += 1
        else:
            accounts.lost.append(job_id)
    return accounts


def wait_settled(database_url: str, ids: list[str], timeout: float) -> int:
    """Waits until every one of `ids` is DELIVERED or FAILED (or `timeout`); how many are."""
    deadline = time.monotonic() + timeout
    settled = 0
    while time.monotonic() < deadline:
        settled = query(
            database_url,
            "SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND status IN ('DELIVERED', 'FAILED')",
            ids,
        )[0][0]
        if settled == len(ids):
            break
        time.sleep(0.25)
    return int(settled)
