"""Fixtures shared by the end-to-end tests: one isolated environment and one
running stack per test session, a real HTTP receiver, and a closing report of
what the fault tests measured (duplicates and the like).

`make test` runs the suite in four lanes at once (pytest-xdist with `-n 4`; tests/support/lanes.py
says which test goes in which lane), each lane one worker process with its own isolated
environment and session stack. Run without `-n`, the suite is one process, as before.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from herald.cli.embedded.ports import PORT_RANGE_ENV, lane_range
from herald.cli.stack import Stack
from herald.cli.stack_config import StackConfig
from herald.cli.stack_env import write_private
from herald.crypto import new_operator_token
from herald.secrets import new_master_key
from tests.standins.alerts import AlertReceiver
from tests.standins.otlp import Collector as OtlpCollector
from tests.standins.postmark import PostmarkStandIn
from tests.standins.resend import ResendStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.support import stack_logs, stack_state
from tests.support.api import TenantKey, create_tenant, remember_secret
from tests.support.infra import isolated_infra, separate_database
from tests.support.receiver import Receiver

# Two master keys, the first active: the rotation test makes the second active.
MASTER_KEYS = f"k1:{new_master_key()},k2:{new_master_key()}"

# Retries and timeouts compressed so the fault tests run in seconds.
TEST_ENV = {
    "HERALD_MASTER_KEYS": MASTER_KEYS,
    "HERALD_MASTER_KEY_ID": "k1",
    # Long enough that a revocation seen within seconds can only come from the change notification.
    "HERALD_AUTH_CACHE_TTL_S": "300",
    "HERALD_API_KEY_TOUCH_INTERVAL_S": "0.5",
    "HERALD_WEBHOOK_TIMEOUT_S": "3",
    "HERALD_WEBHOOK_ACK_WAIT_S": "5",
    "HERALD_WEBHOOK_RETRY_SCHEDULE_S": "[0.2, 0.4]",
    # A subscription target failing continuously for 3 s (not 5 days) is disabled automatically.
    "HERALD_WEBHOOK_TARGET_DISABLE_AFTER_S": "3",
    "HERALD_OUTBOX_SCAN_INTERVAL_S": "0.5",
    "HERALD_OUTBOX_REPUBLISH_AFTER_S": "1",
    "HERALD_SHUTDOWN_GRACE_S": "5",
    "HERALD_LOG_LEVEL": "INFO",
    # Email: three walks 0.3 s and 0.6 s apart; one provider call may take 2 s.
    "HERALD_EMAIL_RETRY_SCHEDULE_S": "[0.3, 0.6]",
    "HERALD_PLATFORM_EMAIL_RETRY_SCHEDULE_S": "[0.3]",
    "HERALD_EMAIL_SEND_TIMEOUT_S": "2",
    "HERALD_EMAIL_ACK_WAIT_S": "5",
    # Breakers open after 4 transient failures and probe again 3 s later.
    "HERALD_EMAIL_BREAKER_FAILURES": "4",
    "HERALD_EMAIL_BREAKER_COOL_DOWN_S": "3",
    # A webhook target's breaker likewise: 4 timeouts, failed connections or 5xx, then 1 s closed to calls.
    "HERALD_WEBHOOK_BREAKER_FAILURES": "4",
    "HERALD_WEBHOOK_BREAKER_COOL_DOWN_S": "1",
    # The ledger makes one job of each lane an open circuit parked due every second (each
    # reconciler pass, here), to be a probe.
    "HERALD_WEBHOOK_PARK_RECHECK_S": "1",
    # A target's paced or bounded backlog stays on the bus here (tests/test_tenant_erasure.py
    # purges such messages); tests/test_lane_limit.py parks it, on a stack of its own.
    "HERALD_WEBHOOK_PARK_BACKLOG_S": "600",
    "HERALD_ALERT_WINDOW_S": "2",
    # Expired idempotency keys and ended plans are cleared within half a second.
    "HERALD_LEDGER_MAINTENANCE_INTERVAL_S": "0.5",
}

# The platform email provider of the session's stack (a Resend stand-in).
PLATFORM_RESEND_KEY = "re_PlatformKey_0123456789abcdefXYZ"
PLATFORM_FROM = "Herald <herald@herald.test>"
# Operators who get dead-letter alerts by platform email (HERALD_ALERT_EMAIL_TO).
ALERT_EMAIL_TO = ("oncall@herald.test", "pager@herald.test")

REPORT: list[str] = []
# Closing sections by title, each made at the end of the run; packages add theirs (resilience).
SECTIONS: dict[str, Callable[[], list[str]]] = {"Herald measurements": lambda: REPORT}
# Under xdist, the controller's copy of what each lane's worker reported.
FROM_LANES: list[tuple[str, list[str]]] = []


def report(line: str) -> None:
    """Adds a line to the summary printed at the end of the run."""
    REPORT.append(line)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from tests.support.lanes import LaneScheduling

    return LaneScheduling(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report carries what the stacks it used logged at warning and above."""
    outcome = yield
    made = outcome.get_result()
    if made.when == "call" and made.failed:
        stacks = [value for value in getattr(item, "funcargs", {}).values() if isinstance(value, Stack)]
        made.sections.extend(stack_logs.sections_for(stacks, call.start))
        made.sections.extend(stack_state.sections_for(stacks))


