"""The loss checker: every accepted id of a run accounted for at the end, across the faults the
ledger must outlast (the work stream purged, deleted and recreated, expired by `max_age`; the
nats-server SIGKILLed; PostgreSQL stopped fast and immediately; the webhook-sender SIGKILLed);
and what the ledger answers while its database is down.

Each fault gets its own tenant and receiver, so its counts stand alone: delivered (once, or with
its duplicates counted), failed with a reason, still scheduled with a due time, or lost; lost
must be 0. A stack of its own, on infrastructure of its own (`PrivateInfra`, which it kills), with
the reconciler's bounds short so a lost job comes back within the test."""

from __future__ import annotations

import secrets
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.grpcio.ledger import Ledger
from herald.v1 import ledger_jobs_pb2
from tests.conftest import TEST_ENV, report, start_stack
from tests.resilience.infra import PrivateInfra
from tests.support.accounting import account, wait_settled
from tests.support.api import TenantKey, unlimited_tenant
from tests.support.bus_faults import LOSSES, lose_work, paused
from tests.support.receiver import Receiver

JOBS_PER_FAULT = 60
SETTLE_S = 120.0


@dataclass
class Checked:
    stack: Stack
    infra: PrivateInfra

    @property
    def gateway(self) -> str:
        return self.stack.endpoints["gateway_http"]

    def tenant(self, name: str) -> TenantKey:
        token = Path(self.stack.endpoints["operator_token_file"]).read_text().strip()
        return unlimited_tenant(self.gateway, token, name, timeout=30)


@pytest.fixture(scope="module")
def checked(work_dir: Path) -> Iterator[Checked]:
    infra = PrivateInfra(work_dir / "loss-checker" / "infra")
    infra.start()
    try:
        stack = start_stack(
            work_dir / "loss-checker" / "stack",
            {"database_url": infra.database_url, "bus_prefix": f"loss{secrets.token_hex(3)}"},
            nats_url=infra.nats_url,
            **{
                **TEST_ENV,
                "HERALD_RECONCILE_INTERVAL_S": "0.5",
                "HERALD_RECONCILE_QUEUED_AFTER_S": "4",
                "HERALD_RECONCILE_RETRY_GRACE_S": "3",
                # Callers keep going through a PostgreSQL restart (503s are not accepted jobs).
                "HERALD_RATE_LIMIT_FAIL_OPEN": "true",
            },
        )
        try:
            yield Checked(stack, infra)
        finally:
            stack.stop()
    finally:
        infra.stop()


def submit_batch(checked: Checked, tenant: TenantKey, url: str, count: int) -> list[str]:
    items = [{"url": url, "payload": {"n": n}} for n in range(count)]
    answer = httpx.post(
        f"{checked.gateway}/v1/webhooks/batch", json={"items": items}, headers=tenant.headers, timeout=60
    )
    assert answer.status_code == 200, answer.text
    return [r["id"] for r in answer.json()["results"] if r["status"] == 202]


def submit_through(checked: Checked, tenant: TenantKey, url: str, fault: Callable[[], None]) -> list[str]:
    """One request at a time while `fault` happens beside them; the accepted ids (202) only."""
    accepted: list[str] = []

    def send() -> None:
        for n in range(JOBS_PER_FAULT):
            try:
                answer = httpx.post(
                    f"{checked.gateway}/v1/webhooks",
                    json={"url": url, "payload": {"n": n}},
                    headers=tenant.headers,
                    timeout=30,
                )
            except httpx.HTTPError:
                continue
            if answer.status_code == 202:
                accepted.append(answer.json()["id"])
            time.sleep(0.02)

    sending = threading.Thread(target=send)
    sending.start()
    time.sleep(0.3)
    fault()
    sending.join()
    return accepted


def lost_on_the_bus(how: str) -> Callable[[Checked, TenantKey, Receiver], list[str]]:
    def run(checked: Checked, tenant: TenantKey, receiver: Receiver) -> list[str]:
        with paused(checked.stack.services["webhook-sender"].process):
            ids = submit_batch(checked, tenant, receiver.url, JOBS_PER_FAULT)
            lose_work(checked.infra.nats_url, checked.stack.config.bus_prefix, how)
        return ids

    return run


def nats_killed(checked: Checked, tenant: TenantKey, receiver: Receiver) -> list[str]:
    receiver.behaviour.delay_path = ("/hook", 0.05)  # deliveries still in flight when the server dies
    ids = submit_batch(checked, tenant, receiver.url, JOBS_PER_FAULT)
    checked.infra.kill_nats(down_for_s=1.0)
    return ids


def postgres_fast(checked: Checked, tenant: TenantKey, receiver: Receiver) -> list[str]:
    return submit_through(checked, tenant, receiver.url, lambda: checked.infra.restart_postgres(down_for_s=1.0))


def postgres_immediate(checked: Checked, tenant: TenantKey, receiver: Receiver) -> list[str]:
    return submit_through(checked, tenant, receiver.url, lambda: checked.infra.stop_postgres_immediately(1.0))


def sender_killed(checked: Checked, tenant: TenantKey, receiver: Receiver) -> list[str]:
    receiver.behaviour.delay_path = ("/hook", 0.05)
    ids = submit_batch(checked, tenant, receiver.url, JOBS_PER_FAULT)
    receiver.wait_for(ids[0], 1, timeout=30)
    checked.stack.kill("webhook-sender", signal.SIGKILL)
    checked.stack.wait_healthy("webhook-sender", timeout=90)
    return ids


FAULTS: dict[str, Callable[[Checked, TenantKey, Receiver], list[str]]] = {
    **{f"work stream {how}": lost_on_the_bus(how) for how in LOSSES},
    "nats-server SIGKILL": nats_killed,
    "PostgreSQL fast stop": postgres_fast,
    "PostgreSQL immediate stop": postgres_immediate,
    "webhook-sender SIGKILL": sender_killed,
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_accepted_job_is_accounted_for(checked: Checked, fault: str) -> None:
    tenant = checked.tenant(f"loss-{fault.replace(' ', '-')}")
    receiver = Receiver()
    try:
        ids = FAULTS[fault](checked, tenant, receiver)
        assert ids, "nothing was accepted"
        wait_settled(checked.infra.database_url, ids, timeout=SETTLE_S)
        accounts = account(checked.infra.database_url, ids, [receiver])
        report(f"loss checker, {fault}: {accounts.line()}")
        assert not accounts.lost, f"{fault}: lost {accounts.lost[:5]}; {accounts.line()}"
    finally:
        receiver.close()


def test_the_ledger_answers_unavailable_while_its_database_is_down(checked: Checked) -> None:
    """UNAVAILABLE, the status every caller retries (a sender hands its messages back, the
    gateway answers 503), with its reason; not UNKNOWN with a traceback per call."""
    checked.infra.postgres.stop()
    try:
        with grpc.insecure_channel(checked.stack.services["ledger"].grpc_addr) as channel:
            with pytest.raises(grpc.RpcError) as raised:
                Ledger.over(channel).jobs.GetJob(
                    ledger_jobs_pb2.GetJobRequest(tenant_id=str(uuid.uuid4()), job_id=str(uuid.uuid4())), timeout=60
                )
        error: Any = raised.value
        assert error.code() == grpc.StatusCode.UNAVAILABLE, (error.code(), error.details())
        assert "database is unavailable" in error.details()
    finally:
        assert checked.infra.postgres.start() == checked.infra.database_url
