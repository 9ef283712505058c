"""One tenant's receiver that accepts the connection and never answers costs no other tenant
its deliveries: the webhook-sender's calls to that receiver are bounded (its target's bound of
calls in flight), and the jobs waiting behind that bound hold no call slot, so another tenant's
deliveries to a receiver that answers go out while every call to the silent one hangs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from herald.cli.stack import Stack
from herald.config import Settings
from tests.conftest import start_stack
from tests.support.api import create_tenant, wait_for_status
from tests.support.receiver import Receiver
from tests.support.silent_receiver import SilentReceiver

X_JOBS = 150  # more than the sender's call slots (HERALD_WEBHOOK_CONCURRENCY's default)
Y_JOBS = 20
TARGET_BOUND = Settings.model_fields["webhook_target_in_flight"].default


@pytest.fixture(scope="module")
def patient_stack(work_dir: Path, infra: dict[str, str]) -> Iterator[Stack]:
    """The default slots and bounds; a call to a receiver may hang for 10 minutes, so every
    call to the silent receiver is still open when the other tenant's deliveries are checked."""
    stack = start_stack(
        work_dir / "isolation-stack",
        infra,
        prefix_suffix="iso",
        HERALD_WEBHOOK_TIMEOUT_S="600",
        HERALD_WEBHOOK_ACK_WAIT_S="900",
    )
    yield stack
    stack.stop()


@pytest.fixture
def silent() -> Iterator[SilentReceiver]:
    running = SilentReceiver()
    yield running
    running.close()


def test_a_silent_receiver_holds_up_no_other_tenant(
    patient_stack: Stack, silent: SilentReceiver, receiver: Receiver
) -> None:
    gateway = patient_stack.endpoints["gateway_http"]
    token = Path(patient_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "silent-receiver-owner")
    y = create_tenant(gateway, token, "fast-receiver-owner")

    items = [{"url": silent.url, "payload": {"n": n}} for n in range(X_JOBS)]
    batch = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=x.headers, timeout=60)
    assert batch.status_code == 200, batch.text
    assert silent.wait_for_requests(TARGET_BOUND, timeout=60) == TARGET_BOUND, "X's calls reach its receiver"

    with httpx.Client(timeout=30) as client:
        sent = [
            client.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=y.headers)
            for n in range(Y_JOBS)
        ]
    assert all(r.status_code == 202 for r in sent), [r.text for r in sent]
    y_jobs = [r.json()["id"] for r in sent]
    missing = [job_id for job_id in y_jobs if not receiver.wait_for(job_id, 1, timeout=90)]
    assert not missing, f"{len(missing)} of Y's {Y_JOBS} deliveries never arrived behind X's silent receiver"

    # All of that while every call to X's receiver was still held open, and no more of them made
    # than its target's bound: the rest of X's jobs wait without holding a slot.
    assert silent.closed_by_sender == 0, "a call to the silent receiver ended: the check proves nothing"
    assert silent.open == TARGET_BOUND
    assert len(silent.requests) == TARGET_BOUND
    for job_id in y_jobs:
        assert wait_for_status(gateway, y, job_id, timeout=60)["status"] == "delivered"
