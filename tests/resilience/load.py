"""The load generator of the fault test: logical jobs posted to the gateway at a steady
pace, each retried (same Idempotency-Key) through refusals a client should retry, and
every single response recorded with its time.

A logical job is one thing a tenant wants sent. Its Idempotency-Key is fixed, so a retry
after a 503, a refused connection or a 409 (the first try still in flight) is the same
request again: the gateway must never turn one logical job into two jobs it answered 202
for.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.resilience.receivers import MODES

# Retried by the client (what a well-behaved client retries): the request may be sent again as is.
RETRIABLE = {409, 429, 502, 503, 504}
# Share of each receiver behaviour among webhook jobs.
MODE_WEIGHTS = {"ok": 70, "slow": 5, "flaky": 10, "flaky2": 4, "fail": 5, "reject": 6}
assert set(MODE_WEIGHTS) == set(MODES)


@dataclass
class LogicalJob:
    kind: str  # webhook | email
    tenant: int
    seq: int
    key: str  # Idempotency-Key
    body: dict[str, Any]
    mode: str = "ok"
    ordering_key: str | None = None
    # Filled while running.
    job_ids: list[str] = field(default_factory=list)  # every id a 202 carried
    outcome: str = "not sent"  # accepted | refused <status> | gave up <last>
    first_sent: float = 0.0


@dataclass
class Exchange:
    key: str
    attempt: int
    started: float  # monotonic
    ended: float
    status: int | None  # None: no HTTP answer (connection refused or cut)
    error: str = ""
    job_id: str = ""
    replayed: bool = False
    problem: str = ""


class LoadGenerator:
    def __init__(
        self,
        gateway: str,
        headers: list[dict[str, str]],
        jobs: list[LogicalJob],
        rate_per_s: float,
        retry_for_s: float,
        workers: int = 24,
    ) -> None:
        self.gateway = gateway
        self.headers = headers
        self.jobs = jobs
        self.rate_per_s = rate_per_s
        self.retry_for_s = retry_for_s
        self.workers = workers
        self.exchanges: list[Exchange] = []
        self.started_at = 0.0
        self.finished_at = 0.0
        # Set when the faults are over: the rest of the jobs go out without pacing.
        self.faults_done = threading.Event()
        # How many jobs may have gone out so far (`release`): each fault gets its share as it starts,
        # so every fault meets traffic however long the ones before it took (restarts are slow on a
        # busy machine, and load paced on an estimate was spent before the later faults began).
        self._released = 0
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), name="load", daemon=True)
        self.error: BaseException | None = None

    def release(self, count: int) -> None:
        """`count` more jobs may go out (paced at the rate), from now."""
        self._released += count

    def start(self) -> None:
        self.started_at = time.monotonic()
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the load generator did not finish in {timeout:.0f}s")
        if self.error is not None:
            raise self.error

    async def _run(self) -> None:
        try:
            queue: asyncio.Queue[LogicalJob | None] = asyncio.Queue()
            limits = httpx.Limits(max_connections=self.workers, max_keepalive_connections=self.workers)
            async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0), limits=limits) as client:
                workers = [asyncio.create_task(self._worker(client, queue)) for _ in range(self.workers)]
                interval = 1.0 / self.rate_per_s
                next_at = time.monotonic()
                for sent, job in enumerate(self.jobs):
                    while sent >= self._released and not self.faults_done.is_set():
                        await asyncio.sleep(0.05)
                        next_at = time.monotonic()
                    if not self.faults_done.is_set():
                        delay = next_at - time.monotonic()
                        if delay > 0:
                            await asyncio.sleep(delay)
                        next_at += interval
                    await queue.put(job)
                for _ in workers:
                    await queue.put(None)
                await asyncio.gather(*workers)
        except BaseException as error:  # surfaced by join()
            self.error = error
        finally:
            self.finished_at = time.monotonic()

    async def _worker(self, client: httpx.AsyncClient, queue: asyncio.Queue[LogicalJob | None]) -> None:
        while (job := await queue.get()) is not None:
            await self._send(client, job)

    async def _send(self, client: httpx.AsyncClient, job: LogicalJob) -> None:
        path = "/v1/webhooks" if job.kind == "webhook" else "/v1/emails"
        headers = {**self.headers[job.tenant], "Idempotency-Key": job.key}
        job.first_sent = time.monotonic()
        attempt = 0
        last = ""
        while True:
            attempt += 1
            started = time.monotonic()
            exchange = Exchange(job.key, attempt, started, started, None)
            try:
                response = await client.post(f"{self.gateway}{path}", json=job.body, headers=headers)
                exchange.status = response.status_code
                exchange.replayed = response.headers.get("idempotent-replayed") == "true"
                if response.status_code == 202:
                    exchange.job_id = str(response.json()["id"])
                elif response.headers.get("content-type", "").startswith("application/problem+json"):
                    exchange.problem = str(response.json().get("type", "")).rsplit("/", 1)[-1]
            except httpx.HTTPError as error:
                exchange.error = type(error).__name__
            exchange.ended = time.monotonic()
            self.exchanges.append(exchange)
            if exchange.status == 202:
                job.job_ids.append(exchange.job_id)
                job.outcome = "accepted"
                return
            last = str(exchange.status or exchange.error)
            retriable = exchange.status is None or exchange.status in RETRIABLE or exchange.status >= 500
            if not retriable:
                job.outcome = f"refused {exchange.status} {exchange.problem}"
                return
            if time.monotonic() - job.first_sent > self.retry_for_s:
                job.outcome = f"gave up ({last})"
                return
            await asyncio.sleep(min(0.1 * 2 ** min(attempt, 5), 2.0) * (0.5 + random.random()))


def plan_jobs(
    run_id: str,
    tenants: list[str],
    receivers: list[str],
    webhooks: int,
    emails: int,
    seed: int = 10,
) -> list[LogicalJob]:
    """Webhooks and emails, round-robin over the tenants, receiver behaviours drawn from a seeded random.

    Tenant 0's webhooks include ordering keys (every fifth job, four keys)."""
    chooser = random.Random(seed)
    modes = list(MODE_WEIGHTS)
    weights = list(MODE_WEIGHTS.values())
    jobs: list[LogicalJob] = []
    total = webhooks + emails
    email_every = max(total // emails, 1) if emails else 0
    emails_left = emails
    for seq in range(total):
        tenant = seq % len(tenants)
        key = f"{run_id}-{tenant}-{seq}"
        if emails_left and email_every and seq % email_every == email_every - 1:
            emails_left -= 1
            text = f"tenant={tenants[tenant]} seq={seq} key={key}"
            body = {
                "from": "Load <load@acme.example>",
                "to": [f"t{tenant}-{seq}@example.com"],
                "subject": f"load {seq}",
                "text": text,
            }
            jobs.append(LogicalJob("email", tenant, seq, key, body))
            continue
        mode = chooser.choices(modes, weights)[0]
        payload = {"tenant": tenants[tenant], "seq": seq, "mode": mode, "key": key}
        body = {"url": f"{receivers[tenant]}/t/{tenants[tenant]}/{seq}", "payload": payload}
        ordering_key = None
        if tenant == 0 and seq % 5 == 0:
            ordering_key = f"order-{seq % 4}"
            body["ordering_key"] = ordering_key
        jobs.append(LogicalJob("webhook", tenant, seq, key, body, mode, ordering_key))
    return jobs
