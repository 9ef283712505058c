"""The six Herald services of one run, from the tree being measured, and its benchmark tenants.

`herald.cli.stack.Stack` comes from whichever tree is first on the path: the work tree's, or in
the REV side's child REV's (see `rev_tree`), so both sides start the same way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from harness.config import log
from harness.herald_code import STACK_FIELDS, StackConfig
from harness.infra import Infra
from harness.switches import Switches
from herald.cli.stack import Stack

# Benchmark tenants get a rate limit the run never reaches, so the limiter runs for every request
# as it does for a real tenant, and unlimited monthly quotas. With REV=, the base commit's
# tenants get the same limit by default; BASE_RATE=unlimited gives them none (as the benchmarks of
# d87b5d9 and before did: then only the work tree pays a limiter, the stricter comparison). A commit
# that refuses the limit gets "unlimited", and the record says which each run had.
BENCH_RATE_PER_MIN = 1_000_000


def start_stack(
    cleanup: contextlib.ExitStack, run_dir: Path, infra: Infra, token: str, env: dict[str, str], variant: str = ""
) -> tuple[Stack, Mapping[str, Any]]:
    """The services on the run's servers and bus prefix, with `env` on top of their defaults,
    stopped with the run; the stack and its endpoints once all are healthy. As `herald up` starts
    them: each connects to the bus as its own user (when the run's NATS has users) and calls the
    others over mutual TLS, unless the side's switches (`variant`) say otherwise or the tree has
    neither."""
    stack_settings: dict[str, Any] = {}
    if "bus_users" in STACK_FIELDS:
        stack_settings["bus_users"] = infra.bus_users
    if "mesh_tls" in STACK_FIELDS:
        stack_settings["mesh_tls"] = Switches.parse(variant).mesh_tls
    stack = Stack(
        StackConfig(
            data_dir=run_dir / "stack",
            nats_url=infra.nats_url,
            database_url=infra.database_url,
            gateway_http_port=0,
            gateway_grpc_port=0,
            bus_prefix=f"bench{token}",
            env={**env, **Switches.parse(variant).service_env()},
            **stack_settings,
        )
    )
    cleanup.callback(stack.stop)
    return stack, stack.start()


def mesh_on(stack: Stack) -> bool:
    """Whether the services call each other over mutual TLS (for the record)."""
    return bool(getattr(stack.config, "mesh_tls", False))


def tenant_rate() -> int | str:
    """The tenants' rate limit: the bench's, or none for a REV side run with BASE_RATE=unlimited."""
    return "unlimited" if os.environ.get("BENCH_TENANT_RATE") == "unlimited" else BENCH_RATE_PER_MIN


def create_tenants(gateway: str, token: str, count: int = 16) -> tuple[list[str], str]:
    """STARTUP tenants; returns their keys and the rate limit they got."""
    keys = []
    rate = tenant_rate()
    with httpx.Client(timeout=30) as client:
        for i in range(count):
            answer = client.post(
                f"{gateway}/admin/v1/tenants",
                json={"name": f"bench-tenant-{i:02d}", "plan": "startup"},
                headers={"authorization": f"Bearer {token}"},
            )
            answer.raise_for_status()
            keys.append(answer.json()["api_key"])
            limits_url = f"{gateway}/admin/v1/tenants/{answer.json()['tenant_id']}/limits"
            quotas = {"webhooks_per_month": "unlimited", "emails_per_month": "unlimited"}
            headers = {"authorization": f"Bearer {token}"}
            limited = client.patch(limits_url, json={"rate_per_min": rate, **quotas}, headers=headers)
            if limited.status_code == 422 and rate != "unlimited":
                log(f"this Herald refuses rate_per_min={rate} ({limited.json().get('detail')}): unlimited instead")
                rate = "unlimited"
                limited = client.patch(limits_url, json={"rate_per_min": rate, **quotas}, headers=headers)
            limited.raise_for_status()
    return keys, str(rate)
