"""`herald up` with no NATS_URL / DATABASE_URL: the stack comes up on an embedded
nats-server and PostgreSQL, the README's example works against it, and Ctrl-C
stops everything it started. What it writes is its owner's alone, each service holds
only the secrets it needs, and the user's own settings win over its defaults."""

from __future__ import annotations

import asyncio
import hashlib
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

import asyncpg
import grpc
import httpx
import nats
import nats.errors
import psutil
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from herald.bus.connection import read_user_file
from herald.cli.stack import SERVICES
from herald.cli.stack_env import FIRST_OPERATOR, MASTER_KEYS, SECRET_HOLDERS
from herald.v1 import router_pb2, router_pb2_grpc
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import subscribe

HERALD = str(Path(sys.executable).parent / "herald")


def start_herald_up(data_dir: Path, **settings: str) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """`herald up` on embedded servers and free ports, with `settings` in its environment; returns
    the process (its output piped) and the endpoints.json it wrote once up."""
    # Every command finds the stack through HERALD_DATA_DIR, no --data-dir needed.
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL", *settings)}
    env |= {"HERALD_DATA_DIR": str(data_dir), **settings}
    up = subprocess.Popen(
        [HERALD, "up", "--http-port", "0", "--grpc-port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    endpoints_file = data_dir / "endpoints.json"
    deadline = time.monotonic() + 120
    while not endpoints_file.exists():
        assert up.poll() is None, up.stdout.read().decode() if up.stdout else ""
        assert time.monotonic() < deadline, "herald up did not come up"
        time.sleep(0.2)
    return up, json.loads(endpoints_file.read_text())


def stop_herald_up(up: subprocess.Popen[bytes]) -> str:
    """Ctrl-C, and what `herald up` printed."""
    up.send_signal(signal.SIGINT)
    output, _ = up.communicate(timeout=90)
    return output.decode(errors="replace")


def test_herald_up_on_embedded_infrastructure(tmp_path: Path, receiver: Receiver) -> None:
    data_dir = tmp_path / "dot-herald"
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL")}
    env["HERALD_DATA_DIR"] = str(data_dir)
    # The caller's own secrets reach only the services that use them too.
    up, endpoints = start_herald_up(data_dir, HERALD_OPERATOR_TOKEN="op-from-the-shell")
    output = ""
    try:
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

        # An internal backend publishes an event as the intake user (docs/operations.md); the
        # router fans it out to the tenant's subscription as it would POST /v1/events.
        subscribe(gateway, TenantKey(tenant["tenant_id"], tenant["api_key"]), receiver.url, ["invoices.paid.v1"])
        event = {"event_type": "invoices.paid.v1", "event_id": "inv-1", "payload": {"invoice": 1}}
        subject = f"herald.intake.events.{tenant['tenant_id']}"
        asyncio.run(publish_as_intake(endpoints["nats_url"], data_dir / "nats-users" / "intake", subject, event))
        deadline = time.monotonic() + 60
        while not [r for r in receiver.requests if r.headers.get("x-herald-event-id") == "inv-1"]:
            assert time.monotonic() < deadline, "the intake event was not delivered"
            time.sleep(0.1)
        # A second `herald up` on the same folder is refused, says which process holds it, and leaves the
        # running stack alone: still ready, still delivering.
        second = subprocess.run(
            [HERALD, "up", "--http-port", "0", "--grpc-port", "0"], env=env, capture_output=True, text=True, timeout=60
        )
        assert second.returncode != 0
        assert "in use by a running Herald stack" in second.stderr and f"pid {up.pid}" in second.stderr, second.stderr
        assert httpx.get(f"{gateway}/readyz", timeout=10).status_code == 200
        again = httpx.post(
            f"{gateway}/v1/webhooks",
            content=request,
            headers={"authorization": f"Bearer {tenant['api_key']}", "content-type": "application/json"},
        ).json()["id"]
        tenant_key = TenantKey(tenant["tenant_id"], tenant["api_key"])
        assert wait_for_status(gateway, tenant_key, again, timeout=60)["status"] == "delivered"
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
        services = {c.cmdline()[-1]: c for c in children if "herald.cli" in " ".join(c.cmdline())}
        assert set(services) == set(SERVICES), "six service processes"
        # Each service holds only the secrets it needs: no service an operator's token (the shell's
        # neither), the ledger the first operator's name and token hash, the master keys the
        # services that seal or unseal.
        for name, process in services.items():
            holds = {variable for variable in SECRET_HOLDERS if variable in process.environ()}
            assert holds <= {v for v, holders in SECRET_HOLDERS.items() if name in holders}, name
            # The two the stack sets itself (and the shell's token) are where they are needed.
            assert holds >= {v for v in (FIRST_OPERATOR, MASTER_KEYS) if name in SECRET_HOLDERS[v]}, name
            assert "HERALD_OPERATOR_TOKEN" not in process.environ(), name
        operator_token = Path(endpoints["operator_token_file"]).read_text().strip()
        digest = hashlib.sha256(operator_token.encode()).hexdigest()
        assert services["ledger"].environ()["HERALD_FIRST_OPERATOR"] == f"admin:{digest}"
        # What the stack wrote is for its owner's eyes only.
        written = ["endpoints.json", "operator_token", "master_keys", "postgres_password"]
        for path in [*(data_dir / w for w in written), *(data_dir / "nats-users").iterdir()]:
            assert path.stat().st_mode & 0o777 == 0o600, path
        # Every service did its part on the bus as its own user, and was refused nothing.
        assert Path(endpoints["nats_credentials_file"]).parent == (data_dir / "nats-users").resolve()
        violations = [
            line for line in (data_dir / "nats" / "nats-server.log").read_text().splitlines() if "Violation" in line
        ]
        assert violations == []
    finally:
        output = stop_herald_up(up)
    assert up.returncode == 0
    assert "Webhooks to this machine (127.0.0.1, localhost) are allowed" in output
    # The banner lists where everything is: the gateway, both consoles, the docs, the token, the logs.
    shown = output
    lines = {line.split("  ")[1].strip(): line for line in shown.splitlines() if line.startswith("  ")}
    assert f"{gateway} (HTTP)" in lines["Gateway"], shown
    assert f"{gateway}/console" in lines["Tenant console"], shown
    assert f"{gateway}/admin/console" in lines["Operator console"], shown
    assert f"{gateway}/docs" in lines["API docs"], shown
    assert str(data_dir.resolve() / "operator_token") in lines["Operator token"], shown
    assert str(data_dir.resolve() / "logs") in lines["Logs"], shown
    _gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"left running after Ctrl-C: {alive}"
    for url in (endpoints["nats_url"], endpoints["database_url"]):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"{url} still listening after Ctrl-C"


def test_herald_up_takes_the_users_loopback_setting(tmp_path: Path, receiver: Receiver) -> None:
    """`HERALD_WEBHOOK_ALLOW_LOOPBACK=false herald up` refuses webhooks to this machine, and says so."""
    up, endpoints = start_herald_up(tmp_path / "stack", HERALD_WEBHOOK_ALLOW_LOOPBACK="false")
    try:
        token = Path(endpoints["operator_token_file"]).read_text().strip()
        tenant = create_tenant(endpoints["gateway_http"], token, "no-loopback")
        refused = httpx.post(
            f"{endpoints['gateway_http']}/v1/webhooks",
            json={"url": receiver.url, "payload": {"hello": "world"}},
            headers=tenant.headers,
            timeout=30,
        )
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        # The embedded database takes no connection without its password.
        assert asyncio.run(refused_without_password(endpoints["database_url"]))
        # Nor does its bus; the operators' credential opens it.
        asyncio.run(bus_refuses_strangers(endpoints["nats_url"], endpoints["nats_credentials_file"]))
        # Nor do the services behind the gateway: a call without a mesh certificate is refused.
        router = next(
            c for c in psutil.Process(up.pid).children(recursive=True) if c.cmdline()[-2:] == ["run", "router"]
        )
        assert mesh_refuses_strangers(f"127.0.0.1:{router.environ()['HERALD_GRPC_PORT']}", tmp_path / "stack" / "mesh")
    finally:
        output = stop_herald_up(up)
    assert "Webhooks to this machine (127.0.0.1, localhost) are refused" in output


async def refused_without_password(database_url: str) -> str:
    """The error PostgreSQL answers a connection to `database_url` without its password."""
    user, rest = database_url.removeprefix("postgresql://").split("@", 1)
    assert ":" in user, "the URL carries the password"
    try:
        await asyncpg.connect(f"postgresql://postgres@{rest}", password="")
    except asyncpg.InvalidPasswordError as error:
        return type(error).__name__
    raise AssertionError("PostgreSQL took a connection without a password")


async def bus_refuses_strangers(nats_url: str, credentials_file: str) -> None:
    with pytest.raises(nats.errors.Error, match=r"(?i)authorization"):
        await nats.connect(nats_url, allow_reconnect=False, connect_timeout=2)
    user, password = read_user_file(credentials_file)
    nc = await nats.connect(nats_url, user=user, password=password, allow_reconnect=False, connect_timeout=2)
    try:
        assert (await nc.jetstream().account_info()).streams >= 3
    finally:
        await nc.close()


def mesh_refuses_strangers(router_address: str, mesh_dir: Path) -> bool:
    """`RouterService.SubmitJobs` (which creates jobs for any tenant it names) without a client
    certificate, plaintext or TLS, is refused; with a certificate of the stack's mesh it is answered."""
    submit = router_pb2.SubmitJobsRequest(submissions=[router_pb2.Submission()])
    ca = (mesh_dir / "ca.crt").read_bytes()
    name = [("grpc.ssl_target_name_override", "herald-router")]
    strangers = [
        grpc.insecure_channel(router_address),
        grpc.secure_channel(router_address, grpc.ssl_channel_credentials(ca), options=name),
    ]
    for channel in strangers:
        with channel, pytest.raises(grpc.RpcError) as refused:
            router_pb2_grpc.RouterServiceStub(channel).SubmitJobs(submit, timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value  # type: ignore[attr-defined]
    member = grpc.ssl_channel_credentials(
        ca,
        private_key=(mesh_dir / "gateway.key").read_bytes(),
        certificate_chain=(mesh_dir / "gateway.crt").read_bytes(),
    )
    with grpc.secure_channel(router_address, member, options=name) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)


async def publish_as_intake(nats_url: str, user_file: Path, subject: str, event: dict[str, Any]) -> None:
    """As an internal backend does: the intake user, its own inbox prefix for JetStream's ack."""
    user, password = read_user_file(user_file)
    nc = await nats.connect(nats_url, user=user, password=password, inbox_prefix=f"_INBOX.{user}")
    try:
        data = json.dumps(event).encode()
        await nc.jetstream().publish(subject, data, headers={"Content-Type": "application/json"}, timeout=10)
    finally:
        await nc.close()


def _status(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """What `herald up` reports running, by name (its status file, which `herald status` prints)."""
    data_dir = Path(env["HERALD_DATA_DIR"])
    return {c["name"]: c for c in json.loads((data_dir / "status.json").read_text())["components"]}


def test_a_sigterm_while_herald_up_starts_stops_what_it_started(tmp_path: Path) -> None:
    """Stopped (SIGTERM, as a supervisor or a script stops it) before it is fully up, `herald up`
    still stops every service and embedded server it has started: none is left running."""
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL")}
    up = subprocess.Popen(
        [HERALD, "up", "--http-port", "0", "--grpc-port", "0"],
        env=env | {"HERALD_DATA_DIR": str(tmp_path / "stack")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not any(_is_service(c) for c in psutil.Process(up.pid).children(recursive=True)):
        assert up.poll() is None and time.monotonic() < deadline, "herald up started no service"
        time.sleep(0.1)
    started = psutil.Process(up.pid).children(recursive=True)
    up.send_signal(signal.SIGTERM)
    up.wait(timeout=120)
    _, alive = psutil.wait_procs(started, timeout=30)
    assert alive == [], [p.cmdline() for p in alive]


def _is_service(process: psutil.Process) -> bool:
    """A service of the stack (`herald run NAME`); a child that just ended (a zombie) is not."""
    try:
        return process.cmdline()[-2:-1] == ["run"]
    except psutil.Error:
        return False
