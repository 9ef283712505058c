"""The audit log in both consoles: a tenant's own changes (/console/audit-log, from
GET /v1/audit-log) and every change (/admin/console/audit-log, GET /admin/v1/audit-log)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Console
from herald_gateway.console.layout import stamp, table
from herald_gateway.console.markup import Html, tag
from herald_gateway.console.operator import OPERATOR_CONSOLE
from herald_gateway.console.rows import more_link
from herald_gateway.console.tenant import TENANT_CONSOLE

router = APIRouter(include_in_schema=False)
HEADINGS = ("When", "Who", "What", "Resource", "Changes", "From")


def _row(entry: dict[str, Any]) -> list[Html | str]:
    actor = entry["actor"]
    return [
        stamp(entry.get("at")),
        f"{actor['kind']} {actor['name']}",
        tag("code", entry["action"]),
        entry["resource_id"],
        tag("code", json.dumps(entry["changes"], sort_keys=True)),
        entry["address"],
    ]


def audit_page(console: Console, api_path: str) -> Any:
    async def page(request: Request) -> Response:
        visit = await console.visit(request)
        listing = (await console.fetch_page(visit, "Audit log", api_path, {})).body
        body = [
            table("Changes", HEADINGS, [_row(e) for e in listing["data"]], id="audit-log"),
            more_link(listing, request.url.path),
        ]
        return console.show(visit, "Audit log", body)

    return page


TENANT_CONSOLE.add_pages(router, [("/console/audit-log", audit_page(TENANT_CONSOLE, "/v1/audit-log"), "GET")])
OPERATOR_CONSOLE.add_pages(
    router, [("/admin/console/audit-log", audit_page(OPERATOR_CONSOLE, "/admin/v1/audit-log"), "GET")]
)
