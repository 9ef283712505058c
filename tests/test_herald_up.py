"""`herald up` with no NATS_URL / DATABASE_URL: the stack comes up on an embedded
nats-server and PostgreSQL, the README's example works against it, and Ctrl-C
stops everything it started."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from herald.cli.stack import SERVICES
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver

HERALD = str(Path(sys.executable).parent / "herald")


def test_herald_up_on_embedded_infrastructure(tmp_path: Path, receiver: Receiver) -> None:
    data_dir = tmp_path / "dot-herald"
    # Every command finds the stack through HERALD_DATA_DIR, no --data-dir needed.
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL")}
    env["HERALD_DATA_DIR"] = str(data_dir)
    up = subprocess.Popen(
        [HERALD, "up", "--http-port", "0", "--grpc-port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        endpoints_file = data_dir / "endpoints.json"
        deadline = time.monotonic() + 120
        while not endpoints_file.exists():
            assert up.poll() is None, up.stdout.read().decode() if up.stdout else ""
            assert time.monotonic() < deadline, "herald up did not come up"
            time.sleep(0.2)
        endpoints = json.loads(endpoints_file.read_text())
        assert set(endpoints) >= {"gateway_http", "gateway_grpc", "verifier_http", "nats_url", "database_url"}
        assert ":4222" not in endpoints["nats_url"] and ":5432/" not in endpoints["database_url"]
        # metrics: service -> its /metrics URL, each one answering.
        assert set(endpoints["metrics"]) == set(SERVICES)
        for url in endpoints["metrics"].values():
            assert "herald_" in httpx.get(url, timeout=10).text, url

        created = subprocess.run(
            [HERALD, "tenant", "create", "demo", "--plan", "startup", "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        tenant = json.loads(created.stdout)
        assert set(tenant) == {"tenant_id", "api_key"}
        # No DATABASE_URL: `herald migrate` finds the stack's embedded database through the data directory.
        migrated = subprocess.run([HERALD, "migrate"], env=env, capture_output=True, text=True, timeout=120)
        assert migrated.returncode == 0 and "schema is current" in migrated.stdout, migrated.stderr

        # The README's example, as written there.
        gateway = endpoints["gateway_http"]
        curl = shutil.which("curl")
        request = json.dumps({"url": receiver.url, "payload": {"hello": "world"}})
        if curl:
            sent = subprocess.run(
                [curl, "-sS", "-X", "POST", f"{gateway}/v1/webhooks",
                 "-H", f"Authorization: Bearer {tenant['api_key']}",
                 "-H", "Content-Type: application/json", "-d", request],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            job_id = json.loads(sent.stdout)["id"]
        else:
            job_id = httpx.post(
                f"{gateway}/v1/webhooks", content=request, headers={"authorization": f"Bearer {tenant['api_key']}"}
            ).json()["id"]
        job = wait_for_status(gateway, TenantKey(tenant["tenant_id"], tenant["api_key"]), job_id, timeout=60)
        assert job["status"] == "delivered"
        assert [r.body for r in receiver.for_job(job_id)] == [b'{"hello":"world"}']

        # `herald up` supervises what it started: a SIGKILLed nats-server, PostgreSQL and service come
        # back (on the same ports: the services reconnect), `herald status` says so, and work flows.
        before = _status(env)
        killed = ("nats-server", "postgresql", "webhook-sender")
        for name in killed:
            os.kill(before[name]["pid"], signal.SIGKILL)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            after = _status(env)
            if all(after[n]["running"] and after[n]["restarts"] == 1 for n in killed):
                break
            time.sleep(0.5)
        for name in killed:
            restarted = after[name]["restarts"] == 1 and after[name]["pid"] != before[name]["pid"]
            assert restarted, (name, after[name], (data_dir / "postgres" / "server.log").read_text()[-3000:])
        assert after["gateway"]["restarts"] == 0
        shown = subprocess.run([HERALD, "status"], env=env, capture_output=True, text=True, check=True).stdout
        assert "nats-server" in shown and "restarted 1 time" in shown and "postgresql" in shown, shown
        again = httpx.post(
            f"{gateway}/v1/webhooks",
            json={"url": receiver.url, "payload": {"after": "restarts"}},
            headers={"authorization": f"Bearer {tenant['api_key']}"},
            timeout=30,
        )
        assert again.status_code == 202, again.text
        job = wait_for_status(
            gateway, TenantKey(tenant["tenant_id"], tenant["api_key"]), again.json()["id"], timeout=90
        )
        assert job["status"] == "delivered"

        children = psutil.Process(up.pid).children(recursive=True)
        assert sum("herald.cli" in " ".join(c.cmdline()) for c in children) == 6, "six service processes"
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=90)
    assert up.returncode == 0
    _gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"left running after Ctrl-C: {alive}"
    for url in (endpoints["nats_url"], endpoints["database_url"]):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"{url} still listening after Ctrl-C"


def _status(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """What `herald up` reports running, by name (its status file, which `herald status` prints)."""
    data_dir = Path(env["HERALD_DATA_DIR"])
    return {c["name"]: c for c in json.loads((data_dir / "status.json").read_text())["components"]}
