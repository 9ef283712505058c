"""Tenant console: the signing secret (generate, rotate, delete; the value shown once, on
the answer to the POST and nowhere else), email providers and sending domains, the
suppression list, and usage against quota and rate limit."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Visit, act, page_at
from herald_gateway.console.layout import (
    badge,
    choice,
    field,
    folded_form,
    form,
    secret_once,
    section,
    stamp,
    submit,
    table,
)
from herald_gateway.console.markup import Child, Html, join, tag
from herald_gateway.console.rows import more_link, value_form
from herald_gateway.console.tenant import TENANT_CONSOLE as CONSOLE

router = APIRouter(include_in_schema=False)


async def show_secret(
    visit: Visit, shown: str | None = None, notice: str | None = None, error: str | None = None, status: int = 200
) -> Response:
    answer = await CONSOLE.fetch(visit, "Signing secret", "/v1/webhook-secret")
    state = answer.body
    csrf = visit.session.csrf
    facts = [
        ("Status", badge("enabled" if state["exists"] else "disabled")),
        ("Created", stamp(state.get("created_at"))),
        ("Rotated", stamp(state.get("rotated_at"))),
        ("Previous secret signs until", stamp(state.get("previous_expires_at"))),
    ]
    once: Child = None
    if shown:
        once = section(
            "Your new secret",
            tag("p", "Copy it now: it is shown once and cannot be shown again."),
            secret_once(shown, "new-secret"),
        )
    actions = (
        [
            form("/console/secret/rotate", csrf, submit("Rotate secret"), class_="inline"),
            form(
                "/console/secret/delete",
                csrf,
                submit("Delete secret", class_="danger"),
                class_="inline",
                data_confirm="Webhooks then go out unsigned. Delete the secret?",
            ),
        ]
        if state["exists"]
        else [form("/console/secret/generate", csrf, submit("Generate secret"), class_="inline")]
    )
    body = [
        tag(
            "p",
            "With a secret, every delivery carries X-Webhook-Timestamp and X-Webhook-Signature "
            "(hex HMAC-SHA256 over timestamp.payload). Rotation keeps the previous secret signing for 24 hours.",
        ),
        once,
        tag("dl", [join([tag("dt", k), tag("dd", v)]) for k, v in facts], class_="facts", id="secret-status"),
        tag("div", actions, class_="actions"),
    ]
    return CONSOLE.show(visit, "Signing secret", body, notice=notice, error=error, status=status)


def secret_action(method: str, path: str, done: str) -> Any:
    async def act(request: Request) -> Response:
        visit = await CONSOLE.visit(request)
        async with visit.api() as api:
            answer = await api.call(method, path)
        if not answer.ok:
            return await show_secret(visit, error=answer.problem, status=answer.status)
        shown = answer.body.get("secret") if isinstance(answer.body, dict) else None
        return await show_secret(visit, shown=shown, notice=done)

    act.__name__ = f"secret_{done.split()[1].lower()}"
    return act


async def email_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    return await show_email(visit)


@page_at("/console/email")
async def show_email(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    async with visit.api() as api:
        providers = await api.get("/v1/providers")
        domains = await api.get("/v1/domains")
    problem = next((a.problem for a in (providers, domains) if not a.ok), None)
    if problem:
        return CONSOLE.show(visit, "Email", "", error=problem, status=502)
    csrf = visit.session.csrf
    provider_rows = [
        [
            str(order),
            p["provider"],
            tag("span", p.get("masked_secret") or "—", class_="mono"),
            tag("span", p.get("base_url") or "default", class_="mono wrap"),
            tag("span", p["secret_error"], class_="error") if p.get("secret_error") else "ok",
            form(
                f"/console/providers/{p['id']}/priority",
                csrf,
                field("Priority", "priority", str(p["priority"]), type="number", min="0", id_prefix=f"p-{p['id']}-"),
                submit("Save", class_="small"),
                class_="inline",
            ),
            form(
                f"/console/providers/{p['id']}/delete",
                csrf,
                submit("Remove", class_="small danger"),
                class_="inline",
                data_confirm=f"Remove this {p['provider']} provider?",
            ),
        ]
        for order, p in enumerate(providers.body["data"], start=1)
    ]
    domain_sections = [
        tag(
            "article",
            tag("h3", d["domain"], " ", badge(d["status"])),
            tag("p", f"Provider: {d['provider']}; verified at: ", stamp(d.get("verified_at"))),
            table(
                f"DNS records for {d['domain']}",
                ["Type", "Name", "Value", "Status"],
                [
                    [
                        r["type"],
                        tag("span", r["name"], class_="mono wrap"),
                        tag("span", r["value"], class_="mono wrap"),
                        badge(r["status"]),
                    ]
                    for r in d["records"]
                ],
            ),
            None
            if d["verified"]
            else form(f"/console/domains/{d['id']}/verify", csrf, submit("Check DNS now", class_="small")),
            class_="attempt",
        )
        for d in domains.body["data"]
    ]
    body = [
        section(
            "Providers",
            tag("p", "A send walks them highest priority first; the first success ends the walk."),
            table(
                "Providers", ["Order", "Provider", "Masked key", "Base URL", "Secret", "Priority", ""], provider_rows
            ),
        ),
        folded_form(
            "Add a provider",
            "/console/providers",
            csrf,
            choice("Provider", "provider", [(k, k) for k in ("sendgrid", "resend", "postmark")], id_prefix="new-"),
            field(
                "API key",
                "api_key",
                type="password",
                required=True,
                autocomplete="off",
                hint="Checked with the provider, then stored encrypted; only a masked preview is shown.",
                id_prefix="new-",
            ),
            field("Priority", "priority", "0", type="number", min="0", hint="Higher is tried first.", id_prefix="new-"),
            field("Base URL", "base_url", type="url", hint="Empty: the provider's own API.", id_prefix="new-"),
            submit("Add provider"),
        ),
        section("Sending domains", domain_sections or tag("p", "No sending domain yet.", class_="empty")),
        folded_form(
            "Register a sending domain",
            "/console/domains",
            csrf,
            field("Domain", "domain", required=True, placeholder="mail.example.com", id_prefix="new-"),
            choice(
                "With provider",
                "provider_id",
                [(p["id"], f"{p['provider']} {p.get('masked_secret') or ''}") for p in providers.body["data"]],
                id_prefix="new-",
            ),
            submit("Register domain"),
        )
        if providers.body["data"]
        else None,
    ]
    return CONSOLE.show(visit, "Email", body, notice=notice, error=error, status=status)


async def set_priority(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    try:
        priority = int(visit.value("priority"))
    except ValueError:
        return await show_email(visit, error="priority: a whole number", status=422)
    path = f"/v1/providers/{request.path_params['item_id']}"
    return await act(visit, show_email, "PATCH", path, "Provider order saved.", {"priority": priority})


async def add_provider(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    try:
        priority = int(visit.value("priority") or "0")
    except ValueError:
        return await show_email(visit, error="priority: a whole number", status=422)
    body: dict[str, Any] = {
        "provider": visit.value("provider"),
        "api_key": visit.value("api_key"),
        "priority": priority,
    }
    if visit.value("base_url"):
        body["base_url"] = visit.value("base_url")
    return await act(visit, show_email, "POST", "/v1/providers", lambda p: f"{p['provider']} added.", body)


async def delete_provider(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    return await act(
        visit, show_email, "DELETE", f"/v1/providers/{request.path_params['item_id']}", "Provider removed."
    )


async def register_domain(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    body = {"domain": visit.value("domain"), "provider_id": visit.value("provider_id")}
    return await act(
        visit, show_email, "POST", "/v1/domains", lambda d: f"{d['domain']} registered: publish its records.", body
    )


async def verify_domain(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    path = f"/v1/domains/{request.path_params['item_id']}/verify"
    return await act(visit, show_email, "POST", path, lambda domain: f"{domain['domain']}: {domain['status']}.")


@page_at("/console/suppressions")
async def show_suppressions(
    visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200
) -> Response:
    answer = await CONSOLE.fetch_page(visit, "Suppressions", "/v1/suppressions", {"limit": "500"})
    csrf = visit.session.csrf
    rows = [
        [
            tag("span", s["address"], class_="mono wrap"),
            s["reason"],
            stamp(s.get("created_at")),
            value_form("/console/suppressions/remove", csrf, "address", s["address"], "Remove", class_="small quiet"),
        ]
        for s in answer.body["data"]
    ]
    body = [
        tag("p", "Email to these recipients is refused before any provider is called."),
        form(
            "/console/suppressions",
            csrf,
            field("Address", "address", type="email", required=True),
            submit("Suppress"),
            class_="filters",
        ),
        table("Suppressions", ["Address", "Reason", "Since", ""], rows),
        more_link(answer.body, "/console/suppressions"),
    ]
    return CONSOLE.show(visit, "Suppressions", body, notice=notice, error=error, status=status)


async def add_suppression(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    body = {"address": visit.value("address")}
    return await act(visit, show_suppressions, "POST", "/v1/suppressions", "Suppressed.", body)


async def remove_suppression(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    path = f"/v1/suppressions/{quote(visit.value('address'), safe='')}"
    return await act(visit, show_suppressions, "DELETE", path, "Removed from the list.")


def meter(label: str, used: int, limit: int | None) -> Html:
    ident = f"usage-{label.lower().replace(' ', '-')}"
    if limit is None:
        return tag("p", tag("strong", label, id=ident), f": {used} (unlimited)")
    return tag(
        "p",
        tag("strong", label, id=ident),
        f": {used} of {limit} ",
        tag("progress", value=str(min(used, limit)), max=str(max(limit, 1)), aria_labelledby=ident),
    )


async def usage_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    answer = await CONSOLE.fetch(visit, "Usage", "/v1/usage")
    usage = answer.body
    meters = (
        [meter("Emails and webhooks", usage["webhooks"] + usage["emails"], usage["shared_limit"])]
        if usage.get("shared_limit") is not None
        else [
            meter("Webhooks", usage["webhooks"], usage["webhooks_limit"]),
            meter("Emails", usage["emails"], usage["emails_limit"]),
        ]
    )
    limit = answer.headers.get("ratelimit-limit")
    rate = (
        tag(
            "p",
            f"{answer.headers.get('ratelimit-remaining')} of {limit} requests left in the current 60-second window "
            f"(resets in {answer.headers.get('ratelimit-reset')} s).",
            id="rate-limit",
        )
        if limit
        else tag("p", "No rate limit applies.", id="rate-limit")
    )
    body = [
        section(f"This month ({usage['period']})", meters),
        section("Rate limit", rate),
    ]
    return CONSOLE.show(visit, "Usage", body)


PAGES = (
    ("/console/secret", CONSOLE.page_of(show_secret), "GET"),
    ("/console/secret/generate", secret_action("POST", "/v1/webhook-secret", "Secret generated."), "POST"),
    ("/console/secret/rotate", secret_action("POST", "/v1/webhook-secret/rotate", "Secret rotated."), "POST"),
    ("/console/secret/delete", secret_action("DELETE", "/v1/webhook-secret", "Secret deleted."), "POST"),
    ("/console/email", email_page, "GET"),
    ("/console/providers", add_provider, "POST"),
    ("/console/providers/{item_id}/priority", set_priority, "POST"),
    ("/console/providers/{item_id}/delete", delete_provider, "POST"),
    ("/console/domains", register_domain, "POST"),
    ("/console/domains/{item_id}/verify", verify_domain, "POST"),
    ("/console/suppressions", CONSOLE.page_of(show_suppressions), "GET"),
    ("/console/suppressions", add_suppression, "POST"),
    ("/console/suppressions/remove", remove_suppression, "POST"),
    ("/console/usage", usage_page, "GET"),
)
CONSOLE.add_pages(router, PAGES)
