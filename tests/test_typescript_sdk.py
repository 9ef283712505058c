"""The TypeScript SDK (clients/typescript) against a live stack, run by Node through tsx: its
script (test/live.ts) sends a webhook and reads it delivered, verifies the delivery's signatures
both ways, creates a target, a filter and a subscription, publishes an event and verifies its
delivery with the target's own secret (not the tenant's), rotates it and pings the target, and checks
refusals, idempotency keys and retries. Also: it typechecks, and its types are what
openapi-typescript makes of clients/openapi.json (the document tests/test_python_sdk.py holds to
the gateway's). `make test` installs its packages first (clients/typescript/typescript.mk)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.api import TenantKey

PACKAGE = Path(__file__).resolve().parents[1] / "clients" / "typescript"
BIN = PACKAGE / "node_modules" / ".bin"


def _run(*command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert BIN.is_dir(), "clients/typescript/node_modules is missing: `make clients-typescript` installs it"
    return subprocess.run(command, cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=300)


def test_the_typescript_sdk_against_a_live_stack(gateway: str, tenant: TenantKey) -> None:
    done = _run(str(BIN / "tsx"), "test/live.ts", env={**os.environ, "GATEWAY": gateway, "API_KEY": tenant.api_key})
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["ok"] and seen["webhook"] and seen["event"] and seen["retried"] == 3


def test_it_typechecks() -> None:
    done = _run(str(BIN / "tsc"), "--noEmit")
    assert done.returncode == 0, done.stdout + done.stderr


def test_its_types_are_generated_from_the_document(tmp_path: Path) -> None:
    made = tmp_path / "schema.ts"
    done = _run(str(BIN / "openapi-typescript"), "../openapi.json", "--default-non-nullable", "false", "-o", str(made))
    assert done.returncode == 0, done.stderr
    assert made.read_text() == (PACKAGE / "src" / "schema.ts").read_text(), (
        "clients/typescript/src/schema.ts is not what clients/openapi.json makes: `npm run generate` there"
    )
