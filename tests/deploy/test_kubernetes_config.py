"""Configuration by ConfigMap and secrets by reference in the rendered manifests, and the
NATS chart's values for a three-node JetStream cluster."""

from __future__ import annotations

import pytest
import yaml

from herald.config import Settings
from tests.deploy.conftest import K8S, by_kind
from tests.deploy.manifests import Docs, any_render, config_of, container_of


def test_configuration_is_valid_settings(docs: Docs, overlay: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_of(docs)
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
        container = container_of(deployment)
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
        refs = [s["configMapRef"]["name"] for s in container_of(workload)["envFrom"] if "configMapRef" in s]
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
    assert int(config_of(any_render("prod"))["HERALD_STREAM_REPLICAS"]) <= values["config"]["cluster"]["replicas"]
