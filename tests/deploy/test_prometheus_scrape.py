"""A real Prometheus (Debian's package) scrapes a running stack, loads Herald's
alert rules, and evaluates them and every dashboard expression against live data."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from herald.cli.embedded import free_port
from herald.cli.stack import Stack
from tests.deploy.conftest import PROMETHEUS, tool
from tests.deploy.promql import dashboard_expressions, rule_expressions
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver

# Present once one webhook went through (the others have no series until something happens).
LIVE = (
    "herald_jobs_accepted_total",
    "herald_jobs_published_total",
    "herald_deliveries_total",
    "herald_delivery_attempt_duration_seconds_bucket",
    "herald_rpc_duration_seconds_bucket",
    "herald_http_request_duration_seconds_bucket",
    "herald_stream_messages",
    "herald_stream_bytes",
    "herald_stream_stored_messages_total",
    "herald_consumer_pending_messages",
    "herald_consumer_ack_pending_messages",
    "herald_dead_letter_messages",
    "herald_jetstream_up",
    "herald_accept_to_delivered_seconds_bucket",
    "herald_attempts_per_job_bucket",
    # Exported from the start, every provider at 0 (closed / no verification yet).
    "herald_provider_circuit_state",
    "herald_inbound_verifications_total",
)


@pytest.fixture(scope="module")
def prometheus(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = tool("prometheus")
    work = tmp_path_factory.mktemp("prometheus")
    targets = stack.endpoints["metrics"].items()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(PROMETHEUS / "rules.yaml")],
        "scrape_configs": [
            {
                "job_name": "herald",
                "static_configs": [
                    {"targets": [url.split("//", 1)[1].split("/", 1)[0]], "labels": {"component": name}}
                    for name, url in targets
                ],
            }
        ],
    }
    (work / "prometheus.yml").write_text(yaml.safe_dump(config))
    address = f"127.0.0.1:{free_port()}"
    log = (work / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'data'}",
            f"--web.listen-address={address}",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://{address}"
    try:
        _until(lambda: httpx.get(f"{base}/-/ready", timeout=1).status_code == 200, 30, "Prometheus ready", work)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def query(base: str, expr: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{base}/api/v1/query", params={"query": expr}, timeout=10).json()
    assert answer["status"] == "success", f"{expr}: {answer}"
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def test_prometheus_scrapes_the_stack_and_evaluates_every_expression(
    prometheus: str, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    _until(lambda: _targets_up(prometheus), 30, "every service scraped")

    def send() -> None:
        response = httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": 1}}, headers=tenant.headers
        )
        assert response.status_code == 202, response.text
        assert wait_for_status(gateway, tenant, response.json()["id"])["status"] == "delivered"

    send()
    delivered = 'sum(herald_deliveries_total{outcome="succeeded"})'
    _until(lambda: query(prometheus, delivered), 20, "the delivery scraped")
    before = float(query(prometheus, delivered)[0]["value"][1])
    send()  # A second one, so rates and increases see the counters move.
    _until(lambda: float(query(prometheus, delivered)[0]["value"][1]) > before, 20, "the second delivery scraped")
    _until(lambda: query(prometheus, "herald_stream_messages"), 20, "the router's JetStream metrics")

    names = set(httpx.get(f"{prometheus}/api/v1/label/__name__/values", timeout=10).json()["data"])
    assert not set(LIVE) - names, f"not scraped: {sorted(set(LIVE) - names)}"

    for expression in rule_expressions() + dashboard_expressions():
        query(prometheus, expression.text)  # evaluates without error

    # The queue metrics are live, so the blind-queue alert is quiet; deliveries succeed.
    assert query(prometheus, "max(herald_jetstream_up)")[0]["value"][1] == "1"
    assert not query(prometheus, _rule("HeraldJetStreamUnreadable")["expr"])
    accepted_none_delivered = query(prometheus, _rule("HeraldJobsAcceptedNoneDelivered")["expr"])
    assert "webhook" not in {series["metric"].get("channel") for series in accepted_none_delivered}

    # Deliveries carry their provider ("webhook" for webhooks); no inbound refusals, so that alert is quiet.
    providers = query(prometheus, 'sum by (provider) (herald_deliveries_total{channel="webhook"})')
    assert {series["metric"]["provider"] for series in providers} == {"webhook"}
    assert not query(prometheus, _rule("HeraldInboundSignatureFailuresSpiking")["expr"])

    # The rules loaded, and every one evaluated cleanly.
    def evaluated() -> list[dict[str, Any]]:
        groups = httpx.get(f"{prometheus}/api/v1/rules", timeout=10).json()["data"]["groups"]
        return [rule for group in groups for rule in group["rules"]]

    _until(lambda: all(r.get("lastEvaluation", "").startswith("2") for r in evaluated()), 10, "rules evaluated")
    rules = evaluated()
    assert len(rules) == len(rule_expressions())
    assert all(rule["health"] == "ok" for rule in rules), [(r["name"], r.get("lastError")) for r in rules]


def _rule(name: str) -> dict[str, Any]:
    from tests.deploy.catalog import rules_file

    return next(r for g in rules_file()["groups"] for r in g["rules"] if r.get("alert") == name)


def _targets_up(base: str) -> bool:
    targets = httpx.get(f"{base}/api/v1/targets", timeout=5).json()["data"]["activeTargets"]
    return bool(targets) and all(t["health"] == "up" for t in targets)


def _until(check: Any, timeout: float, what: str, work: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (httpx.HTTPError, AssertionError, KeyError, IndexError) as error:
            last = error
        time.sleep(0.2)
    logs = (work / "prometheus.log").read_text() if work else ""
    raise AssertionError(f"timed out waiting for {what}: {last!r}\n{logs[-2000:]}")
