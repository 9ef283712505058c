"""What the rendered manifests must say about every Herald service: its full set of objects,
named ports and probes, a locked-down pod, its autoscaling (KEDA on consumer lag in prod), the
generated ScaledObjects and NATS users, and the secrets it mounts as files."""

from __future__ import annotations

import pytest
import yaml

from herald.config import Settings
from tests.deploy.conftest import HTTP_SERVICES, K8S, SERVICES, by_kind
from tests.deploy.manifests import (
    GRPC_PORT,
    HEALTH_PORT,
    HTTP_PORT,
    KEDA_SCALED_OBJECT,
    METRICS_PORT,
    Docs,
    any_render,
    config_of,
    container_of,
    matches,
)

# Scaled by KEDA on consumer lag in prod (deploy/k8s/scaled_objects.py), with the work classes each reads.
KEDA_SCALED = {"webhook-sender": ("webhook",), "email-sender": ("email", "platform_email")}


@pytest.mark.parametrize("service", SERVICES)
def test_every_service_has_deployment_service_autoscaler_pdb_and_service_account(
    docs: Docs, overlay: str, service: str
) -> None:
    name = f"herald-{service}"
    deployment = by_kind(docs, "Deployment")[name]
    pod = deployment["spec"]["template"]
    assert matches(deployment["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])
    assert pod["metadata"]["labels"]["app.kubernetes.io/part-of"] == "herald"
    # The autoscaler owns the replica count; an apply must not reset it.
    assert "replicas" not in deployment["spec"]

    account = by_kind(docs, "ServiceAccount")[name]
    assert pod["spec"]["serviceAccountName"] == name
    assert account["automountServiceAccountToken"] is False
    assert pod["spec"]["automountServiceAccountToken"] is False

    # One autoscaler per Deployment: the base's HPA, or in prod KEDA's (which makes an HPA of its own).
    keda = overlay == "prod" and service in KEDA_SCALED
    assert (name in by_kind(docs, "ScaledObject")) == keda
    assert (name in by_kind(docs, "HorizontalPodAutoscaler")) != keda
    target, low, high = _autoscaling(docs, name)
    assert target == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    assert 1 <= low <= high

    pdb = by_kind(docs, "PodDisruptionBudget")[name]
    assert matches(pdb["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])

    container = container_of(deployment)
    assert container["args"] == ["run", service]
    assert container["resources"]["requests"]["cpu"] and container["resources"]["limits"]["memory"]


@pytest.mark.parametrize("service", SERVICES)
def test_ports_are_named_and_probes_use_health(docs: Docs, service: str) -> None:
    name = f"herald-{service}"
    container = container_of(by_kind(docs, "Deployment")[name])
    expected = {"grpc": GRPC_PORT, "metrics": METRICS_PORT} | ({"http": HTTP_PORT} if service in HTTP_SERVICES else {})
    # The plaintext health port is the pod's own (probes), not the Service's.
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == expected | {"health": HEALTH_PORT}
    svc = by_kind(docs, "Service")[name]
    assert {p["name"]: p["targetPort"] for p in svc["spec"]["ports"]} == {k: k for k in expected}
    assert matches(svc["spec"]["selector"], by_kind(docs, "Deployment")[name]["spec"]["template"]["metadata"]["labels"])
    assert container["startupProbe"]["grpc"]["port"] == HEALTH_PORT
    if service in HTTP_SERVICES:
        # HTTP services: ready and alive by their HTTP routes (herald.http_health).
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    else:
        for probe in ("readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == HEALTH_PORT, probe
    # The ports the processes listen on are the ones declared.
    config = config_of(docs)
    assert config["HERALD_GRPC_PORT"] == str(GRPC_PORT)
    assert config["HERALD_HEALTH_PORT"] == str(HEALTH_PORT)
    assert config["HERALD_METRICS_PORT"] == str(METRICS_PORT)
    assert config["HERALD_HTTP_PORT"] == str(HTTP_PORT)
    assert config["HERALD_GRPC_HOST"] == config["HERALD_HTTP_HOST"] == "0.0.0.0"


def test_pods_run_locked_down(docs: Docs) -> None:
    templates = [d["spec"]["template"] for d in by_kind(docs, "Deployment").values()]
    templates += [j["spec"]["template"] for j in by_kind(docs, "Job").values()]
    assert len(templates) == len(SERVICES) + 1
    for template in templates:
        pod = template["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == 10001  # the image's user (Dockerfile)
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["readOnlyRootFilesystem"] is True
            assert context["capabilities"] == {"drop": ["ALL"]}
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            volumes = {v["name"]: v for v in pod["volumes"]}
            assert "emptyDir" in volumes[mounts["/tmp"]]


def test_the_migration_job_runs_herald_migrate_against_the_cluster_database(docs: Docs) -> None:
    job = by_kind(docs, "Job")["herald-migrate"]
    container = container_of(job)
    assert container["args"] == ["migrate"]
    env = {e["name"]: e for e in container["env"]}
    assert env["DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {"name": "herald-db-app", "key": "uri"}
    assert job["spec"]["template"]["spec"]["restartPolicy"] in {"OnFailure", "Never"}


def _autoscaling(docs: Docs, name: str) -> tuple[dict[str, str], int, int]:
    """(scale target, min replicas, max replicas) of the Deployment's autoscaler, an HPA or a ScaledObject."""
    hpa = by_kind(docs, "HorizontalPodAutoscaler").get(name)
    if hpa is not None:
        return hpa["spec"]["scaleTargetRef"], hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]
    spec = by_kind(docs, "ScaledObject")[name]["spec"]
    return spec["scaleTargetRef"], spec["minReplicaCount"], spec["maxReplicaCount"]


@pytest.mark.parametrize("service", SERVICES)
def test_prod_runs_two_or_more_of_every_service_and_drains_one_at_a_time(service: str) -> None:
    docs = any_render("prod")
    name = f"herald-{service}"
    _target, low, _high = _autoscaling(docs, name)
    assert low >= 2, f"{name}: a single pod is an outage during its own restart"
    budget = by_kind(docs, "PodDisruptionBudget")[name]["spec"]
    # A drain may take one pod at a time, never the last ones.
    assert budget.get("maxUnavailable") == 1 or 1 <= budget.get("minAvailable", 0) <= low - 1, budget


# The ScaledObject fields this overlay relies on, as KEDA v2 documents them; there is no offline
# schema for KEDA's CRDs in the tools we install (the one Python models package does not refuse
# unknown fields), so a misspelt field is caught here instead.
SCALED_OBJECT_SPEC = {
    "scaleTargetRef", "pollingInterval", "cooldownPeriod", "initialCooldownPeriod", "idleReplicaCount",
    "minReplicaCount", "maxReplicaCount", "fallback", "advanced", "triggers",
}  # fmt: skip
NATS_JETSTREAM_METADATA = {
    "natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold", "activationLagThreshold",
    "useHttps",
}  # fmt: skip


@pytest.mark.parametrize("service", sorted(KEDA_SCALED))
def test_prod_scales_the_senders_on_the_lag_of_every_consumer_they_read(service: str) -> None:
    from herald.bus.fair import PRIORITIES, lane_durable
    from herald.bus.subjects import WorkClass

    docs = any_render("prod")
    scaled = by_kind(docs, "ScaledObject")[f"herald-{service}"]
    assert (scaled["apiVersion"], scaled["kind"]) == KEDA_SCALED_OBJECT
    spec = scaled["spec"]
    assert set(spec) <= SCALED_OBJECT_SPEC, set(spec) - SCALED_OBJECT_SPEC
    assert set(spec["advanced"]) <= {
        "horizontalPodAutoscalerConfig",
        "restoreToOriginalReplicaCount",
        "scalingModifiers",
    }
    assert set(spec["advanced"]["horizontalPodAutoscalerConfig"]) <= {"name", "behavior"}
    assert isinstance(spec["pollingInterval"], int) and isinstance(spec["cooldownPeriod"], int)

    triggers = spec["triggers"]
    assert {t["type"] for t in triggers} == {"cpu", "nats-jetstream"}
    for trigger in triggers:
        assert set(trigger) <= {"type", "metadata", "metricType", "name", "authenticationRef", "useCachedMetrics"}
        # KEDA's trigger metadata is a map of strings.
        assert all(isinstance(v, str) for v in trigger["metadata"].values()), trigger
    [cpu] = [t for t in triggers if t["type"] == "cpu"]
    assert cpu["metricType"] == "Utilization" and 0 < int(cpu["metadata"]["value"]) <= 100

    settings = Settings(
        **{k.removeprefix("HERALD_").lower(): v for k, v in config_of(docs).items() if k.startswith("HERALD_")}
    )
    lag = [t["metadata"] for t in triggers if t["type"] == "nats-jetstream"]
    namespace = scaled["metadata"]["namespace"]
    for metadata in lag:
        assert set(metadata) <= NATS_JETSTREAM_METADATA, set(metadata) - NATS_JETSTREAM_METADATA
        assert {"natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold"} <= set(metadata)
        # The chart's headless Service in Herald's namespace, on the monitoring port the values enable.
        assert metadata["natsServerMonitoringEndpoint"] == f"nats-headless.{namespace}.svc.cluster.local:8222"
        assert metadata["stream"] == settings.stream_name("work")
        assert int(metadata["lagThreshold"]) > 0
    expected = {
        lane_durable(WorkClass(work_class), priority, lane)
        for work_class in KEDA_SCALED[service]
        for priority in PRIORITIES
        for lane in range(settings.fairness_lanes)
    }
    consumers = [metadata["consumer"] for metadata in lag]
    assert len(consumers) == len(set(consumers)) and set(consumers) == expected
    values = yaml.safe_load((K8S / "nats-values.yaml").read_text())
    assert values["config"]["monitor"]["enabled"] is True


@pytest.mark.parametrize("script", ["scaled_objects", "nats_users"])
def test_the_generated_files_follow_the_code(script: str) -> None:
    """The KEDA ScaledObjects and the NATS users, generated for the prod overlay's prefix and lanes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(script, K8S / f"{script}.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    config = config_of(any_render("prod"))
    lanes = int(config.get("HERALD_FAIRNESS_LANES", Settings.model_fields["fairness_lanes"].default))
    assert generator.OUT.read_text() == generator.render(config["HERALD_BUS_PREFIX"], lanes), (
        f"stale: run `.venv/bin/python deploy/k8s/{script}.py`"
    )


def test_each_service_mounts_its_own_bus_user_and_mesh_certificate(docs: Docs) -> None:
    """Secrets mounted as files: the key of the NATS users' Secret named after the service, and the
    service's own cert-manager Secret; the paths are the ConfigMap's."""
    config = config_of(docs)
    certificates = {d["spec"]["secretName"]: d for d in docs if d["kind"] == "Certificate"}
    for service in SERVICES:
        volumes = {
            v["name"]: v
            for v in by_kind(docs, "Deployment")[f"herald-{service}"]["spec"]["template"]["spec"]["volumes"]
        }
        assert volumes["nats-user"]["secret"]["items"] == [{"key": service, "path": "user"}]
        mesh = volumes["mesh-tls"]["secret"]["secretName"]
        assert certificates[mesh]["spec"]["commonName"] == service
        assert certificates[mesh]["spec"]["dnsNames"] == [f"herald-{service}"]
    assert config["HERALD_NATS_USER_FILE"] == "/var/run/secrets/herald/nats/user"
    assert config["HERALD_MESH_CERT_FILE"].startswith("/var/run/secrets/herald/mesh/")
