"""The ledger is the truth: work messages the bus lost are published again by the ledger's
reconciler, and the senders take their consumers back when the stream is recreated, without a
restart. Bounds are short here (HERALD_RECONCILE_*), so a lost job comes back in seconds."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from herald.cli.stack import Stack
from herald.config import Settings
from herald.sender.slots import window_size
from tests.conftest import TEST_ENV, report
from tests.support.accounting import account, wait_settled
from tests.support.api import TenantKey, unlimited_tenant
from tests.support.bus_faults import lose_work, paused
from tests.support.infra import query, separate_stack
from tests.support.receiver import Receiver

RECONCILE_ENV = {
    "HERALD_RECONCILE_INTERVAL_S": "0.5",
    "HERALD_RECONCILE_QUEUED_AFTER_S": "3",
    "HERALD_RECONCILE_RETRY_GRACE_S": "2",
}


@pytest.fixture(scope="module")
def lossy(work_dir: Path, infra: dict[str, str]) -> Iterator[Stack]:
    env = {
        **TEST_ENV,
        **RECONCILE_ENV,
        # Retries far enough apart that the stream can lose its messages while jobs wait in a backoff.
        "HERALD_WEBHOOK_RETRY_SCHEDULE_S": "[4, 4, 4]",
        "HERALD_WEBHOOK_RETRY_JITTER": "0",
        # A call may last longer than the reconciler's bound.
        "HERALD_WEBHOOK_TIMEOUT_S": "8",
        "HERALD_WEBHOOK_ACK_WAIT_S": "10",
        # Every job's first attempt fails and is recorded: no circuit breaker spares the receiver.
        "HERALD_WEBHOOK_BREAKER_FAILURES": "1000",
    }
    with separate_stack(work_dir, infra, "lossy", env) as stack:
        yield stack


def submit(gateway: str, tenant: TenantKey, url: str, count: int, tag: str) -> list[str]:
    items = [{"url": url, "payload": {"tag": tag, "n": n}} for n in range(count)]
    answer = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=tenant.headers, timeout=60)
    assert answer.status_code == 200, answer.text
    ids = [r["id"] for r in answer.json()["results"] if r["status"] == 202]
    assert len(ids) == count
    return ids


def sender_window(stack: Stack) -> int:
    default = Settings.model_fields["webhook_concurrency"].default
    return window_size(int(stack.config.env.get("HERALD_WEBHOOK_CONCURRENCY", default)))


@pytest.mark.parametrize("how", ["purge", "delete-and-recreate"])
def test_jobs_whose_work_messages_the_bus_lost_are_delivered(lossy: Stack, how: str) -> None:
    """Jobs waiting in a retry backoff, and jobs queued while the sender is paused; then the work
    stream loses every message. Without a restart, every job is delivered: the reconciler publishes
    the overdue ones again and the sender takes its consumers back."""
    gateway = lossy.endpoints["gateway_http"]
    token = Path(lossy.endpoints["operator_token_file"]).read_text().strip()
    database_url = lossy.config.database_url or ""
    tenant = unlimited_tenant(gateway, token, f"lossy-{how}")
    failing, healthy = Receiver(), Receiver()
    sender = lossy.services["webhook-sender"].process
    assert sender is not None
    pid = sender.pid
    try:
        # 1. Jobs in a retry backoff: their first attempt failed, the next is 4 s away.
        failing.behaviour.status = 503
        retrying = submit(gateway, tenant, failing.url, 30, "retrying")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            counted = query(
                database_url,
                "SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'QUEUED' AND attempt_count >= 1",
                retrying,
            )[0][0]
            if counted == len(retrying):
                break
            time.sleep(0.05)
        assert counted == len(retrying), "the first attempts were not recorded"
        # 2. Jobs queued while the sender takes nothing; 3. the bus loses every message.
        with paused(sender):
            queued = submit(gateway, tenant, healthy.url, 100, "queued")
            lose_work(lossy.endpoints["nats_url"], lossy.config.bus_prefix, how)
            failing.behaviour.status = 200

        ids = retrying + queued
        settled = wait_settled(database_url, ids, timeout=90)
        accounts = account(database_url, ids, [failing, healthy])
        assert settled == len(ids) == accounts.delivered_once + accounts.delivered_with_duplicates, accounts.line()
        assert not accounts.lost, accounts.line()
        assert lossy.services["webhook-sender"].process is not None
        assert lossy.services["webhook-sender"].process.pid == pid, "the sender was restarted"
        # Copies of messages still in flight (held by the paused sender) are the only duplicates.
        assert accounts.duplicates <= sender_window(lossy), accounts.line()
        republished = query(
            database_url,
            "SELECT count(DISTINCT job_id) FROM job_events"
            " WHERE job_id = ANY($1::uuid[]) AND reason LIKE 'republished%'",
            ids,
        )[0][0]
        assert republished >= 1
        restored = (Path(lossy.data_dir) / "logs" / "webhook-sender.log").read_text().count("consumer restored")
        if how != "purge":
            assert restored >= 1, "the sender did not take its consumers back"
        report(
            f"work stream {how} with {len(retrying)} jobs in a retry backoff and {len(queued)} queued: "
            f"{accounts.line()}; {republished} republished by the reconciler; sender not restarted"
        )
    finally:
        failing.close()
        healthy.close()


def test_a_job_held_back_by_its_ordering_key_is_not_republished_while_it_waits(lossy: Stack) -> None:
    """A job behind an earlier one of its ordering key that waits in a long retry backoff is
    acted on by the bus all along (its message comes back until its turn): the reconciler does
    not count it overdue, and publishes no copy of it, until the earlier job has ended."""
    gateway = lossy.endpoints["gateway_http"]
    token = Path(lossy.endpoints["operator_token_file"]).read_text().strip()
    database_url = lossy.config.database_url or ""
    tenant = unlimited_tenant(gateway, token, "lossy-ordering")
    failing, healthy = Receiver(), Receiver()
    failing.behaviour.status = 503
    try:
        ids = []
        for url in (failing.url, healthy.url):
            answer = httpx.post(
                f"{gateway}/v1/webhooks",
                json={"url": url, "payload": {}, "ordering_key": "one-by-one"},
                headers=tenant.headers,
                timeout=10,
            )
            assert answer.status_code == 202, answer.text
            ids.append(answer.json()["id"])
        first, second = ids
        # Three attempts 4 s apart: the second job waits about 8 s, past the 3 s bound.
        assert wait_settled(database_url, ids, timeout=90) == 2
        [[first_ended]] = query(
            database_url,
            "SELECT max(created_at) FROM job_events WHERE job_id = $1::uuid AND to_status = 'FAILED'",
            first,
        )
        early_copies = query(
            database_url,
            "SELECT count(*) FROM job_events WHERE job_id = $1::uuid AND reason LIKE 'republished%'"
            " AND created_at < $2",
            second,
            first_ended,
        )[0][0]
        assert early_copies == 0, "a copy of the held-back job was published while it waited its turn"
        assert len(healthy.for_job(second)) == 1
    finally:
        failing.close()
        healthy.close()


def test_a_delivery_longer_than_the_bound_is_not_made_twice(lossy: Stack) -> None:
    """A receiver that takes twice the reconciler's bound to answer: the job is overdue by its
    time while its call goes on, and is neither published again nor delivered twice."""
    gateway = lossy.endpoints["gateway_http"]
    token = Path(lossy.endpoints["operator_token_file"]).read_text().strip()
    database_url = lossy.config.database_url or ""
    tenant = unlimited_tenant(gateway, token, "lossy-slow")
    slow = Receiver()
    slow.behaviour.delay_path = ("/hook", 6.0)
    try:
        ids = submit(gateway, tenant, slow.url, 3, "slow")
        assert wait_settled(database_url, ids, timeout=60) == len(ids)
        accounts = account(database_url, ids, [slow])
        assert accounts.delivered_once == len(ids), accounts.line()
        assert [len(slow.for_job(i)) for i in ids] == [1] * len(ids)
        copies = query(
            database_url,
            "SELECT count(*) FROM job_events WHERE job_id = ANY($1::uuid[]) AND reason LIKE 'republished%'",
            ids,
        )[0][0]
        assert copies == 0, "a job under delivery was published again"
    finally:
        slow.close()
