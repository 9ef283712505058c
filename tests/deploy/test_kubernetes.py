"""The Kustomize overlays, rendered with `kubectl kustomize` and checked offline:
strict validation against the Kubernetes 1.30 schemas, the custom resources'
required fields, and what the manifests must say about Herald (every service has
its full set of objects, probes, security context, configuration by ConfigMap and
secrets by reference, network policies that allow exactly the architecture's calls)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from herald.config import Settings
from tests.deploy.conftest import (
    HTTP_SERVICES,
    K8S,
    KUBERNETES_VERSION,
    SERVICES,
    by_kind,
    python_tool,
)

Docs = tuple[dict[str, Any], ...]
KEDA_SCALED_OBJECT = ("keda.sh/v1alpha1", "ScaledObject")
CUSTOM_KINDS = {
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("postgresql.cnpg.io/v1", "Cluster"),
    KEDA_SCALED_OBJECT,
    # The mesh's CA and certificates (base/mesh-tls.yaml).
    ("cert-manager.io/v1", "Issuer"),
    ("cert-manager.io/v1", "Certificate"),
}
# Scaled by KEDA on consumer lag in prod (deploy/k8s/scaled_objects.py), with the work classes each reads.
KEDA_SCALED = {"webhook-sender": ("webhook",), "email-sender": ("email", "platform_email")}
GRPC_PORT, METRICS_PORT, HTTP_PORT, HEALTH_PORT = 50051, 9464, 8080, 50052


# ---- schemas ------------------------------------------------------------


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
    service = by_kind(_any_render(), "Service")["herald-gateway"]
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
        if _matches(selector, d["spec"]["template"]["metadata"]["labels"])
    ]
    assert {d["metadata"]["name"] for d in selected} == {f"herald-{s}" for s in SERVICES}
    for deployment in selected:
        names = {p["name"] for p in _container(deployment)["ports"]}
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
        env = {e["name"]: e for e in _container(by_kind(docs, "Deployment")[name]).get("env", [])}
        assert env["DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": "uri"}


# ---- every service ------------------------------------------------------


@pytest.mark.parametrize("service", SERVICES)
def test_every_service_has_deployment_service_autoscaler_pdb_and_service_account(
    docs: Docs, overlay: str, service: str
) -> None:
    name = f"herald-{service}"
    deployment = by_kind(docs, "Deployment")[name]
    pod = deployment["spec"]["template"]
    assert _matches(deployment["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])
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
    assert _matches(pdb["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])

    container = _container(deployment)
    assert container["args"] == ["run", service]
    assert container["resources"]["requests"]["cpu"] and container["resources"]["limits"]["memory"]


@pytest.mark.parametrize("service", SERVICES)
def test_ports_are_named_and_probes_use_health(docs: Docs, service: str) -> None:
    name = f"herald-{service}"
    container = _container(by_kind(docs, "Deployment")[name])
    expected = {"grpc": GRPC_PORT, "metrics": METRICS_PORT} | ({"http": HTTP_PORT} if service in HTTP_SERVICES else {})
    # The plaintext health port is the pod's own (probes), not the Service's.
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == expected | {"health": HEALTH_PORT}
    svc = by_kind(docs, "Service")[name]
    assert {p["name"]: p["targetPort"] for p in svc["spec"]["ports"]} == {k: k for k in expected}
    assert _matches(
        svc["spec"]["selector"], by_kind(docs, "Deployment")[name]["spec"]["template"]["metadata"]["labels"]
    )
    assert container["startupProbe"]["grpc"]["port"] == HEALTH_PORT
    if service in HTTP_SERVICES:
        # HTTP services: ready and alive by their HTTP routes (herald.http_health).
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    else:
        for probe in ("readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == HEALTH_PORT, probe
    # The ports the processes listen on are the ones declared.
    config = _config(docs)
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
    container = _container(job)
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
    docs = _any_render("prod")
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

    docs = _any_render("prod")
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
        **{k.removeprefix("HERALD_").lower(): v for k, v in _config(docs).items() if k.startswith("HERALD_")}
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
    config = _config(_any_render("prod"))
    lanes = int(config.get("HERALD_FAIRNESS_LANES", Settings.model_fields["fairness_lanes"].default))
    assert generator.OUT.read_text() == generator.render(config["HERALD_BUS_PREFIX"], lanes), (
        f"stale: run `.venv/bin/python deploy/k8s/{script}.py`"
    )


def test_each_service_mounts_its_own_bus_user_and_mesh_certificate(docs: Docs) -> None:
    """Secrets mounted as files: the key of the NATS users' Secret named after the service, and the
    service's own cert-manager Secret; the paths are the ConfigMap's."""
    config = _config(docs)
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


# ---- configuration and secrets ------------------------------------------


def test_configuration_is_valid_settings(docs: Docs, overlay: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(docs)
    fields = {f"HERALD_{name.upper()}" for name in Settings.model_fields} | {"NATS_URL", "DATABASE_URL"}
    unknown = set(config) - fields
    assert not unknown, f"not Herald settings (typo?): {sorted(unknown)}"
    for key, value in config.items():
        monkeypatch.setenv(key, value)
    settings = Settings()
    assert settings.stream_replicas == (3 if overlay == "prod" else 1)
    assert settings.webhook_allow_loopback is False
    assert settings.ledger_addr == "dns:///herald-ledger:50051"
    assert settings.router_addr == "dns:///herald-router:50051"
    assert settings.email_sender_addr == "dns:///herald-email-sender:50051"
    assert settings.webhook_sender_addr == "dns:///herald-webhook-sender:50051"
    assert settings.nats_url == "nats://nats:4222"


@pytest.mark.parametrize("service", ["ledger", "router", "email-sender", "webhook-sender"])
def test_internal_grpc_services_are_headless(docs: Docs, service: str) -> None:
    """DNS must return every pod so open_channel's round_robin spreads calls over the replicas."""
    svc = next(d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == f"herald-{service}")
    assert svc["spec"].get("clusterIP") == "None"


