"""What each process of a development stack is given, and how its files are kept.

A service that does not need a secret should not hold it: a process that leaks its
environment (a crash dump, a debugging endpoint, a dependency gone bad) then leaks only
what that service could do anyway. So no service holds an operator's token: the ledger is
given the first operator's name and the token's SHA-256 (it makes the operator), and the
master keys only the services that seal or unseal (the ledger seals tenants' secrets; the
senders and the verifier open them); the router and the gateway hold neither a master key
nor a sealed secret's plaintext. The operator's other secrets (alert URLs, the platform email
provider's, the payment providers') go the same way.

The files a stack writes into its data directory (credentials, keys, endpoints.json) are
readable by their owner only: anyone else on the machine who could read them could act as
an operator or read the bus.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from herald.crypto import hash_api_key

FIRST_OPERATOR = "HERALD_FIRST_OPERATOR"
# An operator's own token, for the CLI in its shell: no service is given it.
OPERATOR_TOKEN = "HERALD_OPERATOR_TOKEN"  # noqa: S105 - the variable's name
MASTER_KEYS = "HERALD_MASTER_KEYS"
ALLOW_LOOPBACK = "HERALD_WEBHOOK_ALLOW_LOOPBACK"

SENDERS = frozenset({"webhook-sender", "email-sender"})
# A secret's variable -> the services that need it; every other service goes without (the same
# split as the Kubernetes manifests' Secret references, tests/deploy).
SECRET_HOLDERS: dict[str, frozenset[str]] = {
    FIRST_OPERATOR: frozenset({"ledger"}),
    OPERATOR_TOKEN: frozenset(),
    "HERALD_CONSOLE_SESSION_KEY": frozenset({"gateway"}),
    MASTER_KEYS: frozenset({"ledger", *SENDERS, "verifier"}),
    "HERALD_ALERT_SLACK_URL": SENDERS,
    "HERALD_ALERT_WEBHOOK_URL": SENDERS,
    "HERALD_PLATFORM_EMAIL_API_KEY": frozenset({"email-sender"}),
    "HERALD_PLATFORM_SMTP_PASSWORD": frozenset({"email-sender"}),
    "HERALD_PAYSTACK_SECRET_KEY": frozenset({"verifier"}),
    "HERALD_POLAR_WEBHOOK_SECRET": frozenset({"verifier"}),
}


# The operator `herald up` makes; its token is written to <data dir>/operator_token (0600).
FIRST_OPERATOR_NAME = "admin"


def first_operator(token: str) -> str:
    """`HERALD_FIRST_OPERATOR` for the ledger: the name and the token's SHA-256, never the token."""
    return f"{FIRST_OPERATOR_NAME}:{hash_api_key(token).hex()}"


def service_environment(service: str, env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the secrets `service` has no use for (wherever they came from: the
    stack's own, the caller's shell, a test's overrides)."""
    return {k: v for k, v in env.items() if k not in SECRET_HOLDERS or service in SECRET_HOLDERS[k]}


def allow_loopback(environ: Mapping[str, str] = os.environ) -> str:
    """A development stack delivers to receivers on this machine unless its user said otherwise
    (`HERALD_WEBHOOK_ALLOW_LOOPBACK=false herald up`)."""
    return environ.get(ALLOW_LOOPBACK) or "true"


def loopback_allowed(value: str) -> bool:
    """How the services read the setting (pydantic's booleans), for the banner."""
    return value.strip().lower() in ("1", "true", "yes", "on", "t", "y")


def kept_secret(path: Path, make: Callable[[], str]) -> str:
    """The secret kept in `path`, made by `make` and written there (owner-only) the first time."""
    if not path.exists():
        write_private(path, make())
    return path.read_text().strip()


def write_private(path: Path, text: str) -> None:
    """Writes `text` to a file only its owner can read, never readable by others even for a moment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(text)
    # A file that existed before (an older stack's) keeps its mode through O_CREAT: set it.
    path.chmod(0o600)
