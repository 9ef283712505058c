"""Per-tenant, per-provider circuit breakers: opening after repeated transient failures,
skipping without a call, the half-open probe, and the metrics, on a clock the tests move."""

from __future__ import annotations

import pytest
from herald_email_sender.breaker import BreakerBoard, BreakerPolicy, CircuitMetrics, State
from herald_email_sender.dispatch import Senders
from herald_email_sender.outcome import Outcome
from herald_email_sender.walk import Verdict, WalkResult, walk
from prometheus_client import REGISTRY, CollectorRegistry

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import ReceiverClient
from tests.email.conftest import RESEND_KEY, SENDGRID_KEY, Clock, Vault, config, credential, simple_request
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SEND_PATH as SENDGRID_SEND
from tests.standins.sendgrid import SendGridStandIn

POLICY = BreakerPolicy(failures=3, window_s=60, cool_down_s=30, probe_timeout_s=45, idle_expiry_s=600)


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def board(clock: Clock, registry: CollectorRegistry) -> BreakerBoard:
    return BreakerBoard(POLICY, clock=clock, metrics=CircuitMetrics(registry))


def fail(board: BreakerBoard, times: int, tenant: str = "t1", provider: str = "sg", kind: str = "sendgrid") -> None:
    for _ in range(times):
        assert board.allow(tenant, provider, kind)
        board.record(tenant, provider, kind, Outcome.TRANSIENT)


def gauge(registry: CollectorRegistry, provider: str) -> float | None:
    return registry.get_sample_value("herald_provider_circuit_state", {"provider": provider})


def transitions(registry: CollectorRegistry, provider: str, to: str) -> float:
    value = registry.get_sample_value("herald_provider_circuit_transitions_total", {"provider": provider, "to": to})
    return value or 0.0


def test_consecutive_transient_failures_open_the_breaker(board: BreakerBoard) -> None:
    fail(board, 2)
    assert board.state("t1", "sg") is State.CLOSED and board.allow("t1", "sg", "sendgrid")
    fail(board, 1)
    assert board.state("t1", "sg") is State.OPEN
    assert not board.allow("t1", "sg", "sendgrid")


def test_failures_spread_beyond_the_window_do_not_open_it(board: BreakerBoard, clock: Clock) -> None:
    fail(board, 2)
    clock.advance(61)
    fail(board, 2)
    assert board.state("t1", "sg") is State.CLOSED
    fail(board, 1)
    assert board.state("t1", "sg") is State.OPEN


@pytest.mark.parametrize("answer", [Outcome.ACCEPTED, Outcome.PERMANENT])
def test_an_answer_resets_the_streak(board: BreakerBoard, answer: Outcome) -> None:
    """A permanent refusal proves the provider is up: it is not an outage."""
    fail(board, 2)
    board.record("t1", "sg", "sendgrid", answer)
    fail(board, 2)
    assert board.state("t1", "sg") is State.CLOSED


def test_breakers_are_per_tenant_and_per_provider(board: BreakerBoard) -> None:
    fail(board, 3, tenant="t1", provider="sg")
    assert not board.allow("t1", "sg", "sendgrid")
    assert board.allow("t2", "sg", "sendgrid")
    assert board.allow("t1", "rs", "resend")


def test_after_the_cool_down_one_probe_goes_through(board: BreakerBoard, clock: Clock) -> None:
    fail(board, 3)
    clock.advance(29)
    assert not board.allow("t1", "sg", "sendgrid")
    clock.advance(1)
    assert board.state("t1", "sg") is State.HALF_OPEN
    assert board.allow("t1", "sg", "sendgrid")  # the probe
    assert not board.allow("t1", "sg", "sendgrid")  # only one at a time
    board.record("t1", "sg", "sendgrid", Outcome.ACCEPTED)
    assert board.state("t1", "sg") is State.CLOSED
    assert board.allow("t1", "sg", "sendgrid")


def test_a_failed_probe_opens_it_again_for_a_full_cool_down(board: BreakerBoard, clock: Clock) -> None:
    fail(board, 3)
    clock.advance(30)
    assert board.allow("t1", "sg", "sendgrid")
    board.record("t1", "sg", "sendgrid", Outcome.TRANSIENT)
    assert board.state("t1", "sg") is State.OPEN
    clock.advance(29)
    assert not board.allow("t1", "sg", "sendgrid")
    clock.advance(1)
    assert board.allow("t1", "sg", "sendgrid")


