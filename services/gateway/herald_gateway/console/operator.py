"""The operator console's frame: signed in with a named operator's token, checked by
GET /admin/v1/tenants (a tenant's API key is refused there, as on the API)."""

from __future__ import annotations

from herald_gateway.console.base import Console
from herald_gateway.console.client import Answer, ApiClient
from herald_gateway.console.sessions import OPERATOR


async def check_token(api: ApiClient) -> Answer:
    return await api.get("/admin/v1/tenants", {"limit": "1"})


OPERATOR_CONSOLE = Console(
    OPERATOR,
    heading="Herald operator console",
    credential_label="Operator token",
    check=check_token,
    nav=[
        ("/admin/console/tenants", "Tenants"),
        ("/admin/console/dead-letters", "Dead letters"),
        ("/admin/console/platform-emails", "Platform email log"),
        ("/admin/console/system", "Circuits and streams"),
        ("/admin/console/audit-log", "Audit log"),
    ],
    home="/admin/console/tenants",
)
