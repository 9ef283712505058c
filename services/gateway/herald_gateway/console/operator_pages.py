"""Operator console: tenants and plans, dead letters across tenants with redrive (one,
many, all since a time), and the platform email log, through /admin/v1."""

from __future__ import annotations

import base64
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Visit, act, page_at
from herald_gateway.console.forms import utc_time
from herald_gateway.console.layout import (
    badge,
    choice,
    field,
    folded_form,
    form,
    keep_input,
    secret_once,
    section,
    stamp,
    submit,
    table,
)
from herald_gateway.console.markup import join, tag
from herald_gateway.console.operator import OPERATOR_CONSOLE as CONSOLE
from herald_gateway.console.rows import more_link, value_form

router = APIRouter(include_in_schema=False)

PLANS = [("free", "free"), ("indie", "indie"), ("startup", "startup")]


@page_at("/admin/console/tenants")
async def show_tenants(
    visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200, created: Any = None
) -> Response:
    answer = await CONSOLE.fetch_page(visit, "Tenants", "/admin/v1/tenants", {"limit": "200"})
    csrf = visit.session.csrf
    rows = [
        [
            tag("a", tag("span", t["id"], class_="mono"), href=f"/admin/console/tenants/{t['id']}"),
            tag("a", t["name"], href=f"/admin/console/tenants/{t['id']}"),
            form(
                f"/admin/console/tenants/{t['id']}/plan",
                csrf,
                choice("Plan", "plan", PLANS, t["plan"], id_prefix=f"t-{t['id']}-"),
                submit("Save", class_="small"),
                class_="inline",
            ),
            badge("disabled" if t["disabled"] else "enabled"),
            tag("span", ", ".join(f"{k}={v}" for k, v in (t.get("limits") or {}).items()) or "plan", class_="mono"),
            stamp(t.get("created_at")),
        ]
        for t in answer.body["data"]
    ]
    once = (
        section(
            "New tenant's API key",
            tag("p", "Give it to the tenant now: it is shown once and only its SHA-256 is kept."),
            secret_once(created["api_key"], "new-api-key"),
        )
        if created
        else None
    )
    body = [
        once,
        folded_form(
            "New tenant",
            "/admin/console/tenants",
            csrf,
            field("Name", "name", required=True),
            choice("Plan", "plan", PLANS, "free"),
            field("Contact email", "contact_email", type="email"),
            tag(
                "div",
                tag("input", type="checkbox", id="allow-duplicate", name="allow_duplicate", value="1"),
                tag("label", "Create it even if another tenant has this name", for_="allow-duplicate"),
                class_="field",
            ),
            submit("Create tenant"),
        ),
        table("Tenants", ["Tenant", "Name", "Plan", "State", "Limit overrides", "Created"], rows),
        more_link(answer.body, "/admin/console/tenants"),
    ]
    return CONSOLE.show(visit, "Tenants", body, notice=notice, error=error, status=status)