def test_loopback_delivery_is_never_enabled(docs: Docs) -> None:
    assert "HERALD_WEBHOOK_ALLOW_LOOPBACK" not in yaml.safe_dump_all(docs)


def test_secrets_are_referenced_never_defined(docs: Docs) -> None:
    assert not by_kind(docs, "Secret"), "secrets are created out of band, not shipped in the manifests"
    refs: dict[str, set[str]] = {}
    for deployment in [*by_kind(docs, "Deployment").values(), *by_kind(docs, "Job").values()]:
        container = _container(deployment)
        names = {e["name"] for e in container.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})}
        names |= {f"envFrom:{s['secretRef']['name']}" for s in container.get("envFrom", []) if "secretRef" in s}
        refs[deployment["metadata"]["name"]] = names
    # Each secret reaches only the services that use it.
    assert refs["herald-gateway"] == {"HERALD_CONSOLE_SESSION_KEY"}
    assert refs["herald-ledger"] == {"DATABASE_URL", "HERALD_FIRST_OPERATOR", "envFrom:herald-master-keys"}
    assert refs["herald-migrate"] == {"DATABASE_URL"}
    alerts = {"HERALD_ALERT_SLACK_URL", "HERALD_ALERT_WEBHOOK_URL"}
    assert refs["herald-webhook-sender"] == {"envFrom:herald-master-keys", *alerts}
    platform_email = {"HERALD_PLATFORM_EMAIL_API_KEY", "HERALD_PLATFORM_SMTP_PASSWORD"}
    assert refs["herald-email-sender"] == {"envFrom:herald-master-keys", *alerts, *platform_email}
    payments = {"HERALD_PAYSTACK_SECRET_KEY", "HERALD_POLAR_WEBHOOK_SECRET"}
    assert refs["herald-verifier"] == {"envFrom:herald-master-keys", *payments}
    assert refs["herald-router"] == set()


def test_every_container_reads_the_generated_config_map(docs: Docs) -> None:
    [config_map] = by_kind(docs, "ConfigMap").values()
    for workload in [*by_kind(docs, "Deployment").values(), *by_kind(docs, "Job").values()]:
        refs = [s["configMapRef"]["name"] for s in _container(workload)["envFrom"] if "configMapRef" in s]
        assert refs == [config_map["metadata"]["name"]], workload["metadata"]["name"]


def test_nats_values_give_a_three_node_jetstream_cluster() -> None:
    values = yaml.safe_load((K8S / "nats-values.yaml").read_text())
    assert values["config"]["cluster"]["enabled"] is True
    assert values["config"]["cluster"]["replicas"] == 3
    jetstream = values["config"]["jetstream"]
    assert jetstream["enabled"] is True and jetstream["fileStore"]["enabled"] is True
    assert jetstream["fileStore"]["pvc"]["enabled"] is True
    assert jetstream["merge"]["sync_interval"] == "always", "acknowledged writes are synced to disk"
    assert values["podDisruptionBudget"]["enabled"] is True
    assert values["promExporter"]["enabled"] is True and values["promExporter"]["podMonitor"]["enabled"] is True
    # R3 streams need three servers.
    assert int(_config(_any_render("prod"))["HERALD_STREAM_REPLICAS"]) <= values["config"]["cluster"]["replicas"]


# ---- network policies ---------------------------------------------------

