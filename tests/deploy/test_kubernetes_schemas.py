"""The Kustomize overlays, rendered with `kubectl kustomize` and checked offline: strict
validation against the Kubernetes 1.30 schemas and the custom resources' required fields."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.deploy.conftest import KUBERNETES_VERSION, SERVICES, by_kind, python_tool
from tests.deploy.manifests import KEDA_SCALED_OBJECT, Docs, any_render, container_of, matches

CUSTOM_KINDS = {
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("postgresql.cnpg.io/v1", "Cluster"),
    KEDA_SCALED_OBJECT,
    # The mesh's CA and certificates (base/mesh-tls.yaml).
    ("cert-manager.io/v1", "Issuer"),
    ("cert-manager.io/v1", "Certificate"),
}


def test_built_in_objects_validate_strictly_against_kubernetes_1_30(docs: Docs) -> None:
    validator = python_tool("kubernetes_validate")
    errors = []
    for doc in docs:
        if (doc["apiVersion"], doc["kind"]) in CUSTOM_KINDS:
            continue
        try:
            validator.validate(doc, KUBERNETES_VERSION, strict=True)
        except validator.ValidationError as error:
            errors.append(f"{doc['kind']}/{doc['metadata']['name']}: {error.message} at {list(error.path)}")
        except validator.SchemaNotFoundError:
            errors.append(f"{doc['kind']} ({doc['apiVersion']}) is not a Kubernetes 1.30 kind")
    assert not errors, "\n".join(errors)


def test_the_validator_is_strict() -> None:
    """A misspelt field must fail, or the test above proves nothing."""
    validator = python_tool("kubernetes_validate")
    service = by_kind(any_render(), "Service")["herald-gateway"]
    broken = yaml.safe_load(yaml.safe_dump(service))
    broken["spec"]["portz"] = broken["spec"].pop("ports")
    with pytest.raises(validator.ValidationError):
        validator.validate(broken, KUBERNETES_VERSION, strict=True)


def test_the_custom_resources_are_exactly_the_known_ones(docs: Docs, overlay: str) -> None:
    """Anything else must be a Kubernetes kind (the strict validation above fails on an unknown one)."""
    kinds = {(doc["apiVersion"], doc["kind"]) for doc in docs}
    custom = {
        kind
        for kind in kinds
        if kind[0].split("/")[0].endswith((".coreos.com", ".cnpg.io", "keda.sh", "cert-manager.io"))
    }
    assert custom == (CUSTOM_KINDS if overlay == "prod" else CUSTOM_KINDS - {KEDA_SCALED_OBJECT})


def test_prometheus_rule_has_its_required_fields(docs: Docs) -> None:
    [rule] = by_kind(docs, "PrometheusRule").values()
    groups = rule["spec"]["groups"]
    assert groups
    for group in groups:
        assert isinstance(group["name"], str) and group["rules"]
        for item in group["rules"]:
            assert ("alert" in item) != ("record" in item), item
            assert isinstance(item["expr"], str) and item["expr"].strip()
            if "for" in item:
                assert re.fullmatch(r"(\d+(ms|s|m|h|d|w|y))+", item["for"]), item["for"]
            assert all(isinstance(v, str) for v in item.get("labels", {}).values())


def test_pod_monitors_select_pods_that_expose_the_port(docs: Docs) -> None:
    monitors = by_kind(docs, "PodMonitor")
    herald = monitors["herald"]
    endpoints = herald["spec"]["podMetricsEndpoints"]
    assert [e["port"] for e in endpoints] == ["metrics"]
    selector = herald["spec"]["selector"]["matchLabels"]
    selected = [
        d
        for d in by_kind(docs, "Deployment").values()
        if matches(selector, d["spec"]["template"]["metadata"]["labels"])
    ]
    assert {d["metadata"]["name"] for d in selected} == {f"herald-{s}" for s in SERVICES}
    for deployment in selected:
        names = {p["name"] for p in container_of(deployment)["ports"]}
        assert "metrics" in names
    assert monitors["herald-db"]["spec"]["selector"]["matchLabels"] == {"cnpg.io/cluster": "herald-db"}


def test_postgres_cluster_has_its_required_fields(docs: Docs, overlay: str) -> None:
    [cluster] = by_kind(docs, "Cluster").values()
    spec = cluster["spec"]
    assert isinstance(spec["instances"], int) and spec["instances"] >= 1
    assert spec["instances"] == (3 if overlay == "prod" else 1)
    assert re.fullmatch(r"\d+(Gi|Mi|Ti)", spec["storage"]["size"])
    assert spec["bootstrap"]["initdb"] == {"database": "herald", "owner": "herald"}
    # CloudNativePG names the application secret <cluster>-app; the ledger reads it.
    secret = f"{cluster['metadata']['name']}-app"
    for name in ("herald-ledger",):
        env = {e["name"]: e for e in container_of(by_kind(docs, "Deployment")[name]).get("env", [])}
        assert env["DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": "uri"}
