"""The resilience suite (tests/resilience/README.md): the real stack as separate processes, on a
PostgreSQL and a nats-server of its own that the fault test restarts, checked for
invariants rather than happy paths.

Reduced or full: `RESILIENCE_PROFILE=full` (what `make test-resilience` sets) runs the
full version; without it the reduced version runs, as ordinary tests inside `make test`.
See tests/resilience/profile.py for the figures of each.

The stack here is shared by every test of the package; the fault test runs last (its
file name sorts last) because it kills and restarts everything. The closing report is
printed at the end of the run.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from herald.cli.stack import Stack
from tests.conftest import SECTIONS, start_stack
from tests.resilience.infra import PrivateInfra
from tests.resilience.profile import HTTP_BODY_TIMEOUT_S, HTTP_HEAD_TIMEOUT_S, PROFILE
from tests.resilience.report import REPORT
from tests.support.api import TenantKey, create_tenant, remember_secret

# Deliveries run wider than the default 5 at once: thousands of jobs with slow receivers.
# The HTTP read deadlines are shorter than the defaults (10 s, 30 s) so the slow-client test
# sees the gateway cut slow clients off within its hold; every other client of the suite
# sends its request at once.
STACK_ENV = {
    "HERALD_WEBHOOK_CONCURRENCY": "20",
    "HERALD_EMAIL_CONCURRENCY": "10",
    "HERALD_HTTP_HEAD_TIMEOUT_S": str(HTTP_HEAD_TIMEOUT_S),
    "HERALD_HTTP_BODY_TIMEOUT_S": str(HTTP_BODY_TIMEOUT_S),
}


def closing_report() -> list[str]:
    if not (REPORT.figures or REPORT.sections or REPORT.faults):
        return []
    REPORT.profile = PROFILE.name
    return REPORT.lines()


SECTIONS["Herald resilience report"] = closing_report


@dataclass
class Resilient:
    """The suite's stack and what it runs on."""

    stack: Stack
    infra: PrivateInfra
    data_dir: Path
    run_id: str

    @property
    def gateway(self) -> str:
        return self.stack.endpoints["gateway_http"]

    @property
    def gateway_grpc(self) -> str:
        return self.stack.endpoints["gateway_grpc"]

    @property
    def database_url(self) -> str:
        return self.infra.database_url

    @property
    def bus_prefix(self) -> str:
        return self.stack.config.bus_prefix

    @property
    def operator_token(self) -> str:
        return Path(self.stack.endpoints["operator_token_file"]).read_text().strip()

    @property
    def operator_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.operator_token}"}

    def tenant(self, name: str, unlimited: bool = True) -> TenantKey:
        """A STARTUP tenant; by default with no rate limit and no monthly quota (a benchmark tenant)."""
        created = create_tenant(self.gateway, self.operator_token, f"{name}-{self.run_id}")
        if unlimited:
            response = httpx.patch(
                f"{self.gateway}/admin/v1/tenants/{created.tenant_id}/limits",
                json={"rate_per_min": "unlimited", "webhooks_per_month": "unlimited"},
                headers=self.operator_headers,
                timeout=30,
            )
            assert response.status_code == 200, response.text
            # The gateway learns the new limits through the ledger's change notification.
            time.sleep(0.3)
        return created


@pytest.fixture(scope="package")
def resilient(work_dir: Path) -> Iterator[Resilient]:
    # Under the session's work dir, so the secret-hygiene test scans these logs too.
    data_dir = work_dir / "resilience"
    infra = PrivateInfra(data_dir / "infra")
    infra.start()
    run_id = secrets.token_hex(3)
    try:
        stack = start_stack(
            data_dir / "stack",
            {"database_url": infra.database_url, "bus_prefix": f"res{run_id}"},
            nats_url=infra.nats_url,
            **STACK_ENV,
        )
        try:
            yield Resilient(stack, infra, data_dir, run_id)
        finally:
            stack.stop()
    finally:
        infra.stop()


def remember(value: str) -> str:
    """Secrets the suite creates are scanned for by the secret-hygiene test (when the whole suite runs)."""
    return remember_secret(value)


# --- shared by the hostile-input tests (test_hostile_input*.py) ------------------------------


@pytest.fixture(scope="package")
def attacker(resilient: Resilient) -> TenantKey:
    """The tenant the hostile input comes from: one for all the hostile-input tests."""
    return resilient.tenant("attacker")


def assert_still_healthy(resilient: Resilient, name: str) -> None:
    service = resilient.stack.services[name]
    assert service.process is not None and service.process.poll() is None, f"{name} died"
    with grpc.insecure_channel(service.grpc_addr) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING, f"{name} is {answer.status}"


def case_id(case: Any) -> str:
    """The test id of a parametrized case: its name."""
    hostile = case.values[0] if hasattr(case, "values") else case
    return str(hostile.name)
