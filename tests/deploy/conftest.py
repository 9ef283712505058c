"""Shared helpers for the deployment tests: where the tools are, the rendered
Kubernetes overlays, and the metric names the code really exports.

The tools come from `make deploy-tools` (part of `make test`): kubectl and the
Python packages in the virtual environment, promtool and prometheus from Debian's
`prometheus` package. A test whose tool is missing fails under CI and is skipped
elsewhere, with the command that installs it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
PROMETHEUS = DEPLOY / "prometheus"
DASHBOARD = DEPLOY / "grafana" / "herald.json"
OVERLAYS = ("dev", "prod")
KUBERNETES_VERSION = "1.30.0"
SERVICES = ("gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier")
HTTP_SERVICES = ("gateway", "verifier")


def tool(name: str) -> str:
    """The path of a tool `make deploy-tools` installs: the virtual environment's copy first."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found:
        return found
    message = f"{name} is not installed: run `make deploy-tools`"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def python_tool(module: str) -> Any:
    """A Python package `make deploy-tools` installs (until it is in the lock)."""
    if importlib.util.find_spec(module) is None:
        message = f"Python package {module!r} is not installed: run `make deploy-tools`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return importlib.import_module(module)


@functools.cache
def render(overlay: str) -> tuple[dict[str, Any], ...]:
    """`kubectl kustomize deploy/k8s/overlays/<overlay>`, parsed."""
    kubectl = tool("kubectl")
    done = subprocess.run(
        [kubectl, "kustomize", str(K8S / "overlays" / overlay)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def by_kind(docs: tuple[dict[str, Any], ...], kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def run(command: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def docs(overlay: str) -> tuple[dict[str, Any], ...]:
    return render(overlay)
