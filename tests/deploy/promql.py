"""Reading PromQL: the expressions in the rules and the dashboard, the Grafana
variables in them, and the metric and label names they use (promql-parser's AST)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.deploy.catalog import rules_file
from tests.deploy.conftest import DASHBOARD, python_tool

# Grafana's built-in interval variables, replaced by a duration before parsing.
GRAFANA_DURATIONS = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}
_VARIABLE = re.compile(r"\$\{?(\w+)(?::\w+)?\}?")


@dataclass(frozen=True)
class Expression:
    where: str  # "rule HeraldX" or "panel 'Title' A"
    text: str  # as written
    planned_allowed: bool  # in the planned rule group, or a panel titled "(planned)"


@dataclass
class Usage:
    """What one expression refers to."""

    selectors: list[tuple[str, dict[str, tuple[str, str]]]] = field(default_factory=list)  # name, label -> (op, value)
    grouping: set[str] = field(default_factory=set)  # by/without/on/ignoring/group_x labels


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for panel in board["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))
    return out


def template_variables(board: dict[str, Any]) -> set[str]:
    return {variable["name"] for variable in board["templating"]["list"]}


def substitute(expr: str, variables: set[str]) -> str:
    """Grafana variables -> something PromQL parses: durations for the interval
    variables, a match-all regex for the dashboard's own (always used with =~)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in GRAFANA_DURATIONS:
            return GRAFANA_DURATIONS[name]
        if name in variables:
            return ".*"
        raise AssertionError(f"unknown Grafana variable ${name} in {expr!r}")

    return _VARIABLE.sub(value, expr)


def rule_expressions() -> list[Expression]:
    out = []
    for group in rules_file()["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            out.append(Expression(f"rule {name}", rule["expr"], group["name"] == "herald-planned"))
    return out


def dashboard_expressions() -> list[Expression]:
    board = dashboard()
    variables = template_variables(board)
    out = []
    for panel in panels(board):
        for target in panel.get("targets", []):
            out.append(
                Expression(
                    f"panel {panel['title']!r} {target['refId']}",
                    substitute(target["expr"], variables),
                    "(planned)" in panel["title"],
                )
            )
    return out


def usage(expr: str) -> Usage:
    promql = python_tool("promql_parser")
    found = Usage()

    def visit(node: Any) -> None:
        if isinstance(node, promql.VectorSelector):
            matchers = {m.name: (str(m.op), m.value) for m in node.matchers.matchers}
            name = node.name or matchers.pop("__name__", ("", ""))[1]
            found.selectors.append((name, matchers))
        elif isinstance(node, promql.AggregateExpr) and node.modifier is not None:
            found.grouping.update(node.modifier.labels)
        elif isinstance(node, promql.BinaryExpr) and node.modifier is not None:
            if node.modifier.matching is not None:
                found.grouping.update(node.modifier.matching.labels)
            found.grouping.update(node.modifier.group_labels or [])

    promql.walk(promql.parse(expr), visit)
    return found
