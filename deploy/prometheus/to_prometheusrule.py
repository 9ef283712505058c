"""Writes deploy/k8s/base/monitoring/prometheus-rule.yaml from rules.yaml.

rules.yaml is the source (promtool checks and unit-tests it); the PrometheusRule is
the same groups wrapped for prometheus-operator. `make deploy-rules` runs this;
tests/deploy fails when the two differ.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
RULES = HERE / "rules.yaml"
TARGET = HERE.parent / "k8s" / "base" / "monitoring" / "prometheus-rule.yaml"

HEADER = """\
# Generated from deploy/prometheus/rules.yaml by `make deploy-rules`: edit that file,
# not this one (the tests compare them).
"""


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def prometheus_rule(groups: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "herald", "labels": {"app.kubernetes.io/part-of": "herald"}},
        "spec": {"groups": groups},
    }


def render() -> str:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    body = yaml.dump(prometheus_rule(groups), Dumper=_Dumper, sort_keys=False, width=4096)
    return HEADER + body


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is stale: run `make deploy-rules`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