NATS_POD = {"app.kubernetes.io/name": "nats", "app.kubernetes.io/component": "nats"}
POSTGRES_POD = {"cnpg.io/cluster": "herald-db", "cnpg.io/instanceRole": "primary"}
INTERNET = "203.0.113.10"  # TEST-NET-3: stands for any public address
PRIVATE = "10.1.2.3"
# Who may open a connection to whom (docs/architecture.md).
CALLS = {
    ("gateway", "router"),
    ("gateway", "ledger"),
    ("gateway", "email-sender"),
    ("gateway", "webhook-sender"),
    ("router", "ledger"),
    ("webhook-sender", "ledger"),
    ("email-sender", "ledger"),
    ("verifier", "ledger"),
}
USES_NATS = {"gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier"}
USES_POSTGRES = {"ledger", "migrate"}
USES_INTERNET = {"webhook-sender", "email-sender"}
PUBLIC = {"gateway", "verifier"}
INGRESS_CONTROLLER = {"app.kubernetes.io/name": "ingress-nginx"}


def test_network_policies_allow_exactly_the_architecture(docs: Docs) -> None:
    net = _Network(docs)
    workloads = [*SERVICES, "migrate"]
    for source in workloads:
        for target in SERVICES:
            allowed = net.allows(source, net.pod(target), GRPC_PORT)
            assert allowed == ((source, target) in CALLS), f"{source} -> {target} gRPC: {allowed}"
        assert net.allows(source, NATS_POD, 4222) == (source in USES_NATS), f"{source} -> NATS"
        assert net.allows(source, POSTGRES_POD, 5432) == (source in USES_POSTGRES), f"{source} -> PostgreSQL"
        assert net.allows_ip(source, INTERNET, 443) == (source in USES_INTERNET), f"{source} -> internet"
        assert not net.allows_ip(source, PRIVATE, 443), f"{source} -> private address"
        assert net.egress_allowed(source, {"k8s-app": "kube-dns"}, 53, namespace="kube-system"), f"{source} DNS"
    for target in SERVICES:
        port = HTTP_PORT if target in HTTP_SERVICES else GRPC_PORT
        assert not net.ingress_allowed(target, None, port), f"outside -> {target} bypassing the ingress controller"
        from_controller = net.ingress_allowed(target, INGRESS_CONTROLLER, port, namespace="ingress-nginx")
        assert from_controller == (target in PUBLIC), f"ingress controller -> {target}:{port}"
        assert not net.ingress_allowed(target, INGRESS_CONTROLLER, METRICS_PORT, namespace="ingress-nginx")
        prometheus = {"app.kubernetes.io/name": "prometheus"}
        assert net.ingress_allowed(target, prometheus, METRICS_PORT, namespace="monitoring"), f"scrape {target}"
        # Anyone else reaches no metrics port.
        assert not net.ingress_allowed(target, net.pod("router"), METRICS_PORT), f"router -> {target} metrics"
    for target in ("router", "ledger", "webhook-sender", "email-sender", "verifier"):
        assert not net.ingress_allowed(target, INGRESS_CONTROLLER, GRPC_PORT, namespace="ingress-nginx"), target


def _ingress_routes(docs: Docs) -> dict[str, tuple[str, str]]:
    ingress = next(d for d in docs if d["kind"] == "Ingress")
    return {
        path["path"]: (path["backend"]["service"]["name"], path["backend"]["service"]["port"]["name"])
        for rule in ingress["spec"]["rules"]
        for path in rule["http"]["paths"]
    }


def test_ingress_routes_the_public_api_console_and_receivers_but_not_admin(docs: Docs) -> None:
    ingresses = [d for d in docs if d["kind"] == "Ingress"]
    assert len(ingresses) == 1 and ingresses[0]["spec"]["ingressClassName"]
    routes = _ingress_routes(docs)
    assert routes == {
        "/v1": ("herald-gateway", "http"),
        "/console": ("herald-gateway", "http"),
        "/inbound": ("herald-verifier", "http"),
    }
    # Prefix matching is by path element: /console does not reach /admin/console (the operator console).
    assert not any(path.startswith("/admin") or path in ("/", "") for path in routes)
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    for name, port in routes.values():
        assert port in {p["name"] for p in services[name]["spec"]["ports"]}


def test_prod_ingress_terminates_tls_for_its_host() -> None:
    ingress = next(d for d in _any_render("prod") if d["kind"] == "Ingress")
    hosts = [rule["host"] for rule in ingress["spec"]["rules"]]
    assert ingress["spec"]["tls"] == [{"hosts": hosts, "secretName": "herald-tls"}]


