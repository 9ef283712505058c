"""deploy/k8s/nats-auth-values.yaml as the NATS chart turns it into nats.conf (`config.merge` as
JSON, `<< $VAR >>` written raw: a reference to the container's environment, filled from the
Secret): a real nats-server takes the configuration, each user logs in with the password from
its variable and is held to its permissions."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import nats
import pytest
import yaml
from nats.errors import Error as NatsError

from herald.cli.embedded import EmbeddedNats
from tests.deploy.conftest import K8S


def as_the_chart_writes_it(values: dict[str, object], path: Path) -> Path:
    merge = values["config"]["merge"]  # type: ignore[index]
    text = re.sub(r'"<< (\$[A-Z_]+) >>"', r"\1", json.dumps(merge["authorization"], indent=1))
    path.write_text(f"authorization: {text}\n")
    return path


async def test_the_kubernetes_users_log_in_with_their_secret_and_keep_to_their_subjects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = yaml.safe_load((K8S / "nats-auth-values.yaml").read_text())
    # What the chart's container.env fills from the Secret herald-nats-users.
    passwords = {variable: f"secret-{variable.lower()}" for variable in values["container"]["env"]}
    for variable, password in passwords.items():
        monkeypatch.setenv(variable, password)
    admin = tmp_path / "admin"
    admin.write_text(f"admin:{passwords['HERALD_NATS_PASSWORD_ADMIN']}")
    server = EmbeddedNats(tmp_path, config_file=as_the_chart_writes_it(values, tmp_path / "nats.conf"), user_file=admin)
    url = server.start()
    try:
        refusals: list[str] = []

        async def refused(error: Exception) -> None:
            refusals.append(str(error))

        gateway = await nats.connect(
            url,
            user="gateway",
            password=passwords["HERALD_NATS_PASSWORD_GATEWAY"],
            inbox_prefix="_INBOX.gateway",
            error_cb=refused,
        )
        await gateway.subscribe("herald.work.>")
        await gateway.flush()
        # The server's refusal comes back on its own, after the flush's pong on a busy machine.
        for _ in range(100):
            if refusals:
                break
            await asyncio.sleep(0.05)
        await gateway.close()
        assert any("herald.work.>" in r for r in refusals), refusals
        with pytest.raises(NatsError):
            await nats.connect(url, user="gateway", password="secret-guessed", allow_reconnect=False)
    finally:
        server.stop()
