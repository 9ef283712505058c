"""Operator console: one tenant's page (its plan, state, limits, usage and API keys) and the
button that disables or enables it. A disabled tenant's keys are refused with a message that
says so; nothing of its data is removed, so enabling it again restores it as it was."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Visit, act, page_at
from herald_gateway.console.layout import badge, section, stamp, table
from herald_gateway.console.markup import join, tag
from herald_gateway.console.operator import OPERATOR_CONSOLE as CONSOLE
from herald_gateway.console.rows import value_form

router = APIRouter(include_in_schema=False)


def state_form(tenant: dict[str, Any], csrf: str) -> Any:
    """Disable an enabled tenant, enable a disabled one: one button, the state it leads to."""
    enable = bool(tenant["disabled"])
    label, value = ("Enable tenant", "false") if enable else ("Disable tenant", "true")
    return value_form(f"/admin/console/tenants/{tenant['id']}/state", csrf, "disabled", value, label, class_="small")


@page_at("/admin/console/tenants/{item_id}")
async def show_tenant(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    tenant_id, tenant = await CONSOLE.fetch_item(visit, "Tenant", "/admin/v1/tenants/{}")
    usage = (await CONSOLE.fetch(visit, "Tenant", f"/admin/v1/tenants/{tenant_id}/usage")).body
    keys = (await CONSOLE.fetch(visit, "Tenant", f"/admin/v1/tenants/{tenant_id}/api-keys")).body["data"]
    limits = tenant.get("limits") or {}
    facts = [
        ("Tenant", tag("span", tenant["id"], class_="mono")),
        ("Name", tenant["name"]),
        ("Plan", tenant["plan"]),
        (
            "State",
            join([badge("disabled" if tenant["disabled"] else "enabled"), " ", state_form(tenant, visit.session.csrf)]),
        ),
        ("Limit overrides", ", ".join(f"{k}={v}" for k, v in limits.items()) or "none: the plan's"),
        ("Contact email", tenant.get("contact_email") or "—"),
        ("Created", stamp(tenant.get("created_at"))),
        ("Usage this month", f"{usage['webhooks']} webhooks, {usage['emails']} emails ({usage['period']})"),
    ]
    body = [
        tag("dl", [join([tag("dt", k), tag("dd", v)]) for k, v in facts], class_="facts"),
        section(
            "API keys",
            table(
                "API keys",
                ["Name", "Key", "Created", "Last used", "Revoked"],
                [
                    [
                        k["name"],
                        tag("span", f"hk_…{k['public_id']}…", class_="mono"),
                        stamp(k.get("created_at")),
                        stamp(k.get("last_used_at")),
                        stamp(k.get("revoked_at")),
                    ]
                    for k in keys
                ],
            ),
        ),
        tag("p", tag("a", "All tenants", href="/admin/console/tenants")),
    ]
    return CONSOLE.show(visit, f"Tenant {tenant['name']}", body, notice=notice, error=error, status=status)


async def set_state(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    disabled = visit.value("disabled") == "true"
    path = f"/admin/v1/tenants/{request.path_params['item_id']}"

    def done(tenant: dict[str, Any]) -> str:
        if tenant["disabled"]:
            return f"{tenant['name']} is disabled: its API keys are refused until it is enabled again."
        return f"{tenant['name']} is enabled again."

    return await act(visit, show_tenant, "PATCH", path, done, {"disabled": disabled})


PAGES = (
    ("/admin/console/tenants/{item_id}", CONSOLE.page_of(show_tenant), "GET"),
    ("/admin/console/tenants/{item_id}/state", set_state, "POST"),
)
CONSOLE.add_pages(router, PAGES)