class _Network:
    """Just enough NetworkPolicy semantics for Herald's policies (same-namespace pod
    selectors, namespace selectors by name, ipBlocks, numbered and named ports)."""

    def __init__(self, docs: Docs) -> None:
        self.namespace = next(d["metadata"]["namespace"] for d in docs if d["kind"] == "Deployment")
        self.policies = list(by_kind(docs, "NetworkPolicy").values())
        self.templates = {
            d["metadata"]["name"].removeprefix("herald-"): d["spec"]["template"]
            for d in [*by_kind(docs, "Deployment").values(), *by_kind(docs, "Job").values()]
        }

    def pod(self, workload: str) -> dict[str, str]:
        labels: dict[str, str] = self.templates[workload]["metadata"]["labels"]
        return labels

    def _ports(self, labels: dict[str, str]) -> dict[str, int]:
        for template in self.templates.values():
            if template["metadata"]["labels"] == labels:
                return {
                    p["name"]: p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])
                }
        return {}

    def _selecting(self, labels: dict[str, str], kind: str) -> list[dict[str, Any]]:
        return [
            p
            for p in self.policies
            if kind in p["spec"]["policyTypes"] and _matches(p["spec"]["podSelector"].get("matchLabels", {}), labels)
        ]

    @staticmethod
    def _port_ok(rule: dict[str, Any], port: int, named: dict[str, int]) -> bool:
        if "ports" not in rule:
            return True
        return any(named.get(p["port"], p["port"]) == port for p in rule["ports"])

    def _peer_ok(self, peer: dict[str, Any], labels: dict[str, str] | None, namespace: str) -> bool:
        if labels is None or "ipBlock" in peer:
            return False
        if "namespaceSelector" in peer:
            wanted = peer["namespaceSelector"].get("matchLabels", {})
            if wanted.get("kubernetes.io/metadata.name", namespace) != namespace:
                return False
        elif namespace != self.namespace:
            return False
        return _matches(peer.get("podSelector", {}).get("matchLabels", {}), labels)

    def egress_allowed(self, source: str, labels: dict[str, str], port: int, namespace: str | None = None) -> bool:
        namespace = namespace or self.namespace
        policies = self._selecting(self.pod(source), "Egress")
        if not policies:
            return True
        named = self._ports(labels)
        return any(
            self._port_ok(rule, port, named) and any(self._peer_ok(peer, labels, namespace) for peer in rule["to"])
            for policy in policies
            for rule in policy["spec"].get("egress", [])
        )

    def ingress_allowed(
        self, target: str, labels: dict[str, str] | None, port: int, namespace: str | None = None
    ) -> bool:
        """labels None: a client outside the cluster (through the ingress controller or a load balancer)."""
        namespace = namespace or self.namespace
        target_labels = self.pod(target)
        policies = self._selecting(target_labels, "Ingress")
        if not policies:
            return True
        named = self._ports(target_labels)
        for policy in policies:
            for rule in policy["spec"].get("ingress", []):
                if not self._port_ok(rule, port, named):
                    continue
                if "from" not in rule or any(self._peer_ok(peer, labels, namespace) for peer in rule["from"]):
                    return True
        return False

    def allows(self, source: str, target_labels: dict[str, str], port: int) -> bool:
        if not self.egress_allowed(source, target_labels, port):
            return False
        herald = {name: labels for name, labels in ((n, self.pod(n)) for n in self.templates)}
        for name, labels in herald.items():
            if labels == target_labels:
                return self.ingress_allowed(name, self.pod(source), port)
        return True  # NATS and PostgreSQL keep their own installers' policies

    def allows_ip(self, source: str, address: str, port: int) -> bool:
        import ipaddress

        ip = ipaddress.ip_address(address)
        for policy in self._selecting(self.pod(source), "Egress"):
            for rule in policy["spec"].get("egress", []):
                if not self._port_ok(rule, port, {}):
                    continue
                for peer in rule.get("to", []):
                    block = peer.get("ipBlock")
                    if not block or ip.version != ipaddress.ip_network(block["cidr"]).version:
                        continue
                    inside = ip in ipaddress.ip_network(block["cidr"])
                    excluded = any(ip in ipaddress.ip_network(c) for c in block.get("except", []))
                    if inside and not excluded:
                        return True
        return False


# ---- helpers ------------------------------------------------------------


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _container(workload: dict[str, Any]) -> dict[str, Any]:
    [container] = workload["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = container
    return result


def _config(docs: Docs) -> dict[str, str]:
    [config_map] = by_kind(docs, "ConfigMap").values()
    data: dict[str, str] = config_map["data"]
    return data


def _any_render(overlay: str = "dev") -> Docs:
    from tests.deploy.conftest import render

    return render(overlay)
