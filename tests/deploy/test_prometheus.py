"""Alert rules and the dashboard: promtool checks and unit-tests the rules, every
PromQL expression parses (with Prometheus' own parser, through promtool), and every
metric and label it names is one the code really exports, or one listed as planned
and used only where planned metrics are allowed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.deploy import catalog
from tests.deploy.conftest import PROMETHEUS, REPO, run, tool
from tests.deploy.promql import (
    Expression,
    dashboard,
    dashboard_expressions,
    panels,
    rule_expressions,
    template_variables,
    usage,
)


def all_expressions() -> list[Expression]:
    return rule_expressions() + dashboard_expressions()


def test_promtool_checks_the_rules() -> None:
    done = run([tool("promtool"), "check", "rules", str(PROMETHEUS / "rules.yaml")])
    assert done.returncode == 0, done.stdout + done.stderr


def test_promtool_unit_tests_pass() -> None:
    done = run([tool("promtool"), "test", "rules", str(PROMETHEUS / "rules_test.yaml")])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_expression_parses_with_prometheus_own_parser(tmp_path: Path) -> None:
    """promtool parses each dashboard expression too: they go into a throwaway rule file."""
    records = [
        {"record": f"dashboard:expr_{i}", "expr": expression.text}
        for i, expression in enumerate(dashboard_expressions())
    ]
    assert len(records) > 20
    rules = tmp_path / "dashboard-exprs.yaml"
    rules.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": records}]}))
    done = run([tool("promtool"), "check", "rules", str(rules)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_metric_used_is_exported_or_planned() -> None:
    exported = catalog.series()
    planned = catalog.planned_series()
    problems = []
    for expression in all_expressions():
        for name, _matchers in usage(expression.text).selectors:
            if name in exported:
                continue
            if name in planned and expression.planned_allowed:
                continue
            if name in planned:
                problems.append(f"{expression.where}: planned metric {name} outside the planned group/panels")
            else:
                problems.append(f"{expression.where}: {name} is not exported by the code")
    assert not problems, "\n".join(problems)


def test_every_label_used_exists_on_its_metrics() -> None:
    known = {**catalog.planned_series(), **catalog.series()}
    problems = []
    for expression in all_expressions():
        used = usage(expression.text)
        labels_in_play: set[str] = set(catalog.TARGET_LABELS)
        for name, matchers in used.selectors:
            labels = known.get(name, frozenset()) | catalog.TARGET_LABELS
            labels_in_play |= labels
            for label in matchers:
                if label not in labels:
                    problems.append(f"{expression.where}: {name} has no label {label!r}")
        for label in used.grouping - labels_in_play:
            problems.append(f"{expression.where}: groups by {label!r}, which none of its metrics has")
    assert not problems, "\n".join(problems)


def test_label_values_are_ones_the_code_produces() -> None:
    """channel="..." and outcome="..." (exact matches) must name values that exist ("" = no such label)."""
    values = catalog.label_values()
    problems = []
    for expression in all_expressions():
        for name, matchers in usage(expression.text).selectors:
            for label, (op, value) in matchers.items():
                exact = op in ("MatchOp.Equal", "MatchOp.NotEqual")
                if label in values and exact and value and value not in values[label]:
                    problems.append(f"{expression.where}: {name}{{{label}={value!r}}}: not in {sorted(values[label])}")
    assert not problems, "\n".join(problems)


def test_planned_metrics_are_not_silently_different_once_exported() -> None:
    """A planned metric is either not exported yet, or exported with the planned type and labels."""
    exported = catalog.exported()
    for name, family in catalog.planned().items():
        if name in exported:
            assert exported[name].type == family.type, f"{name}: exported as {exported[name].type}"
            assert exported[name].labels == family.labels, f"{name}: exported labels {sorted(exported[name].labels)}"
    # And the planned group holds nothing else: an alert on exported metrics belongs in the others.
    for expression in rule_expressions():
        names = {name for name, _ in usage(expression.text).selectors}
        if expression.planned_allowed:
            assert names & set(catalog.planned_series()), f"{expression.where} uses no planned metric"


def test_every_alert_is_documented_labelled_and_unit_tested() -> None:
    operations = (REPO / "docs" / "operations.md").read_text()
    anchors = {_anchor(heading) for heading in re.findall(r"^#+ (.+)$", operations, flags=re.MULTILINE)}
    tested = _alerts_with_firing_tests()
    for group in catalog.rules_file()["groups"]:
        for rule in group["rules"]:
            name = rule["alert"]
            assert rule["labels"]["severity"] in {"info", "warning", "critical"}, name
            assert {"summary", "description", "runbook"} <= set(rule["annotations"]), name
            runbook = rule["annotations"]["runbook"]
            assert runbook.startswith("docs/operations.md#"), name
            assert runbook.split("#", 1)[1] in anchors, f"{name}: no heading for {runbook} in docs/operations.md"
            assert name in tested, f"{name} has no promtool unit test where it fires"


def _alerts_with_firing_tests() -> set[str]:
    tests = yaml.safe_load((PROMETHEUS / "rules_test.yaml").read_text())["tests"]
    return {case["alertname"] for test in tests for case in test.get("alert_rule_test", []) if case.get("exp_alerts")}


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_dashboard_is_well_formed() -> None:
    board = dashboard()
    every = panels(board)
    ids = [panel["id"] for panel in every]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    assert board["uid"] and board["title"]
    variables = template_variables(board)
    assert "datasource" in variables
    for panel in every:
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24, panel["title"]
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
            assert target["expr"].strip(), panel["title"]
    titles = [panel["title"] for panel in every if panel["type"] == "row"]
    assert titles == [
        "Overview",
        "Admission",
        "Delivery per channel",
        "Providers",
        "Queues and dead letters",
        "Top tenants",
    ]


def test_dashboard_never_groups_or_filters_by_tenant() -> None:
    """Tenant ids are not labels; a panel that pretends otherwise would show nothing."""
    for expression in dashboard_expressions():
        used = usage(expression.text)
        labels = set(used.grouping)
        for _name, matchers in used.selectors:
            labels |= set(matchers)
        assert not {label for label in labels if "tenant" in label}, expression.where


@pytest.mark.parametrize(
    ("name", "group"),
    [("HeraldProviderCircuitOpen", "herald-delivery"), ("HeraldInboundSignatureFailuresSpiking", "herald-inbound")],
)
def test_alerts_whose_metric_is_exported_left_the_planned_group(name: str, group: str) -> None:
    groups = {rule["alert"]: group["name"] for group in catalog.rules_file()["groups"] for rule in group["rules"]}
    assert groups[name] == group


def test_nothing_planned_is_exported_already() -> None:
    """A planned metric the code exports has graduated: its entry leaves planned-metrics.yaml, and its alerts
    and panels leave the planned group and the "(planned)" titles (the metric checks then apply in full)."""
    assert not set(catalog.planned()) & set(catalog.exported())
    titles = [panel["title"] for panel in panels(dashboard())]
    groups = [group["name"] for group in catalog.rules_file()["groups"]]
    if not catalog.planned():
        assert not [title for title in titles if "(planned)" in title]
        assert "herald-planned" not in groups


def test_the_service_metrics_are_on_the_dashboard() -> None:
    """Every metric an operator watches is exported and drawn: the dashboard test above proves each expression
    names real series; this one that none of them is left out."""
    drawn = {name for expression in dashboard_expressions() for name, _ in usage(expression.text).selectors}
    wanted = {
        "herald_http_request_duration_seconds_count",
        "herald_rpc_duration_seconds_count",
        "herald_jobs_accepted_total",
        "herald_jobs_rejected_total",
        "herald_deliveries_total",
        "herald_accept_to_delivered_seconds_bucket",
        "herald_attempts_per_job_bucket",
        "herald_consumer_pending_messages",
        "herald_dead_letter_messages",
        "herald_rate_limited_total",
        "herald_provider_circuit_state",
        "herald_inbound_verifications_total",
    }
    assert wanted - drawn == set()
    by_provider = [
        e.where
        for e in dashboard_expressions()
        if "herald_deliveries_total" in e.text and "provider" in usage(e.text).grouping
    ]
    assert by_provider, "no panel shows deliveries by provider"


def test_prometheus_rule_object_is_generated_from_rules_yaml() -> None:
    done = run([str(Path(__import__("sys").executable)), str(PROMETHEUS / "to_prometheusrule.py"), "--check"])
    assert done.returncode == 0, done.stderr
