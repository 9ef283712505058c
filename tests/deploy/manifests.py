"""What the Kubernetes manifest tests share: the rendered documents, the ports the pods
declare, KEDA's kind, and the one container of a workload and the ConfigMap's data."""

from __future__ import annotations

from typing import Any

from tests.deploy.conftest import by_kind

Docs = tuple[dict[str, Any], ...]
KEDA_SCALED_OBJECT = ("keda.sh/v1alpha1", "ScaledObject")
GRPC_PORT, METRICS_PORT, HTTP_PORT, HEALTH_PORT = 50051, 9464, 8080, 50052


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def container_of(workload: dict[str, Any]) -> dict[str, Any]:
    [container] = workload["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = container
    return result


def config_of(docs: Docs) -> dict[str, str]:
    [config_map] = by_kind(docs, "ConfigMap").values()
    data: dict[str, str] = config_map["data"]
    return data


def any_render(overlay: str = "dev") -> Docs:
    from tests.deploy.conftest import render

    return render(overlay)