def test_a_probe_that_never_reports_frees_its_slot(board: BreakerBoard, clock: Clock) -> None:
    fail(board, 3)
    clock.advance(30)
    assert board.allow("t1", "sg", "sendgrid")
    clock.advance(44)
    assert not board.allow("t1", "sg", "sendgrid")
    clock.advance(1)
    assert board.allow("t1", "sg", "sendgrid")
    board.release("t1", "sg")  # cancelled: the slot is free at once
    assert board.allow("t1", "sg", "sendgrid")


def test_an_idle_breaker_is_forgotten(board: BreakerBoard, clock: Clock, registry: CollectorRegistry) -> None:
    fail(board, 3)
    clock.advance(601)
    assert board.worst_states() == {}
    assert board.state("t1", "sg") is State.CLOSED
    assert gauge(registry, "sendgrid") == 0


def test_the_gauge_shows_the_most_open_state_per_provider_kind(
    board: BreakerBoard, clock: Clock, registry: CollectorRegistry
) -> None:
    fail(board, 1, tenant="t1")
    assert gauge(registry, "sendgrid") == 0
    fail(board, 3, tenant="t2")
    fail(board, 3, tenant="t3", provider="rs", kind="resend")
    assert gauge(registry, "sendgrid") == 2 and gauge(registry, "resend") == 2
    clock.advance(30)
    # Read at scrape time: an open breaker past its cool-down reads half-open, traffic or not.
    assert gauge(registry, "sendgrid") == 1
    assert board.allow("t2", "sg", "sendgrid")
    board.record("t2", "sg", "sendgrid", Outcome.ACCEPTED)
    assert gauge(registry, "sendgrid") == 0 and gauge(registry, "resend") == 1
    assert transitions(registry, "sendgrid", "open") == 1
    assert transitions(registry, "sendgrid", "half_open") == 1
    assert transitions(registry, "sendgrid", "closed") == 1
    # Tenants are never a label.
    for family in registry.collect():
        for sample in family.samples:
            assert not [label for label in sample.labels if "tenant" in label]


def test_the_process_metrics_are_registered_with_the_planned_labels() -> None:
    BreakerBoard(POLICY)  # attaches to the process-wide metrics
    names = {metric.name: metric for metric in REGISTRY.collect()}
    assert "herald_provider_circuit_state" in names and names["herald_provider_circuit_state"].type == "gauge"
    assert "herald_provider_circuit_transitions" in names


def test_policy_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="failures"):
        BreakerPolicy(failures=0)
    with pytest.raises(ValueError, match="positive"):
        BreakerPolicy(cool_down_s=0)


# --- in the walk ---------------------------------------------------------------------------------


class Tenant:
    def __init__(self, sendgrid: SendGridStandIn, resend: ResendStandIn) -> None:
        sendgrid.add_key(SENDGRID_KEY)
        resend.add_key(RESEND_KEY)
        self.sendgrid = sendgrid
        self.configs = [
            config("sg", common_pb2.EMAIL_PROVIDER_SENDGRID, 20, sendgrid.base_url),
            config("rs", common_pb2.EMAIL_PROVIDER_RESEND, 10, resend.base_url),
        ]
        self.vault = Vault(
            {
                "sg": credential(common_pb2.EMAIL_PROVIDER_SENDGRID, SENDGRID_KEY),
                "rs": credential(common_pb2.EMAIL_PROVIDER_RESEND, RESEND_KEY),
            }
        )

    def sendgrid_calls(self) -> int:
        return len(self.sendgrid.received("POST", SENDGRID_SEND))


async def send(http: ReceiverClient, tenant: Tenant, board: BreakerBoard, tenant_id: str = "t1") -> WalkResult:
    return await walk(
        simple_request(),
        tenant.configs,
        tenant.vault.open,
        senders=Senders(http, timeout_s=5),
        tenant_id=tenant_id,
        idempotency_key="job-1",
        breakers=board,
    )


