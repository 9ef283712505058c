"""The records of a fault run the audit reads, and its checks of what reached the receivers
(right tenant, every DELIVERED job really answered, nothing after the fact, ordering keys kept)
and the email providers' stand-ins. `Audit` (audit.py) adds the rest and runs them all.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.resilience.load import LoadGenerator, LogicalJob
from tests.resilience.receivers import FlakyReceiver, FlakySendGrid
from tests.standins.sendgrid import SEND_PATH
from tests.support.infra import query

if TYPE_CHECKING:
    from tests.resilience.audit import Windows

# A receiver request arriving this long after the ledger recorded its job DELIVERED is a
# delivery after the fact (the ledger's timestamp is its transaction's start).
LATE_SLACK_S = 2.0


@dataclass
class DeliveryAudit:
    jobs: list[LogicalJob]
    generator: LoadGenerator
    windows: Windows
    rows: list[Any]
    tenant_ids: list[str]
    receivers: Sequence[FlakyReceiver]
    sendgrids: Sequence[FlakySendGrid]
    database_url: str
    nats_url: str
    bus_prefix: str
    problems: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    figures: dict[str, int | str] = field(default_factory=dict)
    email_problems: list[str] = field(default_factory=list)
    email_figures: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_key = {job.key: job for job in self.jobs}
        self.by_id = {r["id"]: r for r in self.rows}
        self.accepted = [j for j in self.jobs if j.outcome == "accepted"]

    # -- the receivers: right tenant, every DELIVERED job really answered, nothing after the fact.
    def receivers_view(self) -> None:
        delivered_at = {
            r[0]: float(r[1])
            for r in query(
                self.database_url,
                "SELECT job_id::text, extract(epoch FROM min(created_at)) FROM job_events WHERE to_status = 'DELIVERED'"
                " AND job_id IN (SELECT id FROM jobs WHERE tenant_id = ANY($1::uuid[])) GROUP BY job_id",
                self.tenant_ids,
            )
        }
        self.hits: dict[str, list[Any]] = defaultdict(list)
        cross = truncated = 0
        for index, receiver in enumerate(self.receivers):
            for hit in receiver.snapshot():
                self.hits[hit.webhook_id].append(hit)
                owner = self.by_id.get(hit.webhook_id)
                said = hit.payload.get("tenant") if isinstance(hit.payload, dict) else None
                truncated += hit.truncated
                if hit.truncated and owner is not None and owner["tenant_id"] == self.tenant_ids[index]:
                    continue  # a body cut short by a killed sender: its owner is known from the webhook-id
                if owner is None or owner["tenant_id"] != self.tenant_ids[index] or said != self.tenant_ids[index]:
                    cross += 1
                    self.problems.append(
                        f"the receiver of tenant {index} got {hit.path} (webhook-id {hit.webhook_id}, payload tenant "
                        f"{said}), a job of {owner['tenant_id'] if owner else 'nobody'}"
                    )
        duplicates = late = phantom = unexpected = 0
        for r in self.rows:
            if r["channel"] != "webhook":
                continue
            hits = self.hits.get(r["id"], [])
            # A 2xx the receiver wrote, whether or not the sender was still there to read it.
            duplicates += max(sum(200 <= abs(h.status) < 300 for h in hits) - 1, 0)
            job = self.by_key.get(r["idempotency_key"] or "")
            if r["status"] == "DELIVERED":
                if not any(200 <= h.status < 300 for h in hits):
                    phantom += 1
                    self.problems.append(f"job {r['id']} DELIVERED, but its receiver never answered it 2xx")
                recorded = delivered_at.get(r["id"])
                after = [h for h in hits if recorded is not None and h.arrived_at > recorded + LATE_SLACK_S]
                if after:
                    late += len(after)
                    self.problems.append(
                        f"job {r['id']}: {len(after)} request(s) reached the receiver "
                        f"{after[0].arrived_at - (recorded or 0):.1f}s after the ledger recorded it DELIVERED"
                    )
                if job is not None and job.mode in ("fail", "reject"):
                    self.problems.append(f"job {r['id']} ({job.mode}) DELIVERED, its receiver never accepts it")
            # Tenant 0's receiver is stalled on purpose: its timeouts may use up a job's attempts.
            if r["status"] == "FAILED" and job is not None and job.mode in ("ok", "slow", "flaky") and job.tenant != 0:
                unexpected += 1
                self.problems.append(f"job {r['id']} ({job.mode}, tenant {job.tenant}) FAILED: {r['last_error']}")
        self.cross_tenant = cross
        self.figures.update(
            {
                "delivered to another tenant (must be 0)": cross,
                "duplicate deliveries at receivers (at least once)": duplicates,
                "requests cut off mid-body (sender killed)": truncated,
                "delivered again after recorded DELIVERED (must be 0)": late,
                "DELIVERED without a 2xx at the receiver (must be 0)": phantom,
                "failed although the receiver would accept (must be 0)": unexpected,
            }
        )

    # -- ordering keys: kept by the ledger, and the first accepted delivery of each job in submission (id) order.
    def ordering(self) -> None:
        sent = [j for j in self.accepted if j.ordering_key]
        kept = [r for r in self.rows if r["ordering_key"]]
        if sent and not kept:
            self.problems.append(
                f"ordering keys dropped: {len(sent)} webhook jobs were sent with an ordering_key, "
                "the ledger stored it for none"
            )
        violations = 0
        keys = sorted({r["ordering_key"] for r in kept})
        for key in keys:
            keyed = sorted(
                (r for r in kept if r["ordering_key"] == key and r["status"] == "DELIVERED"), key=lambda r: r["id"]
            )
            firsts = [min(h.arrived_at for h in self.hits[r["id"]] if 200 <= abs(h.status) < 300) for r in keyed]
            if firsts != sorted(firsts):
                violations += 1
                self.problems.append(f"ordering key {key}: deliveries out of submission order")
        self.figures["ordering keys delivered out of order (must be 0)"] = (
            f"{violations} of {len(keys)} keys ({len(sent)} jobs sent with a key, {len(kept)} stored with one)"
        )

    # -- emails: provider stand-ins, dead letters.
    def emails(self) -> None:
        email_rows = [r for r in self.rows if r["channel"] == "email"]
        if not any(j.kind == "email" for j in self.jobs):
            return
        sent: dict[int, set[str]] = {}
        duplicates = 0
        for index, sendgrid in enumerate(self.sendgrids):
            texts: Counter[str] = Counter()
            sent[index] = set()
            for message_id, body in list(sendgrid.sent):
                text = " ".join(str(part.get("value", "")) for part in body.get("content", []))
                if not text.startswith("tenant="):
                    continue  # the probe
                sent[index].add(message_id)
                texts[text] += 1
                if f"tenant={self.tenant_ids[index]} " not in text:
                    self.cross_tenant += 1
                    self.email_problems.append(f"tenant {index}'s provider sent another tenant's email: {text}")
            duplicates += sum(n - 1 for n in texts.values() if n > 1)
        for r in email_rows:
            index = self.tenant_ids.index(r["tenant_id"])
            if r["status"] == "DELIVERED" and r["provider_message_id"] not in sent[index]:
                self.email_problems.append(f"email job {r['id']} DELIVERED, its provider has no such message")
        self.email_figures = {
            "accepted": sum(1 for j in self.accepted if j.kind == "email"),
            "delivered": sum(1 for r in email_rows if r["status"] == "DELIVERED"),
            "failed": sum(1 for r in email_rows if r["status"] == "FAILED"),
            "duplicate sends at providers (at least once)": duplicates,
            "provider calls": sum(len(s.received("POST", SEND_PATH)) for s in self.sendgrids),
        }
        self.figures["delivered to another tenant (must be 0)"] = self.cross_tenant
