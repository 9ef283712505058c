"""GET /healthz and /readyz on every HTTP service (the gateway, the verifier): 200 while the
dependencies answer, 503 problem+json naming the one that stopped answering (a real service
process, frozen with SIGSTOP so the supervisor does not replace it), 200 again once it answers."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from herald.cli.stack import Stack
from tests.support.api import openapi_document


def _get(url: str) -> httpx.Response:
    return httpx.get(url, timeout=10)


def _until(url: str, status: int, timeout: float = 60) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        response = _get(url)
        if response.status_code == status or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


@contextmanager
def frozen(stack: Stack, name: str) -> Iterator[None]:
    """The service's process stops answering (it is still there, so nothing restarts it)."""
    process = stack.services[name].process
    assert process is not None and process.poll() is None
    process.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        process.send_signal(signal.SIGCONT)


def _problem(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"] == "application/problem+json", response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == response.status_code and body["type"].endswith("/not-ready")
    return body


def test_every_http_service_is_alive_and_ready(stack: Stack) -> None:
    for service, dependencies in (("gateway", {"router", "ledger", "bus"}), ("verifier", {"ledger", "bus"})):
        base = stack.endpoints[f"{service}_http"]
        alive = _get(f"{base}/healthz")
        assert (alive.status_code, alive.json()) == (200, {"status": "ok"}), service
        ready = _until(f"{base}/readyz", 200)
        assert ready.status_code == 200, ready.text
        assert ready.json() == {"status": "ready", "checks": dict.fromkeys(dependencies, "ok")}, service
        refused = httpx.post(f"{base}/readyz", timeout=10)
        assert refused.status_code == 405 and refused.headers["content-type"] == "application/problem+json"


def test_health_routes_are_in_the_openapi_document(gateway: str) -> None:
    paths = openapi_document(gateway)["paths"]
    assert set(paths["/healthz"]) == {"get"} and paths["/healthz"]["get"]["security"] == []
    assert set(paths["/readyz"]["get"]["responses"]) == {"200", "503"}


def test_readiness_names_the_dependency_that_stopped_answering(stack: Stack) -> None:
    gateway, verifier = stack.endpoints["gateway_http"], stack.endpoints["verifier_http"]
    with frozen(stack, "router"):
        down = _until(f"{gateway}/readyz", 503)
        assert down.status_code == 503, down.text
        body = _problem(down)
        assert body["failing"] == ["router"], body
        assert body["checks"]["ledger"] == "ok" and body["checks"]["bus"] == "ok"
        assert "router" in body["detail"]
        # Alive is not ready: the liveness route does not look at dependencies.
        assert _get(f"{gateway}/healthz").status_code == 200
        assert _get(f"{verifier}/readyz").status_code == 200  # the verifier does not call the router
    assert _until(f"{gateway}/readyz", 200).status_code == 200

    with frozen(stack, "ledger"):
        for base in (gateway, verifier):
            down = _until(f"{base}/readyz", 503)
            assert down.status_code == 503, down.text
            assert _problem(down)["failing"] == ["ledger"], down.text
    for base in (gateway, verifier):
        assert _until(f"{base}/readyz", 200).status_code == 200