async def test_the_walk_skips_a_dead_provider_and_brings_it_back_after_it_recovers(
    http: ReceiverClient,
    sendgrid: SendGridStandIn,
    resend: ResendStandIn,
    board: BreakerBoard,
    clock: Clock,
    registry: CollectorRegistry,
) -> None:
    tenant = Tenant(sendgrid, resend)
    sendgrid.fail_with = 503  # SendGrid is down

    for _ in range(3):
        result = await send(http, tenant, board)
        assert [(a.provider_id, a.outcome) for a in result.attempts] == [
            ("sg", Outcome.TRANSIENT),
            ("rs", Outcome.ACCEPTED),
        ]
    assert tenant.sendgrid_calls() == 3 and board.state("t1", "sg") is State.OPEN
    assert gauge(registry, "sendgrid") == 2

    # Open: skipped without a call (and without decrypting its key); the fallback delivers.
    tenant.vault.opened.clear()
    result = await send(http, tenant, board)
    skipped = result.attempts[0]
    assert (skipped.provider_id, skipped.outcome, skipped.called) == ("sg", Outcome.SKIPPED, False)
    assert "circuit open" in skipped.error
    assert result.verdict is Verdict.ACCEPTED and result.accepted is not None and result.accepted.provider_id == "rs"
    assert tenant.sendgrid_calls() == 3 and tenant.vault.opened == ["rs"]

    # Another tenant on the same provider kind is not affected.
    other = await send(http, tenant, board, tenant_id="t2")
    assert other.attempts[0].outcome is Outcome.TRANSIENT and tenant.sendgrid_calls() == 4

    # SendGrid recovers; after the cool-down one probe finds out and closes the breaker.
    sendgrid.fail_with = None
    clock.advance(30)
    result = await send(http, tenant, board)
    assert [(a.provider_id, a.outcome) for a in result.attempts] == [("sg", Outcome.ACCEPTED)]
    assert board.state("t1", "sg") is State.CLOSED and gauge(registry, "sendgrid") == 0


async def test_a_walk_where_every_provider_is_skipped_is_a_retry(
    http: ReceiverClient, sendgrid: SendGridStandIn, resend: ResendStandIn, board: BreakerBoard
) -> None:
    tenant = Tenant(sendgrid, resend)
    fail(board, 3, provider="sg", kind="sendgrid")
    fail(board, 3, provider="rs", kind="resend")
    result = await send(http, tenant, board)
    assert result.verdict is Verdict.FAILED_TRANSIENTLY
    assert [a.outcome for a in result.attempts] == [Outcome.SKIPPED, Outcome.SKIPPED]
    assert sendgrid.requests == [] and resend.requests == [] and tenant.vault.opened == []


async def test_a_skipped_provider_keeps_an_all_permanent_walk_retryable(
    http: ReceiverClient, sendgrid: SendGridStandIn, resend: ResendStandIn, board: BreakerBoard
) -> None:
    """The skipped provider was never asked, so the failure is not proven permanent."""
    tenant = Tenant(sendgrid, resend)
    resend.reject.add("ada@example.com")
    fail(board, 3, provider="sg", kind="sendgrid")
    result = await send(http, tenant, board)
    assert [a.outcome for a in result.attempts] == [Outcome.SKIPPED, Outcome.PERMANENT]
    assert result.verdict is Verdict.FAILED_TRANSIENTLY


async def test_permanent_refusals_never_open_the_breaker(
    http: ReceiverClient, sendgrid: SendGridStandIn, resend: ResendStandIn, board: BreakerBoard
) -> None:
    tenant = Tenant(sendgrid, resend)
    sendgrid.reject.add("ada@example.com")
    for _ in range(5):
        await send(http, tenant, board)
    assert board.state("t1", "sg") is State.CLOSED and tenant.sendgrid_calls() == 5


def test_a_probe_under_way_makes_the_others_wait_and_its_answer_says_it_closed(
    board: BreakerBoard, clock: Clock
) -> None:
    """What the webhook-sender's parking reads: how long a call must wait (the cool-down left,
    then a moment while the probe runs), and whether an answer closed the breaker (what waited
    for the destination may go)."""
    assert board.wait_left_s("t1", "sg", 1.0) == 0.0
    fail(board, 3)
    assert board.wait_left_s("t1", "sg", 1.0) == pytest.approx(30.0)
    clock.advance(30)
    assert board.wait_left_s("t1", "sg", 1.0) == 0.0, "half-open with no probe: one may go"
    assert board.allow("t1", "sg", "sendgrid")
    assert board.wait_left_s("t1", "sg", 1.0) == 1.0, "the probe is under way: the others wait"
    assert board.record("t1", "sg", "sendgrid", Outcome.ACCEPTED) is True
    assert board.wait_left_s("t1", "sg", 1.0) == 0.0
    assert board.record("t1", "sg", "sendgrid", Outcome.ACCEPTED) is False, "already closed"