async def create_tenant(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    body = {
        "name": visit.value("name"),
        "plan": visit.value("plan"),
        "contact_email": visit.value("contact_email") or None,
        "allow_duplicate_name": bool(visit.value("allow_duplicate")),
    }
    if not visit.value("allow_duplicate"):
        same = await named(visit, str(body["name"]))
        if same:
            error = (
                f"A tenant named {body['name']!r} exists already ({same}): choose another name, or tick "
                '"Create it even if another tenant has this name".'
            )
            return await show_tenants(visit, error=error, status=409)
    async with visit.api() as api:
        answer = await api.call("POST", "/admin/v1/tenants", json=body)
    if not answer.ok:
        return await show_tenants(visit, error=answer.problem, status=answer.status)
    keep_input("", {})  # created: the form comes back empty (this answer shows the key, so no redirect)
    return await show_tenants(visit, notice=f"Tenant {answer.body['tenant_id']} created.", created=answer.body)


async def named(visit: Visit, name: str) -> str | None:
    """The id of a tenant with this name, if any (names are for people: two alike confuse them)."""
    cursor = ""
    async with visit.api() as api:
        while True:
            page = await api.get("/admin/v1/tenants", {"limit": "200", "cursor": cursor})
            if not page.ok:
                return None
            found = next((t["id"] for t in page.body["data"] if t["name"] == name), None)
            cursor = page.body.get("next_cursor") or ""
            if found or not cursor:
                return found


async def set_plan(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    path = f"/admin/v1/tenants/{request.path_params['item_id']}"
    body = {"plan": visit.value("plan")}
    return await act(visit, show_tenants, "PATCH", path, lambda t: f"{t['name']} is on the {t['plan']} plan.", body)


@page_at("/admin/console/dead-letters")
async def show_dead_letters(
    visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200
) -> Response:
    params = {
        "tenant_id": visit.value("tenant_id"),
        "since": utc_time(visit.value("since")),
        "include_retried": "true" if visit.value("include_retried") else "",
        "limit": "200",
    }
    answer = await CONSOLE.fetch_page(visit, "Dead letters", "/admin/v1/dead-letters", params)
    csrf = visit.session.csrf
    rows = [
        [
            tag(
                "input",
                type="checkbox",
                name="job_ids",
                value=d["job_id"],
                form="redrive-many",
                aria_label=f"Select {d['job_id']}",
            ),
            tag("a", d["job_id"], href=f"/admin/console/dead-letters/{d['job_id']}", class_="mono"),
            tag("span", d["tenant_id"], class_="mono"),
            d["channel"],
            tag("span", d["error"], class_="wrap"),
            d["attempts"],
            stamp(d.get("dead_lettered_at")),
            stamp(d.get("retried_at")) if d.get("retried_at") else "waiting",
            value_form("/admin/console/dead-letters/redrive", csrf, "job_ids", d["job_id"], "Redrive", class_="small"),
        ]
        for d in answer.body["data"]
    ]
    search = tag(
        "form",
        field("Tenant id", "tenant_id", visit.value("tenant_id")),
        field("Dead-lettered since (UTC)", "since", visit.value("since"), type="datetime-local"),
        tag(
            "div",
            tag("label", "Include retried", for_="include_retried"),
            tag(
                "input",
                type="checkbox",
                id="include_retried",
                name="include_retried",
                value="1",
                checked=bool(visit.value("include_retried")),
            ),
            class_="field",
        ),
        submit("Search"),
        method="get",
        action="/admin/console/dead-letters",
        class_="filters",
        role="search",
    )
    body = [
        search,
        form(
            "/admin/console/dead-letters/redrive",
            csrf,
            submit("Redrive selected"),
            id="redrive-many",
        ),
        table(
            "Dead letters", ["", "Job", "Tenant", "Channel", "Error", "Attempts", "Dead-lettered", "Retried", ""], rows
        ),
        section(
            "Redrive everything waiting",
            form(
                "/admin/console/dead-letters/redrive",
                csrf,
                tag("input", type="hidden", name="all", value="1"),
                field("Dead-lettered since (UTC, empty: all)", "since", type="datetime-local", id_prefix="all-"),
                submit("Redrive all", class_="danger"),
                class_="stack",
                data_confirm="Run every waiting dead letter again?",
            ),
        ),
    ]
    return CONSOLE.show(visit, "Dead letters", body, notice=notice, error=error, status=status)


async def redrive(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    body: dict[str, Any] = {"job_ids": visit.values("job_ids"), "all": bool(visit.value("all"))}
    if visit.value("since") and body["all"]:
        body["since"] = utc_time(visit.value("since"))
    if not body["job_ids"] and not body["all"]:
        return await show_dead_letters(visit, error="Select at least one dead letter.", status=422)
    async with visit.api() as api:
        answer = await api.call("POST", "/admin/v1/dead-letters/retry", json=body)
    if not answer.ok:
        return await show_dead_letters(visit, error=answer.problem, status=answer.status)
    outcomes = answer.body["data"]
    retried = sum(1 for o in outcomes if o["retried"])
    refused = [f"{o['job_id']}: {o.get('detail') or 'not retried'}" for o in outcomes if not o["retried"]]
    notice = f"Redriven: {retried} of {len(outcomes)}." + (" " + "; ".join(refused) if refused else "")
    return await show_dead_letters(visit, notice=notice)


async def dead_letter_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    job_id, entry = await CONSOLE.fetch_item(visit, "Dead letter", "/admin/v1/dead-letters/{}")
    facts = [
        ("Tenant", entry["tenant_id"]),
        ("Channel", entry["channel"]),
        ("Error", entry["error"]),
        ("Attempts", entry["attempts"]),
        ("Dead-lettered", stamp(entry.get("dead_lettered_at"))),
        ("Job status", badge(entry["job"]["status"])),
        ("Work subject", entry.get("work_subject") or "—"),
    ]
    message = entry.get("payload")
    payload = orjson.dumps(message, option=orjson.OPT_INDENT_2).decode() if message else "(not readable)"

    body = [
        tag("dl", [join([tag("dt", k), tag("dd", v)]) for k, v in facts], class_="facts"),
        form(
            "/admin/console/dead-letters/redrive",
            visit.session.csrf,
            tag("input", type="hidden", name="job_ids", value=job_id),
            submit("Redrive"),
        ),
        section("Body", tag("pre", webhook_body(message), class_="excerpt", id="work-body")),
        section("Work message as queued", tag("pre", payload, class_="excerpt", id="work-payload")),
        tag("a", "Back to dead letters", href="/admin/console/dead-letters"),
    ]
    return CONSOLE.show(visit, f"Dead letter {job_id}", body)


def webhook_body(message: Any) -> str:
    """A webhook's body as text (the work message carries it base64-encoded, as protobuf JSON does)."""
    request = message.get("request") if isinstance(message, dict) else None
    encoded = request.get("body") if isinstance(request, dict) else None
    if not encoded:
        return "(none inline: an email, or a large body kept in the object store)"
    try:
        return base64.b64decode(encoded).decode("utf-8", errors="replace")
    except ValueError:
        return "(not decodable)"


async def platform_emails_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    answer = await CONSOLE.fetch_page(
        visit,
        "Platform email log",
        "/admin/v1/platform-emails",
        {"tenant_id": visit.value("tenant_id"), "limit": "200"},
    )
    rows = [
        [
            stamp(e.get("created_at")),
            e["kind"],
            tag("span", e["recipient"], class_="mono wrap"),
            e["subject"],
            badge(e["status"]),
            e["attempts"],
            tag("span", e["tenant_id"], class_="mono"),
            e.get("error") or "",
        ]
        for e in answer.body["data"]
    ]
    body = [
        tag("p", "Herald's own mail: quota warnings, dead-letter alerts, key-created notices."),
        table(
            "Platform emails",
            ["Created", "Kind", "Recipient", "Subject", "Status", "Attempts", "Tenant", "Error"],
            rows,
        ),
        more_link(answer.body, "/admin/console/platform-emails"),
    ]
    return CONSOLE.show(visit, "Platform email log", body)


async def system_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    async with visit.api() as api:
        circuits = await api.get("/admin/v1/circuits")
        streams = await api.get("/admin/v1/streams")
    circuit_part = (
        table(
            "Open circuits",
            ["Tenant", "Provider", "Kind", "State"],
            [
                [
                    tag("span", c["tenant_id"], class_="mono"),
                    tag("span", c["provider_id"], class_="mono"),
                    c["provider"],
                    badge(c["state"]),
                ]
                for c in circuits.body["data"]
            ],
            id="circuits",
        )
        if circuits.ok
        else tag("p", circuits.problem, role="alert", class_="error")
    )
    stream_part = (
        table(
            "Streams",
            [
                "Stream",
                "Depth (messages)",
                "Bytes",
                "Consumers",
                "Lag: not delivered",
                "Not acknowledged",
                "Redelivered",
                "Oldest held",
            ],
            [
                [
                    tag("span", st["name"], class_="mono"),
                    st["messages"],
                    st["bytes"],
                    st["consumers"],
                    st["pending"],
                    st["ack_pending"],
                    st["redelivered"],
                    stamp(st.get("oldest_at")),
                ]
                for st in streams.body["data"]
            ],
            id="streams",
        )
        if streams.ok
        else tag("p", streams.problem, role="alert", class_="error")
    )
    body = [
        section(
            "Provider circuits",
            tag(
                "p",
                "Open breakers skip a tenant's provider until a probe succeeds. Each email-sender replica "
                "has its own; this is the one that answered.",
            ),
            circuit_part,
        ),
        section(
            "Streams",
            tag("p", "Depth is what a stream holds; lag is what its consumers have not finished."),
            stream_part,
        ),
    ]
    return CONSOLE.show(visit, "Circuits and streams", body)


PAGES = (
    ("/admin/console/tenants", CONSOLE.page_of(show_tenants), "GET"),
    ("/admin/console/tenants", create_tenant, "POST"),
    ("/admin/console/tenants/{item_id}/plan", set_plan, "POST"),
    ("/admin/console/dead-letters", CONSOLE.page_of(show_dead_letters), "GET"),
    ("/admin/console/dead-letters/redrive", redrive, "POST"),
    ("/admin/console/dead-letters/{item_id}", dead_letter_page, "GET"),
    ("/admin/console/platform-emails", platform_emails_page, "GET"),
    ("/admin/console/system", system_page, "GET"),
)
CONSOLE.add_pages(router, PAGES)
