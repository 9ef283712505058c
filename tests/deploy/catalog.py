"""What the code exports, read from the code itself: every module of the kernel and
the six services is imported (their metrics register in prometheus_client's
registry), plus the JetStream collector, which registers only in the router."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import REGISTRY, CollectorRegistry

from herald.telemetry.jetstream_metrics import ConsumerSample, JetStreamCollector, Snapshot, StreamSample
from tests.deploy.conftest import PROMETHEUS

PACKAGES = (
    "herald",
    "herald_gateway",
    "herald_router",
    "herald_ledger",
    "herald_webhook_sender",
    "herald_email_sender",
    "herald_verifier",
)
# Labels Prometheus adds to every scraped series (target labels from the PodMonitor).
TARGET_LABELS = frozenset({"job", "instance", "namespace", "pod", "container", "endpoint", "component"})
_SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("_sum", "_count", "_created", ""),
    "gauge": ("",),
    "info": ("_info",),
    "stateset": ("",),
    "unknown": ("",),
}


@dataclass(frozen=True)
class Family:
    name: str
    type: str
    labels: frozenset[str]

    def series_names(self) -> dict[str, frozenset[str]]:
        """Sample names Prometheus stores for this family, with their label names."""
        out = {}
        for suffix in _SUFFIXES[self.type]:
            out[self.name + suffix] = self.labels | ({"le"} if suffix == "_bucket" else set())
        return out


def _import_everything() -> None:
    for root in PACKAGES:
        package = importlib.import_module(root)
        for module in pkgutil.walk_packages(package.__path__, root + "."):
            # Alembic's env.py runs migrations when imported; __main__ runs the CLI.
            if ".migrations" in module.name or module.name.endswith("__main__"):
                continue
            importlib.import_module(module.name)


@functools.cache
def exported() -> dict[str, Family]:
    """Family name -> Family, for every herald_* metric the code can export."""
    _import_everything()
    families: dict[str, Family] = {}
    for collector in list(REGISTRY._collector_to_names):
        name = getattr(collector, "_name", None)
        if isinstance(name, str) and name.startswith("herald_"):
            families[name] = Family(name, collector._type, frozenset(collector._labelnames))
    # The JetStream collector, with one stream and one consumer so every family has a sample.
    collector = JetStreamCollector(streams=["S_WORK", "S_DLQ"], dead_letter_stream="S_DLQ")
    collector.snapshot = Snapshot(
        up=True,
        last_success=1.0,
        streams=(StreamSample("S_DLQ", 1, 2, 3),),
        consumers=(ConsumerSample("S_WORK", "c", 1, 2, 3, 4, "webhook", "normal", 50),),
        dead_letter_messages=1,
    )
    registry = CollectorRegistry()
    registry.register(collector)
    for family in registry.collect():
        labels: set[str] = set()
        for sample in family.samples:
            labels |= set(sample.labels)
        families[family.name] = Family(family.name, family.type, frozenset(labels))
    return families


@functools.cache
def series() -> dict[str, frozenset[str]]:
    """Series name (as queried in PromQL) -> label names, for everything exported."""
    out: dict[str, frozenset[str]] = {}
    for family in exported().values():
        out.update(family.series_names())
    return out


@functools.cache
def planned() -> dict[str, Family]:
    data: dict[str, Any] = yaml.safe_load((PROMETHEUS / "planned-metrics.yaml").read_text())
    families = {}
    for entry in data["metrics"]:
        family_name = entry["name"].removesuffix("_total") if entry["type"] == "counter" else entry["name"]
        families[family_name] = Family(family_name, entry["type"], frozenset(entry["labels"]))
    return families


@functools.cache
def planned_series() -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for family in planned().values():
        out.update(family.series_names())
    return out


def label_values() -> dict[str, frozenset[str]]:
    """The values the code gives the `channel`, `outcome`, `provider` and `result` labels: from the proto enums,
    the email-sender's provider kinds, the verifier's providers and refusal reasons."""
    from herald_verifier.http import PAYMENT_PROVIDERS, TENANT_PROVIDERS
    from herald_verifier.schemes.common import Reason

    from herald.names import PROVIDER_NAMES
    from herald.telemetry.metrics import WEBHOOK_PROVIDER, label
    from herald.v1 import common_pb2

    def values(enum: Any) -> frozenset[str]:
        return frozenset(label(name) for name in enum.keys() if not name.endswith("_UNSPECIFIED"))

    providers = {*PROVIDER_NAMES.values(), "unknown", WEBHOOK_PROVIDER, *TENANT_PROVIDERS, *PAYMENT_PROVIDERS}
    return {
        "channel": values(common_pb2.Channel),
        "outcome": values(common_pb2.AttemptOutcome),
        "provider": frozenset(providers),
        "result": frozenset({"ok", *(reason.value for reason in Reason)}),
    }


def rules_file() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((PROMETHEUS / "rules.yaml").read_text())
    return loaded


def read(path: Path) -> str:
    return path.read_text()