def _sections() -> list[tuple[str, list[str]]]:
    return [(title, lines) for title, make in SECTIONS.items() if (lines := make())]


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: its sections go to the controller
        workeroutput["herald_sections"] = _sections()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    FROM_LANES.extend(getattr(node, "workeroutput", {}).get("herald_sections", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    by_title: dict[str, list[str]] = {}
    for title, lines in FROM_LANES or _sections():
        by_title.setdefault(title, []).extend(lines)
    for title, lines in by_title.items():
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("herald")


@pytest.fixture(scope="session")
def infra(work_dir: Path) -> Iterator[dict[str, str]]:
    with isolated_infra(work_dir) as found:
        yield found


# The stacks on the run's database share its first operator ("admin", made by the ledger that
# starts first): one token for all of them, written where each stack reads its own.
RUN_OPERATOR_TOKEN = new_operator_token()


def start_stack(data_dir: Path, infra: dict[str, str], nats_url: str | None = None, **env: str) -> Stack:
    if not (data_dir / "operator_token").exists():
        write_private(data_dir / "operator_token", RUN_OPERATOR_TOKEN)
    stack = Stack(
        StackConfig(
            data_dir=data_dir,
            nats_url=nats_url or infra["nats_url"],
            database_url=infra["database_url"],
            gateway_http_port=0,
            gateway_grpc_port=0,
            bus_prefix=infra["bus_prefix"] + (env.pop("prefix_suffix", "")),
            env={**TEST_ENV, **env},
        )
    )
    stack.start()
    stack.supervise_in_background()
    return stack


@pytest.fixture(scope="session")
def alerts() -> Iterator[AlertReceiver]:
    """Plays the operators' Slack incoming webhook and operational webhook."""
    running = AlertReceiver()
    yield running
    running.close()


@pytest.fixture(scope="session")
def platform_mail() -> Iterator[ResendStandIn]:
    """The provider Herald's own mail (platform email) goes through."""
    running = ResendStandIn()
    running.add_key(remember_secret(PLATFORM_RESEND_KEY))
    yield running
    running.close()


@pytest.fixture(scope="session")
def stack(
    work_dir: Path, infra: dict[str, str], alerts: AlertReceiver, platform_mail: ResendStandIn
) -> Iterator[Stack]:
    running = start_stack(
        work_dir / "stack",
        infra,
        HERALD_ALERT_SLACK_URL=alerts.slack_url,
        HERALD_ALERT_WEBHOOK_URL=alerts.ops_url,
        HERALD_PLATFORM_EMAIL_PROVIDER="resend",
        HERALD_PLATFORM_EMAIL_API_KEY=PLATFORM_RESEND_KEY,
        HERALD_PLATFORM_EMAIL_BASE_URL=platform_mail.base_url,
        HERALD_PLATFORM_EMAIL_FROM=PLATFORM_FROM,
        HERALD_ALERT_EMAIL_TO=", ".join(ALERT_EMAIL_TO),
    )
    yield running
    running.stop()


@pytest.fixture(scope="session")
def collector() -> Iterator[OtlpCollector]:
    """Where the patient stack's services export their spans (OTLP)."""
    running = OtlpCollector()
    yield running
    running.close()


@pytest.fixture(scope="module")
def patient_stack(
    request: pytest.FixtureRequest, work_dir: Path, infra: dict[str, str], collector: OtlpCollector
) -> Iterator[Stack]:
    """A second stack with the settings these files need: a call to a receiver may hang for 10
    minutes (tests/test_delivery_isolation.py keeps its calls to a silent receiver open), and
    every service exports its spans to `collector` (tests/test_trace_propagation.py). One per
    file, stopped with it, on a database and a bus prefix of its own: a stack sharing another's
    database would republish that one's overdue jobs and publish its Herald events (its
    reconciler and announcer), and one on another's bus prefix would take the work messages a
    stack stopped before it left behind."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    tag = f"{zlib.crc32(module.encode()):08x}"
    with separate_database(infra["database_url"], f"patient_{tag}") as database_url:
        running = start_stack(
            work_dir / f"patient-stack-{module}",
            {**infra, "database_url": database_url},
            prefix_suffix=f"p{tag}",
            HERALD_WEBHOOK_TIMEOUT_S="600",
            HERALD_WEBHOOK_ACK_WAIT_S="900",
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint,
            OTEL_BSP_SCHEDULE_DELAY="100",
        )
        yield running
        running.stop()


@pytest.fixture(scope="session")
def operator_token(stack: Stack) -> str:
    return Path(stack.endpoints["operator_token_file"]).read_text().strip()


@pytest.fixture(scope="session")
def gateway(stack: Stack) -> str:
    return stack.endpoints["gateway_http"]


@pytest.fixture(scope="module")
def verifier(stack: Stack) -> str:
    return stack.endpoints["verifier_http"]


@pytest.fixture
def tenant(gateway: str, operator_token: str, request: pytest.FixtureRequest) -> TenantKey:
    return create_tenant(gateway, operator_token, f"tenant-{request.node.name}"[:200])


@pytest.fixture
def sendgrid() -> Iterator[SendGridStandIn]:
    running = SendGridStandIn()
    yield running
    running.close()


@pytest.fixture
def resend() -> Iterator[ResendStandIn]:
    running = ResendStandIn()
    yield running
    running.close()


@pytest.fixture
def postmark() -> Iterator[PostmarkStandIn]:
    running = PostmarkStandIn()
    yield running
    running.close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def pytest_configure(config: pytest.Config) -> None:
    # The services read these; a run must not inherit a developer's shell settings for them.
    for name in list(os.environ):
        if name.startswith("HERALD_"):
            del os.environ[name]
    # Parallel lanes choose ports from disjoint ranges (herald.cli.embedded.ports), the services
    # they start included. Set after the clearing above, which would take it away again.
    if "PYTEST_XDIST_WORKER" in os.environ:
        os.environ[PORT_RANGE_ENV] = lane_range(
            int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw")), int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
        )
