"""The audit after a fault run: the client's record, the database, the receivers, the
provider stand-ins and the streams, each read on its own and checked against the others
(the receivers and the provider stand-ins in delivery_audit.py).

`problems` are broken promises (the test fails on them); `findings` are things worth a
decision that the design does not promise against; `figures` go to the closing report.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from herald.config import Settings
from tests.resilience.bus import streams
from tests.resilience.delivery_audit import DeliveryAudit
from tests.resilience.report import Fault
from tests.support.infra import query

TERMINAL = {"DELIVERED", "FAILED", "SUPPRESSED"}
# After a fault is over (the service SERVING again, the server back), callers may still see it
# for a moment: gRPC channels reconnect with backoff, NATS clients after a wait. A 503 or a
# refused connection this long after the window still counts as inside it.
GRACE_S = 10.0
# A job not yet settled is "still retrying" if the ledger touched it this recently.
MOVING_S = 15.0
# Attempts per job in the test environment (tests/conftest.py: two retries for webhooks and emails).
MAX_ATTEMPTS = 3
# A settled job's message may outlive it by a redelivery: an acknowledgement lost in a NATS fault
# is made good when AckWait (5 s in tests/conftest.py) brings the message back and the sender's
# start finds the job ended (herald.sender.loop). The work stream is given two AckWaits and a
# margin to let those go before what is left counts as a problem.
REDELIVERY_BOUND_S = 15.0


@dataclass
class Windows:
    faults: list[Fault]

    def inside(self, moment: float, names: tuple[str, ...] | None = None) -> bool:
        return any(
            w.started - 0.5 <= moment <= w.ended + GRACE_S
            for w in self.faults
            if names is None or any(n in w.name for n in names)
        )


class Audit(DeliveryAudit):
    """The whole audit: the client's record, the database, the dead letters and the streams here,
    the receivers and the provider stand-ins from `DeliveryAudit`."""

    def run(self) -> None:
        self.client()
        self.database()
        self.dead_letters()
        self.receivers_view()
        self.ordering()
        self.streams_view()
        self.emails()

    def _moment(self, monotonic: float) -> float:
        return monotonic - self.generator.started_at

    # -- the client's record: every response against the fault windows.
    def client(self) -> None:
        exchanges = self.generator.exchanges
        for e in exchanges:
            moment = self._moment(e.ended)
            if e.status is None:
                if not self.windows.inside(moment, ("gateway",)):
                    self.problems.append(
                        f"{e.key}: no answer ({e.error}) at {moment:.1f}s, outside the gateway's restart"
                    )
            elif e.status >= 500 and e.status != 503:
                self.problems.append(f"{e.key}: HTTP {e.status} {e.problem} at {moment:.1f}s")
            elif e.status == 503 and not self.windows.inside(moment):
                self.problems.append(f"{e.key}: 503 {e.problem} at {moment:.1f}s, outside every fault window")
        for job in self.jobs:
            if job.outcome.startswith("refused"):
                self.problems.append(f"{job.key} ({job.kind}): {job.outcome}")
        for job in self.accepted:
            if len(set(job.job_ids)) > 1:
                self.problems.append(f"{job.key}: one Idempotency-Key answered 202 with {sorted(set(job.job_ids))}")
        for e in exchanges:
            first = self.by_key[e.key].job_ids[:1]
            if e.replayed and e.job_id and first and e.job_id != first[0]:
                self.problems.append(f"{e.key}: a replay answered {e.job_id}, the first answer was {first[0]}")
        statuses = Counter(str(e.status) if e.status is not None else e.error for e in exchanges)
        in_flight = [self._moment(e.ended) for e in exchanges if e.status == 409]
        if in_flight:
            self.findings.append(
                f"{len(in_flight)} answers 409 idempotency-in-flight between {min(in_flight):.0f}s and "
                f"{max(in_flight):.0f}s: a claim left in flight by a crash (or a release that failed) holds its key "
                "for 60 s, so the client's retry waits that long"
            )
        late_503 = []
        for e in exchanges:
            moment = self._moment(e.ended)
            ended = [w.ended for w in self.windows.faults if w.started - 0.5 <= moment]
            if e.status == 503 and ended:
                late_503.append(moment - max(ended))
        self.figures.update(
            {
                "logical jobs (webhooks + emails)": (
                    f"{len(self.jobs)} ({sum(j.kind == 'webhook' for j in self.jobs)} + "
                    f"{sum(j.kind == 'email' for j in self.jobs)})"
                ),
                "load time (s)": f"{self.generator.finished_at - self.generator.started_at:.0f}",
                "HTTP exchanges": f"{len(exchanges)} ({', '.join(f'{k}: {v}' for k, v in sorted(statuses.items()))})",
                "accepted (202)": len(self.accepted),
                "not accepted: client gave up retrying": sum(j.outcome.startswith("gave up") for j in self.jobs),
                "two 202 job ids for one Idempotency-Key (must be 0)": sum(
                    len(set(j.job_ids)) > 1 for j in self.accepted
                ),
                "5xx other than 503 (must be 0)": sum(
                    1 for e in exchanges if e.status and e.status >= 500 and e.status != 503
                ),
                "503 answers (allowed inside fault windows only)": statuses.get("503", 0),
                "latest 503 after its window ended (s)": f"{max(late_503):.1f}" if late_503 else "-",
            }
        )

    # -- the database: nothing lost, nothing stuck, one job per key.
    def database(self) -> None:
        lost = [(j.key, jid) for j in self.accepted for jid in set(j.job_ids) if jid not in self.by_id]
        self.problems += [f"lost: {key} was answered 202 with {jid}, not in the database" for key, jid in lost]
        for job in self.accepted:
            for jid in set(job.job_ids):
                row = self.by_id.get(jid)
                if row is not None and row["tenant_id"] != self.tenant_ids[job.tenant]:
                    self.problems.append(f"{job.key}: job {jid} belongs to another tenant")
        per_key: dict[str, list[Any]] = defaultdict(list)
        for r in self.rows:
            per_key[r["idempotency_key"] or ""].append(r)
            if (r["idempotency_key"] or "") not in self.by_key:
                self.problems.append(f"job {r['id']} of a load tenant has no idempotency key of this run")
        second = {key: rs for key, rs in per_key.items() if key in self.by_key and len(rs) > 1}
        for key, rs in second.items():
            self.problems.append(
                f"second job for one Idempotency-Key: {key} has {len(rs)} jobs "
                f"({', '.join(r['status'] for r in rs)}); the client saw {self.by_key[key].outcome}"
            )
        unseen = [
            r
            for r in self.rows
            if r["idempotency_key"] in self.by_key and self.by_key[r["idempotency_key"]].outcome != "accepted"
        ]
        stuck, retrying = [], []
        for r in self.rows:
            if r["status"] not in TERMINAL:
                (retrying if r["idle_s"] < MOVING_S and r["attempt_count"] < MAX_ATTEMPTS else stuck).append(r)
        for r in stuck:
            outcomes = [
                a[0]
                for a in query(
                    self.database_url, "SELECT outcome FROM attempts WHERE job_id = $1::uuid ORDER BY id", r["id"]
                )
            ]
            self.problems.append(
                f"stuck: job {r['id']} {r['status']} after {r['attempt_count']} attempts, idle {r['idle_s']:.0f}s "
                f"(attempts: {', '.join(outcomes) or 'none'})"
                + ("; a succeeded attempt is recorded, yet the job is not DELIVERED" if "succeeded" in outcomes else "")
            )
        self.open_jobs = len(stuck) + len(retrying)
        status = Counter(r["status"] for r in self.rows)
        self.figures.update(
            {
                "jobs in the database for load tenants": len(self.rows),
                "  of which the client never saw a 202": len(unseen),
                "delivered": status.get("DELIVERED", 0),
                "failed": status.get("FAILED", 0),
                "still retrying (moving)": len(retrying),
                "stuck (must be 0)": len(stuck),
                "lost (must be 0)": len(lost),
                "second jobs for one Idempotency-Key (must be 0)": sum(len(rs) - 1 for rs in second.values()),
            }
        )

    # -- dead letters: every job that ran out of attempts has its entry (permanent failures need none).
    def dead_letters(self) -> None:
        dead = {
            r[0]
            for r in query(
                self.database_url,
                "SELECT job_id::text FROM dead_letters WHERE tenant_id = ANY($1::uuid[])",
                self.tenant_ids,
            )
        }
        last_outcome = {
            r[0]: r[1]
            for r in query(
                self.database_url,
                "SELECT DISTINCT ON (job_id) job_id::text, outcome FROM attempts"
                " WHERE job_id IN (SELECT id FROM jobs WHERE tenant_id = ANY($1::uuid[])) ORDER BY job_id, id DESC",
                self.tenant_ids,
            )
        }
        exhausted = [
            r
            for r in self.rows
            if r["status"] == "FAILED"
            and r["attempt_count"] >= MAX_ATTEMPTS
            and last_outcome.get(r["id"]) != "permanent_failure"
        ]
        missing = [r for r in exhausted if r["id"] not in dead]
        self.problems += [
            f"{r['channel']} job {r['id']} FAILED after {r['attempt_count']} attempts without a dead-letter entry"
            for r in missing
        ]
        by_channel = Counter(r["channel"] for r in exhausted)
        self.figures["out of attempts, dead-lettered (must be all)"] = (
            ", ".join(
                f"{channel} {n - sum(r['channel'] == channel for r in missing)} of {n}"
                for channel, n in sorted(by_channel.items())
            )
            or "none ran out"
        )

    # -- the streams: nothing left for settled jobs.
    def streams_view(self) -> None:
        started = time.monotonic()
        while True:
            left, lines, where = self._work_left()
            if left <= self.open_jobs or time.monotonic() - started > REDELIVERY_BOUND_S:
                break
            time.sleep(0.5)
        if left > self.open_jobs:
            self.problems.append(
                f"the work stream holds {left} messages of load tenants, {self.open_jobs} jobs are open"
                f" ({REDELIVERY_BOUND_S:.0f} s after the jobs settled): {where}"
            )
        self.figures["work messages left for load tenants"] = (
            f"{left} ({time.monotonic() - started:.1f} s after settling)"
        )
        self.figures["streams"] = "; ".join(lines)

    def _work_left(self) -> tuple[int, list[str], str]:
        """Messages of the load tenants in the work stream, a line per stream, and where the
        load tenants' messages are (their subjects; the work consumers holding any, with how
        many each has awaiting an ack and not yet delivered)."""
        work = Settings(bus_prefix=self.bus_prefix).stream_name("work")
        left, lines, where = 0, [], ""
        for state in streams(self.nats_url, self.bus_prefix, subjects_filter=f"{self.bus_prefix}.work.>"):
            pending = sum(a + p for a, p in state.consumers.values())
            lines.append(f"{state.name} {state.messages} messages, {pending} pending on its consumers")
            if state.name != work:
                continue
            subjects = {s: n for s, n in state.subjects.items() if s.rsplit(".", 1)[-1] in self.tenant_ids}
            left = sum(subjects.values())
            holding = {
                c: f"{a} awaiting an ack, {p} undelivered, {state.pulls[c][1]} redelivered,"
                f" {state.pulls[c][0]} pulls waiting"
                for c, (a, p) in state.consumers.items()
                if a or p
            }
            where = f"subjects {subjects}; consumers {holding}"
        return left, lines, where
