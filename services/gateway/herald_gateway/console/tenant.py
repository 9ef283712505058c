"""The tenant console's frame: signed in with an API key that has the `console` scope, checked by
GET /v1/api-keys/current (a key without it is refused there with 403, and so at sign-in)."""

from __future__ import annotations

from herald_gateway.console.base import Console
from herald_gateway.console.client import Answer, ApiClient
from herald_gateway.console.sessions import TENANT


async def check_key(api: ApiClient) -> Answer:
    return await api.get("/v1/api-keys/current")


TENANT_CONSOLE = Console(
    TENANT,
    heading="Herald console",
    credential_label="API key",
    check=check_key,
    nav=[
        ("/console/jobs", "Jobs"),
        ("/console/events", "Events"),
        ("/console/dead-letters", "Dead letters"),
        ("/console/webhooks", "Webhooks"),
        ("/console/secret", "Signing secret"),
        ("/console/email", "Email"),
        ("/console/suppressions", "Suppressions"),
        ("/console/usage", "Usage"),
        ("/console/audit-log", "Audit log"),
    ],
    home="/console/jobs",
)
